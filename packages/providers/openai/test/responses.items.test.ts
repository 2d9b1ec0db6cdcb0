/**
 * Responses output items as servers really send them (issue 12, item 6):
 * streams whose `item_id` changes between events, several message items with
 * their `phase`, URL citations, web-search calls and refusals. Real SDK,
 * replay server, bodies from `fixtures/constructed/` (see the README there).
 */
import { LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { request, responsesModel } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("What is the capital of France?")])

const openai = (response: LanguageModel.Response) => (response.providerMetadata?.openai ?? {}) as Record<string, unknown>

describe("Responses: output items as servers send them", () => {
  it.effect("a stream whose item_id rotates (GitHub Copilot) gives the text and the reasoning once each", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("constructed/responses-stream-rotating-item-ids.sse")))
      const model = yield* responsesModel(server, { model: "gpt-5-mini" })
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.parts).toEqual([
        { _tag: "Reasoning", text: "Recall the capital.", providerMetadata: { openai: { itemId: "rs_rot_3" } } },
        Messages.text("The capital of France is Paris.")
      ])
    }))

  it.effect("two message items stay two text parts, each with its phase", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("constructed/responses-stream-two-messages-phase.sse")))
      const model = yield* responsesModel(server, { model: "gpt-5.1" })
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.parts).toEqual([Messages.text("Got it"), Messages.text("Here are the results.")])
      expect(openai(response)["texts"]).toEqual([
        { itemId: "msg_phase_1", phase: "commentary" },
        { itemId: "msg_phase_2", phase: "final_answer" }
      ])
    }))

  it.effect("keeps URL citations and web-search calls as metadata, and a refusal as its own, marked part", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("constructed/responses-web-search-citations.json")))
      const model = yield* responsesModel(server, { model: "gpt-4.1" })
      const response = yield* model.generate(ask)
      expect(response.parts).toHaveLength(2)
      expect(response.parts[1]).toEqual(Messages.text("I can't help with that."))
      const meta = openai(response)
      expect(meta["texts"]).toEqual([
        {
          itemId: "msg_67c9fa077e288190af08fdffda2e34f20be649c1a5ff9609",
          annotations: [{
            type: "url_citation",
            start_index: 68,
            end_index: 131,
            url: "https://example.com/news/good?utm_source=openai",
            title: "Good news of the day"
          }]
        },
        { itemId: "msg_refusal_1", refusal: true }
      ])
      expect(meta["webSearchCalls"]).toEqual([{
        type: "web_search_call",
        id: "ws_67c9fa0502748190b7dd390736892e100be649c1a5ff9609",
        status: "completed",
        action: { type: "search", query: "positive news today" }
      }])
    }))
})
