/**
 * A refusal is its own part (issue 12, item 6), on Chat Completions as on
 * Responses: a separate text part, marked in the response's metadata, never
 * glued to the content. Through the real SDK and the replay server; bodies in
 * `fixtures/constructed/` (origins in the fixtures README).
 */
import { LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { chatModel, request } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("Help me with something questionable.")])

const texts = (response: LanguageModel.Response) => response.parts.flatMap((part) => part._tag === "Text" ? [part.text] : [])

describe("Chat Completions: refusals", () => {
  it.effect("a whole refusal is a text part of its own, named in the metadata", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("constructed/chat-refusal.json")))
      const model = yield* chatModel(server, { model: "gpt-4.1-nano" })
      const response = yield* model.generate(ask)
      expect(texts(response)).toEqual(["I'm sorry, I can't help with that."])
      expect(response.providerMetadata?.openai).toMatchObject({ refusal: "I'm sorry, I can't help with that." })
    }))

  it.effect("a streamed refusal after some content starts its own part; without one, no refusal is marked", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("constructed/stream-content-then-refusal.sse")))
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse")))
      const model = yield* chatModel(server, { model: "gpt-4o" })
      const refused = yield* LanguageModel.collect(model.stream(ask))
      expect(texts(refused)).toEqual(["Here is", "I'm sorry, I can't help with that."])
      expect(refused.providerMetadata?.openai).toMatchObject({ refusal: "I'm sorry, I can't help with that." })
      const plain = yield* LanguageModel.collect(model.stream(ask))
      expect(texts(plain)).toHaveLength(1)
      expect(plain.providerMetadata?.openai).not.toHaveProperty("refusal")
    }))
})
