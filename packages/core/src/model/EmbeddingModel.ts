/**
 * The embeddings contract: turn texts into vectors.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ChatError from "../data/ChatError.js"

/**
 * The vectors of one request, in the order of the inputs.
 *
 * @category models
 * @since 0.1.0
 */
export interface Embeddings {
  readonly vectors: ReadonlyArray<ReadonlyArray<number>>
  readonly usage: { readonly inputTokens: number }
  readonly model?: string
}

/**
 * Options of one embeddings request.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** Ask the model for vectors of this size, where it supports it. */
  readonly dimensions?: number
}

/**
 * The embeddings contract.
 *
 * @category models
 * @since 0.1.0
 */
export interface Service {
  readonly embed: (inputs: ReadonlyArray<string>, options?: Options) => Effect.Effect<Embeddings, ChatError.ModelError>
}

/**
 * The embedding model in use.
 *
 * @category services
 * @since 0.1.0
 */
export class EmbeddingModel extends Context.Service<EmbeddingModel, Service>()("@chat-ts/core/EmbeddingModel") {}

/**
 * A layer providing the given embedding model.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (service: Service): Layer.Layer<EmbeddingModel> => Layer.succeed(EmbeddingModel, service)

/**
 * Cosine similarity of two vectors of the same length.
 *
 * @category utils
 * @since 0.1.0
 */
export const cosineSimilarity = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i] ?? 0
    dot += x * y
    na += x * x
    nb += y * y
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}
