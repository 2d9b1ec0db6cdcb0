/**
 * Tool calls and endings in the shapes compatible servers really send
 * (issue 12, item 5), through the real SDK and the replay server. Bodies:
 * `fixtures/constructed/` (see the fixtures README for each one's origin).
 */
import { LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { apiKey, chatModel, request } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("Weather in Paris and Lyon?")])

const calls = (response: LanguageModel.Response) =>
  response.parts.flatMap((part) => part._tag === "ToolCall" ? [{ id: part.id, name: part.name, arguments: part.arguments }] : [])

describe("compatible servers: tool calls as they come", () => {
  it.effect("llama.cpp: a null or missing call id gets a fresh id; arguments sent as a JSON object are read as its text", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("constructed/llamacpp-tool-call-null-id-object-args.json")))
      const model = yield* chatModel(server, { model: "local" })
      const response = yield* model.generate(ask)
      const [paris, lyon] = calls(response)
      expect(paris!.id).toMatch(/^call_[0-9a-f]{32}$/)
      expect(lyon!.id).toMatch(/^call_[0-9a-f]{32}$/)
      expect(paris!.id).not.toBe(lyon!.id)
      expect(JSON.parse(paris!.arguments)).toEqual({ city: "Paris" })
      expect(JSON.parse(lyon!.arguments)).toEqual({ city: "Lyon" })
      expect(response.finishReason).toBe("tool-calls")
    }))

  it.effect("argument fragments without index continue the open call; a new id starts the next one", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("constructed/stream-tool-calls-no-index.sse")))
      const model = yield* chatModel(server, { model: "local" })
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(calls(response)).toEqual([
        { id: "call_a", name: "get_weather", arguments: "{\"city\": \"Paris\"}" },
        { id: "call_b", name: "get_weather", arguments: "{\"city\": \"Lyon\"}" }
      ])
    }))

  it.effect("finish_reason \"error\" is a ServerError with the server's message, streamed or not", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.sse(ReplayServer.fixture("constructed/openrouter-finish-error.sse")),
        ReplayServer.json({
          id: "gen-1",
          object: "chat.completion",
          created: 1764460800,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "error" }],
          error: { message: `Upstream failed for key ${apiKey}` }
        })
      )
      const model = yield* chatModel(server, { model: "meta-llama/llama-3.3-70b-instruct" })
      const streamed = yield* Effect.flip(Stream.runDrain(model.stream(ask)))
      expect(streamed._tag).toBe("ServerError")
      expect(streamed.message).toContain("Upstream provider returned an error")
      const whole = yield* Effect.flip(model.generate(ask))
      expect(whole._tag).toBe("ServerError")
      expect(whole.message).toContain("Upstream failed")
      expect(whole.message).not.toContain(apiKey)
    }))
})
