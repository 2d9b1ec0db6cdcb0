/**
 * The defaults of `@chat-ts/anthropic` in one place: the model id the docs and
 * examples start from, and the timeouts the model layer applies unless its
 * options say otherwise.
 *
 * The model id is current in the `@anthropic-ai/sdk` this package is built on
 * (its `Model` list, and not in the SDK's list of deprecated models, which
 * makes the SDK warn on every call). No layer picks a model on its own:
 * `model` stays a required option; this is what to pass when you have no
 * reason to choose another.
 *
 * @since 0.2.0
 */
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Duration from "effect/Duration"

/** The model the docs and examples use: `claude-sonnet-5-5`. */
export const model = "claude-sonnet-5-5"

/**
 * The longest a non-streamed call (`generate`) may take, retries included,
 * unless the layer's `totalTimeout` says otherwise: 10 minutes, the SDK's own
 * request timeout (which stops at the headers; this one covers the body too).
 * A longer answer is what streaming is for.
 */
export const totalTimeout: Duration.Input = "10 minutes"

/** The longest wait between two events of a stream, and for the first: 5 minutes (core's `ProviderStream.defaultIdleTimeout`). */
export const idleTimeout: Duration.Input = ProviderStream.defaultIdleTimeout
