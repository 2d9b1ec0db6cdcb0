/**
 * JSON that gives a key twice: `JSON.parse` keeps the last value
 * (`{"amount":1,"to":"bob","amount":1000000}` pays a million) while a person,
 * a policy or a model reading the text sees the first. Edits that do so are
 * refused; a model's arguments that do so enter the state as the canonical
 * text of their value, so that every reader (the person, `Approver`-like
 * policies reading `call.arguments`, the model's history, the handler) sees
 * the one value the handler gets.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result, Schema, Stream } from "effect"
import fc from "fast-check"
import * as JsonText from "../src/internal/jsonText.js"
import { Action, Chat, ChatError, Messages, Tool, Toolkit, Turn } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { complete, paused } from "./support/Chat.helpers.js"
import { call, conversation, left, response, right, statusOf } from "./support/fixtures.js"

const hostile = "{\"amount\":1,\"to\":\"bob\",\"amount\":1000000}"
const canonicalText = "{\"amount\":1000000,\"to\":\"bob\"}"

/** Texts that give a key twice somewhere, and the key. */
const duplicated: ReadonlyArray<readonly [string, string]> = [
  [hostile, "amount"],
  ["{\"a\":{\"b\":1,\"b\":2}}", "b"],
  ["[1,{\"x\":1,\"x\":1}]", "x"],
  ["{\"a\":1,\"\\u0061\":2}", "a"],
  ["{\"list\":[{\"k\":1},{\"k\":2,\"j\":[{},{\"z\":0,\"z\":0}]}]}", "z"],
  ["{\"\":1,\"\":2}", ""]
]

describe("JsonText.parse: one reading of JSON text", () => {
  it("refuses a key given twice in one object, at any depth, naming the key and where", () => {
    for (const [text, key] of duplicated) {
      const failure = Result.getFailure(JsonText.parse(text))
      expect(failure._tag, text).toBe("Some")
      expect(Result.getOrThrow(Result.fromOption(failure, () => ""))).toContain(`the key ${JSON.stringify(key)} appears twice`)
    }
    expect(Result.getFailure(JsonText.parse("{\"list\":[{\"k\":1},{\"k\":2,\"j\":[{},{\"z\":0,\"z\":0}]}]}")))
      .toMatchObject({ value: expect.stringContaining("in $.list[1].j[1]") })
  })

  it("takes the same key in different objects, and what JSON.parse takes otherwise", () => {
    expect(JsonText.parse("{\"a\":{\"k\":1},\"b\":{\"k\":2},\"k\":[{\"k\":3}]}")).toEqual(
      Result.succeed({ a: { k: 1 }, b: { k: 2 }, k: [{ k: 3 }] })
    )
    expect(JsonText.parse("  \"a\\\"b{\\\"\" ")).toEqual(Result.succeed("a\"b{\""))
    expect(JsonText.parse("{\"a\\\\\":1,\"a\":2}")).toEqual(Result.succeed({ "a\\": 1, a: 2 }))
  })

  it("gives what JSON.parse gives for any JSON value's text, and refuses it once a key is repeated", () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
      const text = JSON.stringify(value)
      const parsed = JsonText.parse(text)
      if (Result.isSuccess(parsed)) expect(parsed.success).toStrictEqual(JSON.parse(text))
      else expect(parsed.failure).toMatch(/__proto__/)
    }), { numRuns: 300 })
    const object = fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 4, noNullPrototype: true })
      .filter((o) => !Object.keys(o).includes("__proto__"))
    fc.assert(fc.property(object, fc.jsonValue({ maxDepth: 2 }), (o, again) => {
      const [key] = Object.keys(o)
      const text = `${JSON.stringify(o).slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(again)}}`
      expect(Result.isFailure(JsonText.parse(text))).toBe(true)
      expect(Result.isFailure(JsonText.parse(`[{"w":${text}}]`))).toBe(true)
    }), { numRuns: 300 })
  })

  it("never throws, on any text, nor on nesting far past the limit", () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (text) => {
      expect(() => JsonText.parse(text)).not.toThrow()
      expect(() => JsonText.canonical(text)).not.toThrow()
    }), { numRuns: 500 })
    const deep = "[".repeat(100_000) + "]".repeat(100_000)
    expect(Result.getFailure(JsonText.parse(deep))).toMatchObject({ value: expect.stringContaining("deeper than 256") })
    expect(Result.isSuccess(JsonText.parse("[".repeat(256) + "]".repeat(256)))).toBe(true)
    expect(Result.isFailure(JsonText.parse("[".repeat(257) + "]".repeat(257)))).toBe(true)
    expect(Result.isFailure(JsonText.parse("{\"__proto__\":{}}"))).toBe(true)
  })

  it("canonical: the one text of the value, only for text that repeats a key, and stable", () => {
    expect(JsonText.canonical(hostile)).toBe(canonicalText)
    expect(JsonText.canonical(canonicalText)).toBeUndefined()
    expect(JsonText.canonical("{ \"amount\" : 1 }")).toBeUndefined()
    expect(JsonText.canonical("{not json")).toBeUndefined()
    for (const [text] of duplicated) {
      const once = JsonText.canonical(text)!
      expect(JSON.parse(once)).toStrictEqual(JSON.parse(text))
      expect(JsonText.canonical(once)).toBeUndefined()
      expect(Result.isSuccess(JsonText.parse(once))).toBe(true)
    }
  })
})

const Pay = Tool.make("pay", {
  description: "Pay someone.",
  parameters: { amount: Schema.Number, to: Schema.String },
  success: Schema.Struct({ paid: Schema.Number })
})

describe("edits that give a key twice are refused", () => {
  const asking = conversation(response([call("p", { _tag: "AwaitingApproval" }, { name: "pay", arguments: canonicalText })]))

  it("Messages.approveJson: InvalidEditedArguments naming the key, the messages unchanged", () => {
    for (const [text, key] of duplicated) {
      const error = left(Messages.approveJson(asking, "p", text))
      expect(error).toBeInstanceOf(ChatError.InvalidEditedArguments)
      expect(error).toMatchObject({ _tag: "InvalidEditedArguments", id: "p", messages: asking })
      expect((error as ChatError.InvalidEditedArguments).detail).toContain(`the key ${JSON.stringify(key)} appears twice`)
    }
    // The same key in two objects is no repetition.
    expect(statusOf(right(Messages.approveJson(asking, "p", "{\"amount\":2,\"to\":\"bob\",\"memo\":{\"to\":\"x\"}}")), "p")._tag)
      .toBe("Approved")
  })

  it.effect("chat.approveJson: refused at once like Messages.approveJson, and checked against the tool", () =>
    Effect.gen(function*() {
      const { chat } = yield* payChat([MockLanguageModel.text("Done.")], () => Action.RequireApproval())
      const repeated = yield* Effect.flip(chat.approveJson(asking, "p", "{\"amount\":2,\"to\":\"bob\",\"amount\":3}"))
      expect(repeated).toMatchObject({ _tag: "InvalidEditedArguments", messages: asking })
      const mistyped = yield* Effect.flip(chat.approveJson(asking, "p", "{\"amount\":\"2\",\"to\":\"bob\"}"))
      expect(mistyped).toMatchObject({ _tag: "InvalidEditedArguments", messages: asking })
      const approved = yield* chat.approveJson(asking, "p", "{\"amount\":2,\"to\":\"bob\"}")
      expect(statusOf(approved, "p")).toEqual({ _tag: "Approved", editedArguments: "{\"amount\":2,\"to\":\"bob\"}" })
    }))

  it.effect("a stored edit that repeats a key (a state written by hand): refused at resume, nothing runs", () =>
    Effect.gen(function*() {
      const { chat, paid } = yield* payChat([MockLanguageModel.text("Done.")], () => Action.RequireApproval())
      const forged = conversation(response([
        call("p", { _tag: "Approved", editedArguments: hostile }, { name: "pay", arguments: canonicalText })
      ]))
      const error = yield* Effect.flip(chat.resume(forged))
      expect(error).toMatchObject({ _tag: "InvalidEditedArguments", id: "p" })
      expect((error as ChatError.InvalidEditedArguments).detail).toContain("the key \"amount\" appears twice")
      expect(statusOf((error as ChatError.InvalidEditedArguments).messages, "p")).toEqual({ _tag: "AwaitingApproval" })
      expect(paid).toEqual([])
    }))
})

/** A chat over `pay` with a scripted model; `paid` holds what the handler got, `seen` what the strategy saw. */
const payChat = (script: MockLanguageModel.Script, strategy: (call: Toolkit.Call<{ readonly pay: typeof Pay }>) => Action.Action) =>
  Effect.gen(function*() {
    const paid: Array<{ readonly amount: number; readonly to: string }> = []
    const seen: Array<{ readonly arguments: string; readonly params: unknown }> = []
    const kit = Toolkit.withStrategy(Toolkit.make(Pay), (call) => {
      seen.push({ arguments: call.arguments, params: call.params })
      return strategy(call)
    })
    const model = MockLanguageModel.make(script)
    const chat = yield* Chat.make({ tools: kit }).pipe(
      Effect.provide(Layer.merge(
        model.layer,
        kit.toLayer({ pay: (params) => Effect.sync(() => (paid.push(params), { paid: params.amount })) })
      ))
    )
    return { chat, model, paid, seen }
  })

describe("a model's arguments that give a key twice: every reader sees the one value the handler gets", () => {
  const proposing = () => [MockLanguageModel.toolCalls([{ id: "p", name: "pay", arguments: hostile }]), MockLanguageModel.text("Paid.")]

  it.effect("the stored call, the strategy, the person's view, the model's history and the handler agree", () =>
    Effect.gen(function*() {
      const { chat, model, paid, seen } = yield* payChat(proposing(), () => Action.RequireApproval())
      const first = yield* chat.complete(Messages.fromUser("Pay bob."))
      expect(paused(first).reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["p"] })
      const stored = Messages.findTool(first.messages, "p")!
      // What a person and a policy read (`arguments`, `effectiveArguments`, `parsedArguments`) is the value that runs.
      expect(stored.arguments).toBe(canonicalText)
      expect(Messages.effectiveArguments(stored)).toBe(canonicalText)
      expect(Messages.parsedArguments(stored)).toEqual({ amount: 1000000, to: "bob" })
      // The text as sent is kept for audit only.
      expect(stored.rawArguments).toBe(hostile)
      expect(seen).toEqual([{ arguments: canonicalText, params: { amount: 1000000, to: "bob" } }])
      // It is stored and read back as it is.
      expect(right(Messages.fromJson(right(Messages.toJson(first.messages))))).toEqual(first.messages)

      const done = yield* chat.resume(right(Messages.approve(first.messages, "p")))
      expect(complete(done).value).toBe("Paid.")
      expect(paid).toEqual([{ amount: 1000000, to: "bob" }])
      // The model's history shows the call with the value it ran with.
      const history = Messages.toolCalls(model.requests[1]!.messages).map(Messages.projectToolCall)
      expect(history).toEqual([expect.objectContaining({ id: "p", arguments: canonicalText })])
      // What providers put on the wire is this projection: the text as sent is not in it.
      expect(JSON.stringify(history)).not.toContain("\\\"amount\\\":1,")
    }))

  it.effect("streamed: the ToolCall event and the final state carry the canonical text", () =>
    Effect.gen(function*() {
      const { chat, paid } = yield* payChat(proposing(), () => Action.Execute())
      const events = yield* Stream.runCollect(chat.stream(Messages.fromUser("Pay bob.")))
      const calls = events.filter((event) => event._tag === "ToolCall")
      expect(calls.map((event) => event.call.arguments)).toEqual([canonicalText])
      const last = events.at(-1)!
      expect(last._tag).toBe("Completed")
      expect(paid).toEqual([{ amount: 1000000, to: "bob" }])
    }))

  it("the reducer makes them canonical whatever shell appends the response, and drops a rawArguments a response claims", () => {
    const start = [Messages.user("Pay bob.")]
    const claimed = {
      role: "assistant" as const,
      parts: [
        { ...Messages.toolCall({ id: "a", name: "pay", arguments: hostile }) },
        { ...Messages.toolCall({ id: "b", name: "pay", arguments: canonicalText }), rawArguments: "{\"amount\":1,\"to\":\"bob\"}" },
        { ...Messages.toolCall({ id: "c", name: "pay", arguments: canonicalText }), rawArguments: hostile }
      ]
    }
    const [next] = Turn.step(start, Turn.Event.ModelResponded({ message: claimed }))
    expect(Messages.findTool(next, "a")).toMatchObject({ arguments: canonicalText, rawArguments: hostile })
    expect(Messages.findTool(next, "b")).not.toHaveProperty("rawArguments")
    // A rawArguments that is the text its arguments were made from is kept (the shell made it).
    expect(Messages.findTool(next, "c")).toMatchObject({ arguments: canonicalText, rawArguments: hostile })
    expect(Result.isSuccess(Messages.toJson(next))).toBe(true)
  })
})

describe("Messages.parseJson: for UIs that take JSON typed by a person", () => {
  it("reads as approveJson does: a repeated key, a __proto__ key or too deep a nesting is refused with why", () => {
    expect(Messages.parseJson("{\"amount\":2}")).toEqual(Result.succeed({ amount: 2 }))
    expect(Messages.parseJson(hostile)).toEqual(Result.fail("the key \"amount\" appears twice in $: readers of the text would disagree on its value"))
    expect(Result.isFailure(Messages.parseJson("{\"__proto__\":{\"admin\":true}}"))).toBe(true)
    expect(Result.getFailure(Messages.parseJson("{oops"))).toMatchObject({ value: expect.stringMatching(/^not JSON/) })
  })
})
