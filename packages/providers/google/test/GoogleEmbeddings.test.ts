/**
 * GoogleEmbeddings against the replay server: batchEmbedContents with the
 * task type and output dimensionality, batches split at `maxBatchSize`,
 * vectors in input order, a short answer refused.
 */
import { EmbeddingModel } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as GoogleEmbeddings from "../src/GoogleEmbeddings.js"
import { clientLayer, embeddingModel } from "./support/helpers.js"
import { ReplayServer } from "@chat-ts/core/testing"
import { fixture } from "./support/fixtures.js"

const batch = () => JSON.parse(fixture("embed/batch.json")) as { embeddings: Array<{ values: Array<number> }> }

describe("GoogleEmbeddings", () => {
  it.effect("embeds a batch with taskType and outputDimensionality; a call's dimensions win", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("embed/batch.json")))
      const layer = GoogleEmbeddings.layer({ model: "gemini-embedding-001", taskType: "RETRIEVAL_DOCUMENT", dimensions: 768, retry: false })
        .pipe(Layer.provide(clientLayer(server)))
      const model = yield* EmbeddingModel.EmbeddingModel.pipe(Effect.provide(layer))
      const result = yield* model.embed(["alpha", "beta", "gamma"], { dimensions: 4 })
      expect(result.vectors).toEqual(batch().embeddings.map((e) => e.values))
      expect(result.model).toBe("gemini-embedding-001")
      // Gemini does not count embedding tokens.
      expect(result.usage).toEqual({ inputTokens: 0 })
      const sent = server.requests[0]!
      expect(sent.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents")
      expect(sent.body).toEqual({
        requests: ["alpha", "beta", "gamma"].map((text) => ({
          content: { parts: [{ text }] },
          taskType: "RETRIEVAL_DOCUMENT",
          outputDimensionality: 4,
          model: "models/gemini-embedding-001"
        }))
      })
    }))

  it.effect("splits inputs into batches of maxBatchSize and keeps their order", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const [a, b, c] = batch().embeddings
      server.enqueue(ReplayServer.json({ embeddings: [a, b] }), ReplayServer.json({ embeddings: [c] }))
      const model = yield* embeddingModel(server, { maxBatchSize: 2 })
      const result = yield* model.embed(["one", "two", "three"])
      expect(result.vectors).toEqual([a!.values, b!.values, c!.values])
      expect(server.requests.map((r) => (r.body as { requests: Array<unknown> }).requests.length)).toEqual([2, 1])
      expect(yield* model.embed([])).toEqual({ vectors: [], usage: { inputTokens: 0 } })
      expect(server.requests).toHaveLength(2)
    }))

  it.effect("fewer vectors than inputs, or values that are not numbers, are a MalformedResponse", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.json({ embeddings: [{ values: [0.1] }] }),
        ReplayServer.json({ embeddings: [{ values: [0.1] }, { values: ["x"] }] })
      )
      const model = yield* embeddingModel(server)
      expect((yield* Effect.flip(model.embed(["a", "b"])))._tag).toBe("MalformedResponse")
      expect((yield* Effect.flip(model.embed(["a", "b"])))._tag).toBe("MalformedResponse")
    }))
})
