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
import * as ChatError from "./ChatError.js"

/** A retry policy: a schedule fed with the failures, or `false` to never retry. */
export type Policy = Schedule.Schedule<unknown, ChatError.ModelError> | false

/** Settings of `schedule`. */
export interface Options {
  /** How many times to retry after the first attempt (default 3). */
  readonly retries?: number
  /** The first delay (default 500 millis); later delays grow by `factor`. */
  readonly base?: Duration.DurationInput
  /** Growth of the delay between attempts (default 2). */
  readonly factor?: number
  /** The longest backoff delay (default 20 seconds). */
  readonly maxDelay?: Duration.DurationInput
  /**
   * The longest `retry-after` honoured (default 60 seconds): when a rate limit
   * asks for a longer wait, the error is surfaced instead of waiting.
   */
  readonly maxRetryAfter?: Duration.DurationInput
}

/** The wait asked by a rate limit (`retry-after` / `retry-after-ms`), or zero. */
export const requestedDelay = (error: ChatError.ModelError): Duration.Duration =>
  error._tag === "RateLimited" && error.retryAfterMillis !== undefined
    ? Duration.millis(Math.max(0, error.retryAfterMillis))
    : Duration.zero

/**
 * Makes a schedule wait at least as long as a rate limit asked
 * (`RateLimited.retryAfterMillis`), whatever its own delay.
 */
export const honourRetryAfter = <Out, R>(
  self: Schedule.Schedule<Out, ChatError.ModelError, R>
): Schedule.Schedule<[Out, ChatError.ModelError], ChatError.ModelError, R> =>
  Schedule.intersect(self, Schedule.addDelay(Schedule.identity<ChatError.ModelError>(), requestedDelay))

/**
 * Exponential backoff with jitter, a bounded number of retries, only for
 * retryable errors, honouring `retry-after`.
 */
export const schedule = (options: Options = {}): Schedule.Schedule<unknown, ChatError.ModelError> => {
  const maxDelay = Duration.decode(options.maxDelay ?? "20 seconds")
  const maxRetryAfter = Duration.toMillis(options.maxRetryAfter ?? "60 seconds")
  const backoff = Schedule.exponential(options.base ?? "500 millis", options.factor ?? 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay((_, delay) => Duration.min(delay, maxDelay)),
    Schedule.intersect(Schedule.recurs(options.retries ?? 3))
  )
  return honourRetryAfter(backoff).pipe(
    Schedule.whileInput((error: ChatError.ModelError) =>
      ChatError.isRetryable(error) && Duration.toMillis(requestedDelay(error)) <= maxRetryAfter
    )
  )
}

/** The default policy: `schedule()` (3 retries from 500 millis, doubling, jittered, honouring `retry-after`). */
export const defaultPolicy: Policy = schedule()

/** Runs `effect`, retrying retryable failures as `policy` says (`defaultPolicy` when undefined, none when `false`). */
export const withRetry = <A, R>(
  effect: Effect.Effect<A, ChatError.ModelError, R>,
  policy: Policy | undefined
): Effect.Effect<A, ChatError.ModelError, R> => {
  const chosen = policy ?? defaultPolicy
  return chosen === false ? effect : Effect.retry(effect, { schedule: chosen, while: ChatError.isRetryable })
}
