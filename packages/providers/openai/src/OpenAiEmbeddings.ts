/**
 * The core `EmbeddingModel` on OpenAI's embeddings API (POST /embeddings),
 * also offered by several OpenAI-compatible servers.
 *
 * @since 0.1.0
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as EmbeddingModel from "@chat-ts/core/EmbeddingModel"
import * as ProviderRetry from "@chat-ts/core/ProviderRetry"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CreateEmbeddingResponse } from "openai/resources/embeddings"
import { tokenCount } from "./internal/shared.js"
import { OpenAiClient } from "./OpenAiClient.js"
import * as Defaults from "./OpenAiDefaults.js"

/** Settings of the embedding model. */
export interface Options {
  /** The model id, e.g. `text-embedding-3-small` (`OpenAiDefaults.embeddingModel`). */
  readonly model: string
  /** Vector size, for models that can shorten their vectors (a call's own `dimensions` takes precedence). */
  readonly dimensions?: number
  /**
   * How vectors travel: `float` (JSON numbers, the default, understood by every
   * compatible server) or `base64` (smaller; OpenAI's API).
   */
  readonly encodingFormat?: "float" | "base64"
  /** The most inputs sent in one request (default 2048, OpenAI's limit); more are split into several requests. */
  readonly maxBatchSize?: number
  /** An end-user id, for the provider's abuse monitoring. */
  readonly user?: string
  /** The retry policy (default `Retry.defaultPolicy`); `false` disables retries. */
  readonly retry?: ProviderRetry.Policy
  /**
   * The longest one request (a batch of up to `maxBatchSize` inputs) may take,
   * retries included (default `OpenAiDefaults.totalTimeout`, 10 minutes;
   * `false`: no limit); past it a `NetworkError` and the request is aborted.
   */
  readonly totalTimeout?: Duration.Input | false
}

const toVectors = (
  response: CreateEmbeddingResponse,
  expected: number
): Effect.Effect<ReadonlyArray<ReadonlyArray<number>>, ChatError.MalformedResponse> => {
  const data = Array.isArray(response.data) ? response.data : []
  const vectors: Array<ReadonlyArray<number> | undefined> = new Array(expected).fill(undefined)
  for (const [position, item] of data.entries()) {
    const index = typeof item.index === "number" ? item.index : position
    const embedding: unknown = item.embedding
    if (index >= 0 && index < expected && (Array.isArray(embedding) || embedding instanceof Float32Array)) {
      vectors[index] = Array.from(embedding as ArrayLike<number>)
    }
  }
  const missing = vectors.findIndex((vector) => vector === undefined)
  return missing === -1
    ? Effect.succeed(vectors as ReadonlyArray<ReadonlyArray<number>>)
    : Effect.fail(
      new ChatError.MalformedResponse({
        message: `The embeddings response holds ${data.length} vectors for ${expected} inputs (input ${missing} has none).`
      })
    )
}

/** Builds the embedding model on the `OpenAiClient` in context. */
export const make = (options: Options): Effect.Effect<EmbeddingModel.Service, never, OpenAiClient> =>
  OpenAiClient.useSync((client) => {
    const batchSize = Math.max(1, options.maxBatchSize ?? 2048)
    const embedBatch = (inputs: ReadonlyArray<string>, dimensions: number | undefined) =>
      ProviderRetry.withRetry(
        client.createEmbedding({
          model: options.model,
          input: [...inputs],
          ...(dimensions === undefined ? {} : { dimensions }),
          // Leaving the format out makes the SDK ask for base64 and decode it.
          ...((options.encodingFormat ?? "float") === "float" ? { encoding_format: "float" } : {}),
          ...(options.user === undefined ? {} : { user: options.user })
        }),
        options.retry
      ).pipe(
        (attempts) => ProviderStream.withTotalTimeout(attempts, ProviderStream.timeouts(Defaults).call(options)),
        Effect.flatMap((response) =>
          Effect.map(toVectors(response, inputs.length), (vectors) => ({
            vectors,
            inputTokens: tokenCount(response.usage?.prompt_tokens) ?? 0,
            model: response.model
          }))
        )
      )

    const embed: EmbeddingModel.Service["embed"] = (inputs, embedOptions) => {
      if (inputs.length === 0) return Effect.succeed({ vectors: [], usage: { inputTokens: 0 } })
      const dimensions = embedOptions?.dimensions ?? options.dimensions
      const batches: Array<ReadonlyArray<string>> = []
      for (let i = 0; i < inputs.length; i += batchSize) batches.push(inputs.slice(i, i + batchSize))
      return Effect.forEach(batches, (batch) => embedBatch(batch, dimensions)).pipe(
        Effect.map((results) => ({
          vectors: results.flatMap((result) => result.vectors),
          usage: { inputTokens: results.reduce((sum, result) => sum + result.inputTokens, 0) },
          ...(results[0]?.model === undefined ? {} : { model: results[0].model })
        }))
      )
    }
    return { embed }
  })

/** A layer providing `EmbeddingModel.EmbeddingModel`; requires `OpenAiClient`. */
export const layer = (options: Options): Layer.Layer<EmbeddingModel.EmbeddingModel, never, OpenAiClient> =>
  Layer.effect(EmbeddingModel.EmbeddingModel, make(options))
