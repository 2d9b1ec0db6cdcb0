/**
 * The defaults of `@chat-ts/openai` in one place: the model ids the docs and
 * examples start from, and the timeouts every model layer applies unless its
 * options say otherwise.
 *
 * The model ids are current in the `openai` SDK this package is built on (its
 * `ChatModel` and `EmbeddingModel` lists); no layer picks a model on its own:
 * `model` stays a required option, these are what to pass when you have no
 * reason to choose another.
 *
 * @since 0.2.0
 */
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Duration from "effect/Duration"

/** The chat model the docs and examples use: `gpt-5.6-luna`, of the newest generation in the SDK's `ChatModel` list. */
export const chatModel = "gpt-5.6-luna"

/** The embedding model the docs and examples use: `text-embedding-3-small`. */
export const embeddingModel = "text-embedding-3-small"

/**
 * The longest a non-streamed call may take, retries included, unless the
 * layer's `totalTimeout` says otherwise: 10 minutes, the `openai` SDK's own
 * request timeout (which only covers the wait for the headers; this one covers
 * the body too). Applies to `generate` of both model layers and to each
 * request of `OpenAiEmbeddings`.
 */
export const totalTimeout: Duration.Input = "10 minutes"

/** The longest wait between two events of a stream, and for the first: 5 minutes (core's `ProviderStream.defaultIdleTimeout`). */
export const idleTimeout: Duration.Input = ProviderStream.defaultIdleTimeout
