import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { ChatError, LanguageModel, Messages } from "../src/index.js"

const finish: LanguageModel.StreamPart = { _tag: "Finish", usage: { inputTokens: 1, outputTokens: 2 }, finishReason: "tool-calls" }

describe("LanguageModel.Accumulator", () => {
  it("joins interleaved fragments of several calls in the order they started", () => {
    const acc = new LanguageModel.Accumulator()
    for (
      const part of [
        { _tag: "TextDelta", text: "Let me " },
        { _tag: "TextDelta", text: "check." },
        { _tag: "ToolCallStart", id: "a", name: "first" },
        { _tag: "ToolCallStart", id: "b", name: "second" },
        { _tag: "ToolCallDelta", id: "a", argumentsDelta: "{\"x\":" },
        { _tag: "ToolCallDelta", id: "b", argumentsDelta: "{}" },
        { _tag: "ToolCallDelta", id: "a", argumentsDelta: "1}" },
        finish
      ] satisfies ReadonlyArray<LanguageModel.StreamPart>
    ) acc.add(part)
    expect(acc.response()?.parts).toEqual([
      Messages.text("Let me check."),
      Messages.toolCall({ id: "a", name: "first", arguments: "{\"x\":1}" }),
      Messages.toolCall({ id: "b", name: "second", arguments: "{}" })
    ])
  })

  it("takes a name that arrives after the first fragment", () => {
    const acc = new LanguageModel.Accumulator()
    acc.add({ _tag: "ToolCallDelta", id: "a", argumentsDelta: "{}" })
    acc.add({ _tag: "ToolCallStart", id: "a", name: "late_name" })
    acc.add(finish)
    expect(acc.response()?.parts).toEqual([Messages.toolCall({ id: "a", name: "late_name", arguments: "{}" })])
  })

  it("has no response before the finish part", () => {
    const acc = new LanguageModel.Accumulator()
    acc.add({ _tag: "TextDelta", text: "half" })
    expect(acc.isFinished).toBe(false)
    expect(acc.response()).toBeUndefined()
  })

  it.effect("collect fails with a NetworkError when the stream ends early", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(LanguageModel.collect(Stream.make<Array<LanguageModel.StreamPart>>({ _tag: "TextDelta", text: "cut" })))
      expect(error._tag).toBe("NetworkError")
    }))

  it.effect("make derives stream from generate and generate from stream", () =>
    Effect.gen(function*() {
      const response: LanguageModel.Response = { parts: [Messages.text("hi")], usage: { inputTokens: 1, outputTokens: 1 }, finishReason: "stop" }
      const fromGenerate = LanguageModel.make({ generate: () => Effect.succeed(response) })
      const viaStream = yield* LanguageModel.collect(fromGenerate.stream({ messages: [], tools: [], options: {} }))
      expect(viaStream).toEqual(response)
      const fromStream = LanguageModel.make({ stream: () => LanguageModel.toStreamParts(response) })
      expect(yield* fromStream.generate({ messages: [], tools: [], options: {} })).toEqual(response)
    }))
})

describe("ChatError.isRetryable", () => {
  it("retries rate limits, server and network errors, but not an exhausted quota or a bad request", () => {
    expect(ChatError.isRetryable(new ChatError.RateLimited({ message: "slow down" }))).toBe(true)
    expect(ChatError.isRetryable(new ChatError.RateLimited({ message: "quota", code: "insufficient_quota" }))).toBe(false)
    expect(ChatError.isRetryable(new ChatError.ServerError({ message: "boom", status: 500 }))).toBe(true)
    expect(ChatError.isRetryable(new ChatError.NetworkError({ message: "reset" }))).toBe(true)
    expect(ChatError.isRetryable(new ChatError.InvalidRequest({ message: "bad" }))).toBe(false)
    expect(ChatError.isRetryable(new ChatError.AuthenticationError({ message: "no" }))).toBe(false)
  })
})
