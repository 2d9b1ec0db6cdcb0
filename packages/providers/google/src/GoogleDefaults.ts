/**
 * The defaults of `@chat-ts/google` in one place: the model ids the docs and
 * examples start from, and the timeouts the layers apply unless their options
 * say otherwise.
 *
 * The model ids are current in the `@google/genai` SDK this package is built
 * on (the newest stable Flash of its model list, and its embedding model). No
 * layer picks a model on its own: `model` stays a required option; these are
 * what to pass when you have no reason to choose another.
 *
 * @since 0.2.0
 */
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Duration from "effect/Duration"

/** The chat model the docs and examples use: `gemini-3.8-flash`. */
export const model = "gemini-3.8-flash"

/** The embedding model the docs and examples use: `gemini-embedding-001`. */
export const embeddingModel = "gemini-embedding-001"

/**
 * The longest a non-streamed call may take, retries included, unless the
 * layer's `totalTimeout` says otherwise: 10 minutes, the bound the Gemini API
 * itself puts on a unary call (the SDK sets no client-side timeout, and turns
 * off Node's own body timeout). Applies to `generate` and to each request of
 * `GoogleEmbeddings`.
 */
export const totalTimeout: Duration.Input = "10 minutes"

/** The longest wait between two events of a stream, and for the first: 5 minutes (core's `ProviderStream.defaultIdleTimeout`). */
export const idleTimeout: Duration.Input = ProviderStream.defaultIdleTimeout
