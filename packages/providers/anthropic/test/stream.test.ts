/**
 * `AnthropicLanguageModel.stream` on the real SDK against the replay server:
 * text, thinking with its signature, `input_json_delta` tool arguments, usage
 * from `message_start` / `message_delta`, stop reasons, and streams that
 * break off or report an error.
 */
import { ChatError, LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { withSleepProbe } from "../../openai/test/support/SleepProbe.js"
import { Retry } from "../src/index.js"
import { bodyOf, model, request, weatherTool } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("Hello")])
const parts = (m: LanguageModel.Service, r: LanguageModel.Request = ask) => Stream.runCollect(m.stream(r))

describe("stream", () => {
  it.effect("streams text deltas and finishes with usage from message_start and message_delta (basic_response)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("stream/text.sse")))
      const out = yield* parts(yield* model(server))
      expect(out).toEqual([
        { _tag: "TextDelta", text: "Hello", start: true },
        { _tag: "TextDelta", text: " there" },
        { _tag: "TextDelta", text: "!" },
        {
          _tag: "Finish",
          usage: { inputTokens: 11, outputTokens: 6 },
          finishReason: "stop",
          providerMetadata: {
            anthropic: { messageId: "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK", model: "claude-opus-4-8", stopReason: "end_turn" }
          }
        }
      ])
      expect(bodyOf(server, 0)["stream"]).toBe(true)
    }))

  it.effect("streams a tool call: start with id and name, then input_json_delta fragments (tool_use_response)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("stream/tool-use.sse")))
      const m = yield* model(server)
      const out = yield* parts(m, request([Messages.user("Weather in Paris?")], [weatherTool]))
      const id = "toolu_01NRLabsLyVHZPKxbKvkfSMn"
      expect(out.filter((part) => part._tag === "ToolCallStart" || part._tag === "ToolCallDelta")).toEqual([
        { _tag: "ToolCallStart", id, name: "get_weather" },
        { _tag: "ToolCallDelta", id, argumentsDelta: "{\"locati" },
        { _tag: "ToolCallDelta", id, argumentsDelta: "on\": \"P" },
        { _tag: "ToolCallDelta", id, argumentsDelta: "ar" },
        { _tag: "ToolCallDelta", id, argumentsDelta: "is\"}" }
      ])
      const acc = new LanguageModel.Accumulator()
      for (const part of out) acc.add(part)
      const response = acc.response()!
      expect(response.parts).toEqual([
        Messages.text("I'll check the current weather in Paris for you."),
        Messages.toolCall({ id, name: "get_weather", arguments: "{\"location\": \"Paris\"}" })
      ])
      expect(response.finishReason).toBe("tool-calls")
      expect(response.usage).toEqual({ inputTokens: 377, outputTokens: 65, cachedInputTokens: 0 })
    }))

  it.effect("streams thinking with its signature, then text; a refusal finishes with content-filter (stream-a-refusal)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("stream/thinking-refusal.sse")))
      const response = yield* LanguageModel.collect((yield* model(server, { thinking: { type: "enabled", budgetTokens: 1024 } })).stream(ask))
      expect(response.parts).toEqual([
        {
          _tag: "Reasoning",
          text:
            "Simple educational question about what a solar eclipse is. This is benign general knowledge — definitions are fine. Also the user called me \"claudius\" — I'm Claude. Minor correction or just roll with it politely.",
          signature: "c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU=",
          providerMetadata: { anthropic: { type: "thinking" } }
        },
        Messages.text("Hi")
      ])
      expect(response.finishReason).toBe("content-filter")
      expect(response.usage).toEqual({ inputTokens: 28, outputTokens: 106, reasoningTokens: 67, cachedInputTokens: 0 })
    }))

  it.effect("a streamed thinking block goes back unchanged in the next request", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.sse(ReplayServer.fixture("stream/thinking-refusal.sse")),
        ReplayServer.sse(ReplayServer.fixture("stream/text.sse"))
      )
      const m = yield* model(server, { thinking: { type: "enabled", budgetTokens: 1024 } })
      const first = yield* LanguageModel.collect(m.stream(ask))
      yield* LanguageModel.collect(m.stream(request([Messages.user("Hello"), { role: "assistant", parts: first.parts }, Messages.user("More")])))
      const sent = (bodyOf(server, 1)["messages"] as Array<{ content: Array<Record<string, unknown>> }>)[1]!.content
      expect(sent[0]).toEqual({
        type: "thinking",
        thinking: (first.parts[0] as Messages.ReasoningPart).text,
        signature: "c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU="
      })
      expect(sent[1]).toEqual({ type: "text", text: "Hi" })
    }))

  it.effect("streams parallel calls; a structured-output tool streams as text", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.sse(ReplayServer.fixture("constructed/stream-tool-use-parallel.sse")),
        ReplayServer.sse(ReplayServer.fixture("constructed/stream-tool-use-parallel.sse"))
      )
      const m = yield* model(server)
      const calls = yield* LanguageModel.collect(m.stream(ask))
      expect(calls.parts.filter((part) => part._tag === "ToolCall").map((part) => part._tag === "ToolCall" && part.arguments)).toEqual([
        "{\"count\":1}",
        "{\"count\":2}"
      ])
      // The same events read as the answer of a structured turn whose tool is `test_tool`.
      const structured = yield* LanguageModel.collect(m.stream(request([Messages.user("Hi")], [], {
        responseFormat: { type: "json", name: "test_tool", schema: { type: "object" }, strict: false }
      })))
      expect(structured.parts.map((part) => part._tag === "Text" ? part.text : part._tag)).toEqual([
        "I'll use the test_tool twice as requested - first with count 1, then with count 2.",
        "{\"count\":1}",
        "{\"count\":2}"
      ])
      expect(structured.finishReason).toBe("stop")
    }))

  it.effect("a tool call with no input fragments has {} as arguments; a delta for an unknown block is a MalformedResponse", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const events = (...lines: ReadonlyArray<object>) => lines.map((data) => `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`).join("")
      const start = { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "claude-opus-4-8", stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }
      server.enqueue(
        ReplayServer.sse(events(
          start,
          { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_empty", name: "now", input: {} } },
          { type: "content_block_stop", index: 0 },
          { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 9 } },
          { type: "message_stop" }
        )),
        ReplayServer.sse(events(start, { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "x" } }))
      )
      const m = yield* model(server)
      const response = yield* LanguageModel.collect(m.stream(ask))
      expect(response.parts).toEqual([Messages.toolCall({ id: "toolu_empty", name: "now", arguments: "{}" })])
      const error = yield* Effect.flip(LanguageModel.collect(m.stream(ask)))
      expect(error).toBeInstanceOf(ChatError.MalformedResponse)
    }))
})

describe("stream: other blocks", () => {
  it.effect("server tool blocks (web search) are not parts; the text and the refusal are (stream-a-toolrefusal)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("stream/server-tool-refusal.sse")))
      const parts = Array.from(yield* Stream.runCollect((yield* model(server)).stream(ask)))
      expect(parts.some((part) => part._tag === "ToolCallStart" || part._tag === "ToolCallDelta")).toBe(false)
      const acc = new LanguageModel.Accumulator()
      for (const part of parts) acc.add(part)
      const response = acc.response()!
      expect(response.parts).toEqual([Messages.text("Here's a summary of this year's solar eclipses and how")])
      expect(response.finishReason).toBe("content-filter")
    }))

  it.effect("redacted thinking streams as a whole Reasoning part and goes back unchanged", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.sse(ReplayServer.fixture("constructed/stream-redacted-thinking.sse")),
        ReplayServer.sse(ReplayServer.fixture("stream/text.sse"))
      )
      const m = yield* model(server)
      const first = yield* LanguageModel.collect(m.stream(ask))
      const data = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pLmN3kF8/dW5hR7xJ0aP1oLs9yTcMnKVf2wRpEGjH9XZaBt4UvDcPrQ..."
      expect(first.parts).toEqual([
        { _tag: "Reasoning", text: "", providerMetadata: { anthropic: { type: "redacted_thinking", data } } },
        Messages.text("Done.")
      ])
      yield* LanguageModel.collect(m.stream(request([Messages.user("Hello"), { role: "assistant", parts: first.parts }, Messages.user("More")])))
      expect((bodyOf(server, 1)["messages"] as Array<unknown>)[1]).toEqual({
        role: "assistant",
        content: [{ type: "redacted_thinking", data }, { type: "text", text: "Done." }]
      })
    }))
})

describe("streams that break off", () => {
  it.effect("a stream cut mid-way fails with NetworkError", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.cut(ReplayServer.firstEvents(ReplayServer.fixture("stream/tool-use.sse"), 8)))
      const error = yield* Effect.flip(LanguageModel.collect((yield* model(server)).stream(ask)))
      expect(error._tag).toBe("NetworkError")
    }))

  it.effect("a stream that ends without message_stop fails with NetworkError", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.firstEvents(ReplayServer.fixture("stream/text.sse"), 8)))
      const error = yield* Effect.flip(LanguageModel.collect((yield* model(server)).stream(ask)))
      expect(error).toBeInstanceOf(ChatError.NetworkError)
      expect(error.message).toContain("message_stop")
    }))

  it.effect("an overloaded error event mid-stream fails with RateLimited overloaded_error, not retried", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("errors/stream-overloaded.sse")))
      const m = yield* model(server, { retry: Retry.defaultPolicy })
      const seen: Array<LanguageModel.StreamPart> = []
      const error = yield* Effect.flip(Stream.runForEach(m.stream(ask), (part) => Effect.sync(() => seen.push(part))))
      expect(error).toMatchObject({ _tag: "RateLimited", code: "overloaded_error" })
      expect(seen).toEqual([{ _tag: "TextDelta", text: "Hello", start: true }])
      expect(server.requests).toHaveLength(1)
    }))

  it.effect("a stream that stalls fails after idleTimeout and closes its connection", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.hang({ sse: true, body: ReplayServer.firstEvents(ReplayServer.fixture("stream/text.sse"), 2) }))
      const m = yield* model(server, { idleTimeout: "30 seconds" })
      const fiber = yield* Effect.forkChild(Effect.flip(LanguageModel.collect(m.stream(ask))))
      yield* server.waitForRequests(1)
      // The stream's idle watch waits on the clock once the events flow.
      yield* probe.untilSomeoneSleeps
      yield* TestClock.adjust("30 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toBeInstanceOf(ChatError.NetworkError)
      expect(error.message).toContain("idleTimeout")
      yield* server.waitForClientCloses(1)
    })))
})
