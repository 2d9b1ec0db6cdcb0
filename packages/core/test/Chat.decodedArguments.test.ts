/**
 * The arguments decoded at a call's decision, reused for its handler (`DecodedArguments`): a call
 * decided with no strategy is decoded once; a strategy's value, an edit, changed text, another
 * tool or another call is never handed over; each kept value is handed out once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result, Schema } from "effect"
import { Action, Chat, Messages, Tool, Toolkit } from "../src/index.js"
import { DecodedArguments } from "../src/chat/internal/decodedArguments.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { complete, paused } from "./support/Chat.helpers.js"

/** A `work` tool whose `n` records every value its Schema decodes. */
const counted = () => {
  const decodes: Array<number> = []
  const Work = Tool.make("work", {
    description: "Do some work.",
    parameters: {
      n: Schema.Number.check(Schema.makeFilter((n: number) => {
        decodes.push(n)
        return undefined
      }))
    },
    success: Schema.Number
  })
  return { Work, decodes }
}

/** A chat over a counted `work`, with an optional strategy; records what each handler got. */
const setup = (
  script: MockLanguageModel.Script,
  strategy?: (call: { readonly id: string; readonly params: { readonly n: number } }) => Action.Action
) =>
  Effect.gen(function*() {
    const { Work, decodes } = counted()
    const made = Toolkit.make(Work)
    const kit = strategy === undefined ? made : made.pipe(Toolkit.withStrategy((call) => strategy(call)))
    const got: Array<{ readonly id: string; readonly n: number }> = []
    const handlers = kit.toLayer({
      work: (params, info) =>
        Effect.sync(() => {
          got.push({ id: info.id, n: params.n })
          return params.n
        })
    })
    const model = MockLanguageModel.make(script)
    const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
    return { chat, decodes, got }
  })

describe("Chat: the decision's decoded arguments reused for the handler", () => {
  it.effect("a call decided without a strategy is decoded once, and its handler gets that value", () =>
    Effect.gen(function*() {
      const { chat, decodes, got } = yield* setup([
        MockLanguageModel.toolCalls([{ id: "w1", name: "work", arguments: { n: 3 } }]),
        MockLanguageModel.text("Done.")
      ])
      const result = yield* chat.complete(Messages.fromUser("Work."))
      expect(complete(result).value).toBe("Done.")
      expect(got).toEqual([{ id: "w1", n: 3 }])
      expect(decodes).toEqual([3])
    }))

  it.effect("several calls of one response each get their own arguments, each decoded once", () =>
    Effect.gen(function*() {
      const { chat, decodes, got } = yield* setup([
        MockLanguageModel.toolCalls([
          { id: "w1", name: "work", arguments: { n: 1 } },
          { id: "w2", name: "work", arguments: { n: 2 } },
          { id: "w3", name: "work", arguments: { n: 3 } }
        ]),
        MockLanguageModel.text("Done.")
      ])
      yield* chat.complete(Messages.fromUser("Work."))
      expect([...got].sort((a, b) => a.n - b.n)).toEqual([{ id: "w1", n: 1 }, { id: "w2", n: 2 }, { id: "w3", n: 3 }])
      expect([...decodes].sort()).toEqual([1, 2, 3])
    }))

  it.effect("a model that gives two calls one id: each handler gets its own call's arguments", () =>
    Effect.gen(function*() {
      const { chat, got } = yield* setup([
        MockLanguageModel.toolCalls([
          { id: "same", name: "work", arguments: { n: 1 } },
          { id: "same", name: "work", arguments: { n: 2 } }
        ]),
        MockLanguageModel.text("Done.")
      ])
      const result = yield* chat.complete(Messages.fromUser("Work."))
      const calls = Messages.toolCalls(result.messages)
      expect(calls.map((call) => call.status._tag)).toEqual(["Completed", "Completed"])
      // Each call's result is its own arguments' value, under its own (made unique) id.
      for (const call of calls) {
        const n = (JSON.parse(call.arguments) as { readonly n: number }).n
        expect(got).toContainEqual({ id: call.id, n })
        expect(call.status._tag === "Completed" ? call.status.result : undefined).toBe(n)
      }
      expect(new Set(got.map((entry) => entry.id)).size).toBe(2)
    }))

  it.effect("a strategy that changes the value it was given does not change what the handler gets: decoded afresh", () =>
    Effect.gen(function*() {
      const { chat, decodes, got } = yield* setup([
        MockLanguageModel.toolCalls([{ id: "w1", name: "work", arguments: { n: 3 } }]),
        MockLanguageModel.text("Done.")
      ], (call) => {
        ;(call.params as { n: number }).n = 999
        return Action.Execute()
      })
      yield* chat.complete(Messages.fromUser("Work."))
      expect(got).toEqual([{ id: "w1", n: 3 }])
      expect(decodes).toEqual([3, 3])
    }))

  it.effect("an approved edit is decoded from the edit, not from the model's text", () =>
    Effect.gen(function*() {
      const { chat, got } = yield* setup([
        MockLanguageModel.toolCalls([{ id: "w1", name: "work", arguments: { n: 3 } }]),
        MockLanguageModel.text("Done.")
      ], () => Action.RequireApproval())
      const first = yield* chat.complete(Messages.fromUser("Work."))
      paused(first)
      const approved = yield* chat.approve(first.messages, "w1", { n: 7 })
      const result = yield* chat.resume(approved)
      expect(complete(result).value).toBe("Done.")
      expect(got).toEqual([{ id: "w1", n: 7 }])
    }))
})

describe("DecodedArguments", () => {
  const { Work } = counted()
  const Other = Tool.make("other", { description: "Other.", parameters: { n: Schema.Number }, success: Schema.Number })
  const decoded = Result.succeed({ n: 1 }) as Result.Success<unknown, string>

  it("hands a kept value out once, to the same tool, id and text only", () => {
    const kept = new DecodedArguments()
    kept.keep(Work, "c1", `{"n":1}`, decoded)
    expect(kept.take(Work, "c1", `{"n":1}`)).toBe(decoded)
    expect(kept.take(Work, "c1", `{"n":1}`)).toBeUndefined()
  })

  it("changed text, another tool or another id gets nothing, and the value is dropped", () => {
    for (const [tool, id, text] of [[Work, "c1", `{"n":2}`], [Other, "c1", `{"n":1}`], [Work, "c2", `{"n":1}`]] as const) {
      const kept = new DecodedArguments()
      kept.keep(Work, "c1", `{"n":1}`, decoded)
      expect(kept.take(tool, id, text)).toBeUndefined()
      if (id === "c1") expect(kept.take(Work, "c1", `{"n":1}`)).toBeUndefined()
    }
  })

  it("several kept at once: each handed out once to its own id; a value kept again replaces the older one", () => {
    const kept = new DecodedArguments()
    const other = Result.succeed({ n: 2 }) as Result.Success<unknown, string>
    const again = Result.succeed({ n: 3 }) as Result.Success<unknown, string>
    kept.keep(Work, "c1", `{"n":1}`, decoded)
    kept.keep(Work, "c2", `{"n":2}`, other)
    expect(kept.take(Work, "c1", `{"n":1}`)).toBe(decoded)
    kept.keep(Work, "c2", `{"n":3}`, again)
    expect(kept.take(Work, "c2", `{"n":3}`)).toBe(again)
    expect(kept.take(Work, "c2", `{"n":2}`)).toBeUndefined()
    expect(kept.take(Work, "c2", `{"n":3}`)).toBeUndefined()
    expect(kept.take(Work, "c1", `{"n":1}`)).toBeUndefined()
  })

  it("ids that name Object.prototype's members find nothing that was not kept", () => {
    const kept = new DecodedArguments()
    for (const id of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      expect(kept.take(Work, id, `{"n":1}`)).toBeUndefined()
    }
    kept.keep(Work, "__proto__", `{"n":1}`, decoded)
    expect(kept.take(Work, "__proto__", `{"n":1}`)).toBe(decoded)
  })
})
