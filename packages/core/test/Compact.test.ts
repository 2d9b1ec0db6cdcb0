/**
 * The compact copy of a tool's encoded result (`internal/compact.ts`): the
 * conversation keeps a plain object equal to what the Schema encoded, key for
 * key and in order, and an own `__proto__` key never becomes a prototype.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { makeCompactor } from "../src/internal/compact.js"
import { Chat, Messages, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

describe("makeCompactor", () => {
  it("copies a plain object into an equal plain object: same prototype, keys, order and JSON", () => {
    const compact = makeCompactor()
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 20 }), (value) => {
        const copy = compact(value)
        expect(copy).toStrictEqual(value)
        expect(Object.getPrototypeOf(copy)).toBe(Object.getPrototypeOf(value))
        expect(Object.keys(copy as object)).toEqual(Object.keys(value))
        expect(JSON.stringify(copy)).toBe(JSON.stringify(value))
      }),
      { numRuns: 300 }
    )
  })

  it("returns anything but a small plain object as it is", () => {
    const compact = makeCompactor()
    const nullProto = Object.assign(Object.create(null) as object, { a: 1 })
    class Point {
      x = 1
    }
    const point = new Point()
    const array = [1, 2]
    const wide = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i]))
    for (const value of [nullProto, point, array, wide, "text", 1, null, undefined, true]) expect(compact(value)).toBe(value)
  })

  it("keeps an own __proto__ key as data and never sets a prototype", () => {
    const compact = makeCompactor()
    const hostile = JSON.parse("{\"__proto__\":{\"polluted\":true},\"a\":1}") as Record<string, unknown>
    const copy = compact(hostile) as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(["__proto__", "a"])
    expect(JSON.stringify(copy)).toBe("{\"__proto__\":{\"polluted\":true},\"a\":1}")
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(copy.polluted).toBeUndefined()
  })

  it("gives each compactor its own shape: values of another shape stay equal", () => {
    const compact = makeCompactor()
    for (let i = 0; i < 20; i++) expect(compact({ ok: true })).toStrictEqual({ ok: true })
    expect(compact({ a: 1, b: "x", c: [1], d: { e: null } })).toStrictEqual({ a: 1, b: "x", c: [1], d: { e: null } })
  })
})

const Lookup = Tool.make("lookup", {
  description: "Looks a key up.",
  parameters: { key: Schema.String },
  success: Schema.Record(Schema.String, Schema.Number)
})
const kit = Toolkit.make(Lookup)

describe("a turn keeps the encoded result", () => {
  it.effect("a plain result is stored equal to its encoding; one with an own __proto__ key is still refused", () =>
    Effect.gen(function*() {
      let result: Record<string, number> = { n: 2, m: 3 }
      // Asks for the tool when the conversation ends with the user's message, answers otherwise.
      const model = MockLanguageModel.make((request) =>
        request.messages[request.messages.length - 1]?.role === "user"
          ? { toolCalls: [{ id: `call_${request.messages.length}`, name: "lookup", arguments: "{\"key\":\"k\"}" }] }
          : MockLanguageModel.text("Done.")
      )
      const handlers = kit.toLayer({ lookup: () => Effect.succeed(result) })
      const chat = yield* Chat.make({ tools: [kit] }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      const done = yield* chat.complete(Messages.fromUser("Go."))
      expect(done.outcome._tag).toBe("Complete")
      expect(yield* Effect.fromResult(Messages.toJson(done.messages))).toContain("\"result\":{\"n\":2,\"m\":3}")
      // The stored result is a copy: the handler's object changing later does not change the conversation.
      result.n = 99
      expect(yield* Effect.fromResult(Messages.toJson(done.messages))).toContain("\"result\":{\"n\":2,\"m\":3}")

      result = JSON.parse("{\"__proto__\":1,\"n\":2}") as Record<string, number>
      const error = yield* Effect.flip(chat.complete([...done.messages, Messages.user("Again.")]))
      expect(String(error.message)).toContain("\"__proto__\" key")
      expect(({} as Record<string, unknown>).n).toBeUndefined()
    }))
})
