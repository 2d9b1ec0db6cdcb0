/**
 * Usage as servers really send it (issue 12, item 7): validated and
 * normalised at the provider boundary so that a conversation's state stays
 * JSON-safe numbers. Real SDK, replay server, bodies from
 * `fixtures/constructed/` (see the README there).
 */
import { Chat, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import { tokenCount } from "../src/internal/shared.js"
import { chatModel, clientLayer, request } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("Capital of France?")])

describe("usage as servers send it", () => {
  it.effect("string, null, negative and junk counts become numbers or are left out; the conversation still encodes", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("constructed/chat-usage-strings-nulls.json")))
      const model = OpenAiChatCompletions.layer({ model: "local", retry: false }).pipe(Layer.provide(clientLayer(server)))
      const chat = yield* Chat.make().pipe(Effect.provide(model))
      const result = yield* chat.complete(Messages.fromUser("Capital of France?"))
      expect(result.outcome._tag === "Complete" && result.outcome.usage).toEqual({ inputTokens: 7, outputTokens: 0 })
      const stored = yield* Effect.fromResult(Messages.toJson(result.messages))
      expect(yield* Effect.fromResult(Messages.fromJson(stored))).toEqual(result.messages)
    }))

  it.effect("Groq's usage under x_groq on the last chunk is read", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("constructed/groq-stream-x-groq-usage.sse")))
      const model = yield* chatModel(server, { model: "llama-3.3-70b-versatile" })
      const parts = yield* Stream.runCollect(model.stream(ask))
      const finish = [...parts].find((part) => part._tag === "Finish")
      expect(finish?._tag === "Finish" && finish.usage).toEqual({ inputTokens: 41, outputTokens: 3 })
    }))

  it("tokenCount takes whole numbers and digit strings only", () => {
    expect([0, 12, "07", " 5 "].map(tokenCount)).toEqual([0, 12, 7, 5])
    expect([null, undefined, -1, 1.5, NaN, Infinity, "1e3", "12a", "", {}, [3], "9".repeat(16)].map(tokenCount))
      .toEqual(Array(12).fill(undefined))
  })
})
