import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Stream } from "effect"
import { ChatError, LanguageModel, Messages } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

const request = (text: string): LanguageModel.Request => ({ messages: Messages.fromUser(text), tools: [], options: {} })

describe("MockLanguageModel", () => {
  it.effect("answers with its script in order and records every request", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.text("first", { usage: { inputTokens: 3, outputTokens: 1 } }),
        MockLanguageModel.toolCalls([{ id: "x", name: "lookup", arguments: { q: "cats" } }, { name: "raw", arguments: "{bad" }])
      ])
      expect(model.remaining).toBe(2)
      const one = yield* model.generate(request("a"))
      expect(one).toEqual({
        parts: [{ _tag: "Text", text: "first" }],
        usage: { inputTokens: 3, outputTokens: 1 },
        finishReason: "stop"
      })
      const two = yield* model.generate({ ...request("b"), options: { temperature: 0 } })
      expect(two.finishReason).toBe("tool-calls")
      expect(two.usage).toEqual({ inputTokens: 10, outputTokens: 5 })
      expect(two.parts).toEqual([
        Messages.toolCall({ id: "x", name: "lookup", arguments: "{\"q\":\"cats\"}" }),
        // No id: one is made from the response and call positions; text arguments are kept as they are.
        Messages.toolCall({ id: "call_2_2", name: "raw", arguments: "{bad" })
      ])
      expect(model.requests.map((r) => Messages.textOf(r.messages[0]!))).toEqual(["a", "b"])
      expect(model.requests[1]?.options).toEqual({ temperature: 0 })
      expect(model.remaining).toBe(0)
    }))

  it.effect("streams a response in chunks that gather back into the same response", () =>
    Effect.gen(function*() {
      const scripted = {
        reasoning: "Thinking it over",
        text: "Hello, world",
        toolCalls: [{ id: "t1", name: "search", arguments: { query: "effect" } }]
      }
      const model = MockLanguageModel.make([scripted, scripted])
      const parts = yield* Stream.runCollect(model.stream(request("hi")))
      expect(parts).toEqual([
        { _tag: "ReasoningDelta", text: "Thin", start: true },
        { _tag: "ReasoningDelta", text: "king", start: false },
        { _tag: "ReasoningDelta", text: " it ", start: false },
        { _tag: "ReasoningDelta", text: "over", start: false },
        { _tag: "TextDelta", text: "Hell" },
        { _tag: "TextDelta", text: "o, w" },
        { _tag: "TextDelta", text: "orld" },
        { _tag: "ToolCallStart", id: "t1", name: "search" },
        { _tag: "ToolCallDelta", id: "t1", argumentsDelta: "{\"que" },
        { _tag: "ToolCallDelta", id: "t1", argumentsDelta: "ry\":\"" },
        { _tag: "ToolCallDelta", id: "t1", argumentsDelta: "effec" },
        { _tag: "ToolCallDelta", id: "t1", argumentsDelta: "t\"}" },
        { _tag: "Finish", usage: { inputTokens: 10, outputTokens: 5 }, finishReason: "tool-calls" }
      ])
      const gathered = yield* LanguageModel.collect(Stream.fromIterable(parts))
      expect(gathered).toEqual(yield* model.generate(request("hi")))
    }))

  it.effect("fails with the scripted model error, on generate and on stream", () =>
    Effect.gen(function*() {
      const error = new ChatError.ServerError({ message: "boom", status: 503 })
      const model = MockLanguageModel.make([MockLanguageModel.fail(error), MockLanguageModel.fail(error)])
      expect(yield* Effect.flip(model.generate(request("a")))).toBe(error)
      expect(yield* Effect.flip(Stream.runDrain(model.stream(request("b"))))).toBe(error)
      expect(model.requests).toHaveLength(2)
    }))

  it.effect("cutAfterChunks breaks the stream off: gathering it is a NetworkError", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("Hello, world", { cutAfterChunks: 2 })])
      const parts = yield* Stream.runCollect(model.stream(request("hi")))
      expect(parts).toEqual([{ _tag: "TextDelta", text: "Hell" }, { _tag: "TextDelta", text: "o, w" }])
      const error = yield* Effect.flip(LanguageModel.collect(Stream.fromIterable(parts)))
      expect(error).toBeInstanceOf(ChatError.NetworkError)
    }))

  it.effect("running past the end of the script is a defect that names the request", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("only")])
      yield* model.generate(request("one"))
      const exit = yield* Effect.exit(model.generate(request("two, one too many")))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit)) return
      expect(Cause.hasDies(exit.cause)).toBe(true)
      const message = String(Cause.squash(exit.cause))
      expect(message).toContain("the script has 1 response(s) but the model was called 2 times")
      expect(message).toContain("two, one too many")
      // Streaming past the end fails the same way.
      const streamed = yield* Effect.exit(Stream.runDrain(model.stream(request("three"))))
      expect(Exit.isFailure(streamed) && Cause.hasDies(streamed.cause)).toBe(true)
    }))

  it.effect("a script may be a function of the request and its index", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make((req, index) =>
        index === 2
          ? Effect.fail(new ChatError.RateLimited({ message: "enough" }))
          : MockLanguageModel.text(`#${index}: ${Messages.textOf(req.messages[req.messages.length - 1]!)}`)
      )
      expect(model.remaining).toBe(Infinity)
      expect(Messages.textOf({ role: "assistant", parts: (yield* model.generate(request("a"))).parts })).toBe("#0: a")
      const streamed = yield* LanguageModel.collect(model.stream(request("b")))
      expect(streamed.parts).toEqual([{ _tag: "Text", text: "#1: b" }])
      expect((yield* Effect.flip(model.generate(request("c"))))._tag).toBe("RateLimited")
    }))

  it.effect("its layer provides it as the LanguageModel", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("from the layer")])
      const response = yield* Effect.flatMap(LanguageModel.LanguageModel, (lm) => lm.generate(request("hi"))).pipe(
        Effect.provide(model.layer)
      )
      expect(response.parts).toEqual([{ _tag: "Text", text: "from the layer" }])
      expect(model.requests).toHaveLength(1)
    }))
})
