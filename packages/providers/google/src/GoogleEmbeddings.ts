/**
 * The core `EmbeddingModel` on Gemini's embeddings API
 * (POST models/{model}:batchEmbedContents).
 *
 * @since 0.1.0
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as EmbeddingModel from "@chat-ts/core/EmbeddingModel"
import * as ProviderRetry from "@chat-ts/core/ProviderRetry"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type { EmbedContentResponse } from "@google/genai"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { GoogleClient } from "./GoogleClient.js"
import * as Defaults from "./GoogleDefaults.js"

/** What the vectors are for (Gemini's `taskType`). */
export type TaskType =
  | "SEMANTIC_SIMILARITY"
  | "CLASSIFICATION"
  | "CLUSTERING"
  | "RETRIEVAL_DOCUMENT"
  | "RETRIEVAL_QUERY"
  | "QUESTION_ANSWERING"
  | "FACT_VERIFICATION"
  | "CODE_RETRIEVAL_QUERY"

/** Settings of the embedding model. */
export interface Options {
  /** The model id, e.g. `gemini-embedding-001` (`GoogleDefaults.embeddingModel`). */
  readonly model: string
  /** What the vectors are for (sent as `taskType`). */
  readonly taskType?: TaskType
  /** The document title, with `RETRIEVAL_DOCUMENT`. */
  readonly title?: string
  /** Vector size (`outputDimensionality`); a call's own `dimensions` takes precedence. */
  readonly dimensions?: number
  /** The most inputs sent in one request (default 100, Gemini's limit); more are split into several requests. */
  readonly maxBatchSize?: number
  /** The retry policy (default `Retry.defaultPolicy`); `false` disables retries. */
  readonly retry?: ProviderRetry.Policy
  /**
   * The longest one request (a batch of up to `maxBatchSize` inputs) may take,
   * retries included (default `GoogleDefaults.totalTimeout`, 10 minutes;
   * `false`: no limit); past it a `NetworkError` and the request is aborted.
   */
  readonly totalTimeout?: Duration.Input | false
}

const toVectors = (
  response: EmbedContentResponse,
  expected: number
): Effect.Effect<ReadonlyArray<ReadonlyArray<number>>, ChatError.MalformedResponse> => {
  const embeddings = Array.isArray(response.embeddings) ? response.embeddings : []
  const vectors = embeddings.flatMap((embedding) => {
    const values: unknown = embedding?.values
    return Array.isArray(values) && values.every((v) => typeof v === "number" && Number.isFinite(v)) ? [values as Array<number>] : []
  })
  return vectors.length === expected && embeddings.length === expected
    ? Effect.succeed(vectors)
    : Effect.fail(
      new ChatError.MalformedResponse({
        message: `The embeddings response holds ${vectors.length} usable vectors for ${expected} inputs.`
      })
    )
}

/** Builds the embedding model on the `GoogleClient` in context. */
export const make = (options: Options): Effect.Effect<EmbeddingModel.Service, never, GoogleClient> =>
  GoogleClient.useSync((client) => {
    const batchSize = Math.max(1, options.maxBatchSize ?? 100)
    const embedBatch = (inputs: ReadonlyArray<string>, dimensions: number | undefined) =>
      ProviderRetry.withRetry(
        client.embedContent({
          model: options.model,
          contents: inputs.map((text) => ({ parts: [{ text }] })),
          config: {
            ...(options.taskType === undefined ? {} : { taskType: options.taskType }),
            ...(options.title === undefined ? {} : { title: options.title }),
            ...(dimensions === undefined ? {} : { outputDimensionality: dimensions })
          }
        }),
        options.retry
      ).pipe(
        (attempts) => ProviderStream.withTotalTimeout(attempts, ProviderStream.timeouts(Defaults).call(options)),
        Effect.flatMap((response) => toVectors(response, inputs.length))
      )

    const embed: EmbeddingModel.Service["embed"] = (inputs, embedOptions) => {
      if (inputs.length === 0) return Effect.succeed({ vectors: [], usage: { inputTokens: 0 } })
      const dimensions = embedOptions?.dimensions ?? options.dimensions
      const batches: Array<ReadonlyArray<string>> = []
      for (let i = 0; i < inputs.length; i += batchSize) batches.push(inputs.slice(i, i + batchSize))
      return Effect.forEach(batches, (batch) => embedBatch(batch, dimensions)).pipe(
        Effect.map((results) => ({
          vectors: results.flat(),
          // The Gemini API does not count embedding tokens.
          usage: { inputTokens: 0 },
          model: options.model
        }))
      )
    }
    return { embed }
  })

/** A layer providing `EmbeddingModel.EmbeddingModel`; requires `GoogleClient`. */
export const layer = (options: Options): Layer.Layer<EmbeddingModel.EmbeddingModel, never, GoogleClient> =>
  Layer.effect(EmbeddingModel.EmbeddingModel, make(options))
