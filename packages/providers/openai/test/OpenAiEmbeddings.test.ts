import { EmbeddingModel } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as OpenAiEmbeddings from "../src/OpenAiEmbeddings.js"
import { clientLayer, embeddingModel } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

/** Synthetic: the shape of an embeddings response (no recording of this endpoint exists in the fixtures). */
const embeddings = (vectors: ReadonlyArray<ReadonlyArray<number> | string>, order: ReadonlyArray<number>) => ({
  object: "list",
  data: order.map((index) => ({ object: "embedding", index, embedding: vectors[index] })),
  model: "text-embedding-3-small",
  usage: { prompt_tokens: 7, total_tokens: 7 }
})

const base64Of = (values: ReadonlyArray<number>): string => Buffer.from(new Float32Array(values).buffer).toString("base64")

describe("OpenAiEmbeddings", () => {
  it.effect("embeds texts as float vectors in input order", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(embeddings([[0.1, 0.2], [0.3, 0.4]], [1, 0])))
      const model = yield* embeddingModel(server, { dimensions: 2 })
      const result = yield* model.embed(["hello", "world"])
      expect(result).toEqual({ vectors: [[0.1, 0.2], [0.3, 0.4]], usage: { inputTokens: 7 }, model: "text-embedding-3-small" })
      expect(server.requests[0]!.path).toBe("/v1/embeddings")
      expect(server.requests[0]!.body).toEqual({
        model: "text-embedding-3-small",
        input: ["hello", "world"],
        dimensions: 2,
        encoding_format: "float"
      })
    }))

  it.effect("decodes base64 vectors when asked for them", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(embeddings([base64Of([0.5, -1])], [0])))
      const model = yield* embeddingModel(server, { encodingFormat: "base64" })
      const result = yield* model.embed(["hello"], { dimensions: 2 })
      expect(result.vectors).toEqual([[0.5, -1]])
      expect(server.requests[0]!.body).toMatchObject({ encoding_format: "base64", dimensions: 2 })
    }))

  it.effect("splits large inputs into batches and adds their usage up", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(embeddings([[1], [2]], [0, 1])),
        ReplayServer.json(embeddings([[3]], [0]))
      )
      const model = yield* embeddingModel(server, { maxBatchSize: 2 })
      const result = yield* model.embed(["a", "b", "c"])
      expect(result.vectors).toEqual([[1], [2], [3]])
      expect(result.usage.inputTokens).toBe(14)
      expect(server.requests.map((r) => (r.body as { input: ReadonlyArray<string> }).input)).toEqual([["a", "b"], ["c"]])
    }))

  it.effect("fails with MalformedResponse when a vector is missing, and sends nothing for no input", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(embeddings([[1]], [0])))
      const model = yield* embeddingModel(server)
      expect((yield* Effect.flip(model.embed(["a", "b"])))._tag).toBe("MalformedResponse")
      expect(yield* model.embed([])).toEqual({ vectors: [], usage: { inputTokens: 0 } })
      expect(server.requests).toHaveLength(1)
    }))

  it.effect("provides the core EmbeddingModel service through its layer", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(embeddings([[1, 0]], [0])))
      const layer = OpenAiEmbeddings.layer({ model: "text-embedding-3-small" }).pipe(Layer.provide(clientLayer(server)))
      const result = yield* Effect.flatMap(EmbeddingModel.EmbeddingModel, (model) => model.embed(["x"])).pipe(Effect.provide(layer))
      expect(result.vectors).toEqual([[1, 0]])
    }))
})
