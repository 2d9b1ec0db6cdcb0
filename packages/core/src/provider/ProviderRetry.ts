/**
 * Retrying model calls, for provider authors and their users: the default
 * policy of every chat-ts provider (OpenAI, Anthropic, Gemini), the pieces to
 * build another one, and `withRetry` to apply a policy to one call. Every
 * provider needs the same policy, so it lives here once; the provider packages
 * re-export it as their `Retry` namespace.
 *
 * A policy is an Effect `Schedule` fed with the failed attempt's
 * `ChatError.ModelError`, or `false` for no retries. Whatever the schedule,
 * only retryable errors (`ChatError.isRetryable`: rate limits, server and
 * network errors) are retried; the schedule decides how often and how long to
 * wait. Delays run on Effect's `Clock`, so `TestClock` controls them in tests.
 * A stream is retried only while it opens (until the HTTP response starts);
 * once events arrive, a failure is surfaced, never replayed.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as ChatError from "../data/ChatError.js"

/**
 * A retry policy: a schedule fed with the failures, or `false` to never retry.
 *
 * @category models
 * @since 0.1.0
 */
export type Policy = Schedule.Schedule<unknown, ChatError.ModelError> | false

/**
 * Settings of `schedule`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** How many times to retry after the first attempt (default 3). */
  readonly retries?: number
  /** The first delay (default 500 millis); later delays grow by `factor`. */
  readonly base?: Duration.Input
  /** Growth of the delay between attempts (default 2). */
  readonly factor?: number
  /** The longest backoff delay (default 20 seconds). */
  readonly maxDelay?: Duration.Input
  /**
   * The longest `retry-after` honoured (default 60 seconds): when a rate limit
   * asks for a longer wait, the error is surfaced instead of waiting.
   */
  readonly maxRetryAfter?: Duration.Input
}

/**
 * The wait asked by a rate limit (`retry-after` / `retry-after-ms`), or zero.
 *
 * @category utils
 * @since 0.1.0
 */
export const requestedDelay = (error: ChatError.ModelError): Duration.Duration =>
  error._tag === "RateLimited" && error.retryAfterMillis !== undefined
    ? Duration.millis(Math.max(0, error.retryAfterMillis))
    : Duration.zero

/**
 * Makes a schedule wait at least as long as a rate limit asked
 * (`RateLimited.retryAfterMillis`), whatever its own delay.
 *
 * @category utils
 * @since 0.1.0
 */
export const honourRetryAfter = <Out, E, R>(
  self: Schedule.Schedule<Out, ChatError.ModelError, E, R>
): Schedule.Schedule<Out, ChatError.ModelError, E, R> =>
  Schedule.modifyDelay(self, ({ duration, input }) => Effect.succeed(Duration.max(duration, requestedDelay(input))))

/**
 * Exponential backoff with jitter, a bounded number of retries, only for
 * retryable errors, honouring `retry-after`.
 *
 * @category utils
 * @since 0.1.0
 */
export const schedule = (options: Options = {}): Schedule.Schedule<unknown, ChatError.ModelError> => {
  const maxDelay = Duration.fromInputUnsafe(options.maxDelay ?? "20 seconds")
  const maxRetryAfter = Duration.toMillis(options.maxRetryAfter ?? "60 seconds")
  const backoff = Schedule.exponential(options.base ?? "500 millis", options.factor ?? 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, maxDelay)))
  )
  return honourRetryAfter(Schedule.max([backoff, Schedule.recurs(options.retries ?? 3)])).pipe(
    Schedule.while(({ input }: Schedule.Metadata<unknown, ChatError.ModelError>) =>
      ChatError.isRetryable(input) && Duration.toMillis(requestedDelay(input)) <= maxRetryAfter
    )
  )
}

/**
 * The default policy: `schedule()` (3 retries from 500 millis, doubling, jittered, honouring `retry-after`).
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultPolicy: Policy = schedule()

/**
 * Runs `effect`, retrying retryable failures as `policy` says (`defaultPolicy` when undefined, none when `false`).
 *
 * @category combinators
 * @since 0.1.0
 */
export const withRetry = <A, R>(
  effect: Effect.Effect<A, ChatError.ModelError, R>,
  policy: Policy | undefined
): Effect.Effect<A, ChatError.ModelError, R> => {
  const chosen = policy ?? defaultPolicy
  return chosen === false ? effect : Effect.retry(effect, { schedule: chosen, while: ChatError.isRetryable })
}
