/**
 * AI SDK embedding models as the chat-ts `EmbeddingModel`: the real
 * `@ai-sdk/mistral` embedding model against the loopback replay server
 * (body written from Mistral's API reference for `POST /v1/embeddings`,
 * https://docs.mistral.ai/api/#tag/embeddings), and a scripted one for
 * batching by `maxEmbeddingsPerCall` and a malformed answer.
 */
import type { EmbeddingModelV4 } from "@ai-sdk/provider"
import { createMistral } from "@ai-sdk/mistral"
import { ReplayServer } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as AiSdkEmbeddingModel from "../src/AiSdkEmbeddingModel.js"

const apiKey = "mistral-EMBED-0123456789SECRET"

const scripted = (max: number | undefined, answer: (values: ReadonlyArray<string>) => ReadonlyArray<ReadonlyArray<number>>) => {
  const calls: Array<ReadonlyArray<string>> = []
  const dimensions: Array<number | undefined> = []
  const model: EmbeddingModelV4 = {
    specificationVersion: "v4",
    provider: "scripted",
    modelId: "embed-1",
    maxEmbeddingsPerCall: max,
    supportsParallelCalls: false,
    doEmbed: async (options) => {
      const values = options.values
      calls.push(values)
      dimensions.push(options.dimensions)
      return { embeddings: answer(values).map((v) => [...v]), usage: { tokens: values.length * 3 }, warnings: [] }
    }
  }
  return { model, calls, dimensions }
}

describe("AiSdkEmbeddingModel", () => {
  it.effect("@ai-sdk/mistral's embedding model: the vectors in order, the usage; a 429 is RateLimited with its delay, the key in no error", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make({ basePath: "/v1" })
      server.enqueue(
        ReplayServer.json({
          id: "embd-aad6fc62b17349b192ef09225058bc45",
          object: "list",
          data: [
            { object: "embedding", embedding: [0.1, -0.2, 0.3], index: 0 },
            { object: "embedding", embedding: [0.4, 0.5, -0.6], index: 1 }
          ],
          model: "mistral-embed",
          usage: { prompt_tokens: 9, total_tokens: 9, completion_tokens: 0 }
        }),
        ReplayServer.json({ object: "error", message: `Requests rate limit exceeded for ${apiKey}`, type: "rate_limited", param: null, code: "1300" }, { status: 429, headers: { "retry-after": "2" } })
      )
      const model = yield* AiSdkEmbeddingModel.make({
        model: createMistral({ apiKey, baseURL: server.baseURL }).embedding("mistral-embed"),
        retry: false,
        secrets: [apiKey]
      })
      const result = yield* model.embed(["Paris", "Lyon"])
      expect(result).toEqual({ vectors: [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], usage: { inputTokens: 9 }, model: "mistral-embed" })
      expect(server.requests[0]!.path).toBe("/v1/embeddings")
      expect(server.requests[0]!.body).toMatchObject({ model: "mistral-embed", input: ["Paris", "Lyon"] })
      const error = yield* Effect.flip(model.embed(["Paris"]))
      expect(error._tag).toBe("RateLimited")
      expect(error._tag === "RateLimited" && error.retryAfterMillis).toBe(2000)
      expect(JSON.stringify(error) + error.message).not.toContain(apiKey)
    }))

  it.effect("inputs beyond maxEmbeddingsPerCall go in several calls, in order; dimensions are passed", () =>
    Effect.gen(function*() {
      const { model, calls, dimensions } = scripted(2, (values) => values.map((v) => [v.length]))
      const embeddings = yield* AiSdkEmbeddingModel.make({ model }).pipe(Effect.flatMap((m) => m.embed(["a", "bb", "ccc", "dddd", "eeeee"], { dimensions: 1 })))
      expect(calls).toEqual([["a", "bb"], ["ccc", "dddd"], ["eeeee"]])
      expect(embeddings.vectors).toEqual([[1], [2], [3], [4], [5]])
      expect(embeddings.usage.inputTokens).toBe(15)
      expect(dimensions).toEqual([1, 1, 1])
    }))

  it.effect("an answer with fewer vectors than inputs is a MalformedResponse; a language model is refused at build", () =>
    Effect.gen(function*() {
      const { model } = scripted(undefined, () => [[1]])
      const error = yield* Effect.flip(AiSdkEmbeddingModel.make({ model, retry: false }).pipe(Effect.flatMap((m) => m.embed(["a", "b"]))))
      expect(error._tag).toBe("MalformedResponse")
      const notEmbedding = { specificationVersion: "v4", doGenerate: () => Promise.resolve({}) }
      expect((yield* Effect.flip(AiSdkEmbeddingModel.make({ model: notEmbedding })))._tag).toBe("UnsupportedModel")
    }))
})
