/**
 * Applies a retry policy to one model call.
 *
 * @internal
 */
import { ChatError } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import * as Retry from "../Retry.js"

/** Runs `effect`, retrying retryable failures as `policy` says (the default policy when undefined). */
export const withRetry = <A, R>(
  effect: Effect.Effect<A, ChatError.ModelError, R>,
  policy: Retry.Policy | undefined
): Effect.Effect<A, ChatError.ModelError, R> => {
  const chosen = policy ?? Retry.defaultPolicy
  return chosen === false ? effect : Effect.retry(effect, { schedule: chosen, while: ChatError.isRetryable })
}
