/**
 * Delivers a store's outbox to the `Notifier`: claims pending rows, sends
 * each (retrying on a `Schedule`, a bounded number of times), and marks it
 * delivered or failed.
 *
 * Any number of dispatchers may run on one store, in one process or many:
 * a row is claimed by one at a time, and a dispatcher that dies leaves its
 * claims to expire, so the rows are sent again by another (at least once:
 * the receiver deduplicates on the notification's `id`). A receiver that
 * fails every time costs `retry`'s attempts per row, then the row is marked
 * `failed` with its attempts and last error, and kept; no turn waits for a
 * notification, and none fails because of one.
 *
 * @since 0.3.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as ChatError from "../data/ChatError.js"
import * as Notifier from "./Notifier.js"
import * as Outbox from "./Outbox.js"

/**
 * Settings of a dispatcher.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  /** How many rows one pass claims (default 50, at most `Outbox.maxClaim`). */
  readonly batchSize?: number
  /**
   * How long a claim lasts (default 5 minutes): a dispatcher that dies holds its rows this long. Sending a
   * row, retries included, is cut off at this time (the row is then marked failed), so no claim runs out
   * while its row is being sent.
   */
  readonly claimTtl?: Duration.Input
  /** When to send a row again after a retryable failure (default `defaultRetry`: 4 more tries, 1 s to 8 s apart). */
  readonly retry?: Schedule.Schedule<unknown, ChatError.NotificationFailed>
  /** How many rows are sent at once (default 4). */
  readonly concurrency?: number
  /** How long `run` waits after a pass that found nothing to send (default 1 second). */
  readonly pollInterval?: Duration.Input
}

/**
 * What one pass did.
 *
 * @category models
 * @since 0.3.0
 */
export interface Pass {
  readonly delivered: number
  readonly failed: number
}

/**
 * The default retry: 4 more tries after the first, waiting 1, 2, 4 and 8 seconds.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaultRetry: Schedule.Schedule<unknown, ChatError.NotificationFailed> = Schedule.exponential("1 second").pipe(
  Schedule.upTo({ times: 4 })
)

const millisOf = (input: Duration.Input | undefined, fallback: number): number =>
  input === undefined
    ? fallback
    : Duration.fromInput(input).pipe(Option.map(Duration.toMillis), Option.getOrElse(() => Number.NaN))

/** Sends one claimed row and records how it went. */
const deliver = (outbox: Outbox.Service, notifier: Notifier.Service, options: Options, claim: Outbox.Claim, ttl: number) =>
  Effect.gen(function*() {
    let attempts = 0
    const send = Effect.suspend(() => {
      attempts++
      return notifier.notify(claim.entry.notification)
    }).pipe(
      Effect.retry({ schedule: options.retry ?? defaultRetry, while: (error) => error.retryable }),
      Effect.timeoutOrElse({
        duration: Math.max(1, Math.floor(ttl * 0.9)),
        orElse: () =>
          Effect.fail(
            new ChatError.NotificationFailed({
              id: claim.entry.notification.id,
              detail: "sending it took longer than the dispatcher's claim",
              retryable: false
            })
          )
      }),
      Effect.catchDefect((defect) =>
        Effect.fail(
          new ChatError.NotificationFailed({ id: claim.entry.notification.id, detail: `the notifier died: ${String(defect)}`, retryable: false })
        )
      )
    )
    const sent = yield* Effect.result(send)
    if (sent._tag === "Success") {
      yield* outbox.delivered(claim, attempts)
      return "delivered" as const
    }
    yield* Effect.logWarning("a notification was not delivered; it is kept as failed").pipe(
      Effect.annotateLogs({ notification: claim.entry.notification.id, attempts, error: sent.failure.detail })
    )
    yield* outbox.failed(claim, attempts, sent.failure.detail)
    return "failed" as const
  })

/**
 * One pass: claims up to `batchSize` pending rows, sends them and marks each; how many were delivered and failed.
 *
 * @category utils
 * @since 0.3.0
 */
export const deliverPending = (
  options: Options = {}
): Effect.Effect<Pass, ChatError.StoreError, Outbox.Outbox | Notifier.Notifier> =>
  Effect.gen(function*() {
    const outbox = yield* Outbox.Outbox
    const notifier = yield* Notifier.Notifier
    const ttl = millisOf(options.claimTtl, 5 * 60 * 1000)
    const claims = yield* outbox.claim({ limit: options.batchSize ?? 50, ttl })
    const results = yield* Effect.forEach(claims, (claim) => deliver(outbox, notifier, options, claim, ttl), {
      concurrency: options.concurrency ?? 4
    })
    return {
      delivered: results.filter((result) => result === "delivered").length,
      failed: results.filter((result) => result === "failed").length
    }
  })

/**
 * Delivers the outbox for as long as it runs: a pass, then the next at once while passes find rows, or after
 * `pollInterval` when one found none. A store that fails is logged and tried again after `pollInterval`.
 *
 * @category utils
 * @since 0.3.0
 */
export const run = (options: Options = {}): Effect.Effect<never, never, Outbox.Outbox | Notifier.Notifier> => {
  const poll = millisOf(options.pollInterval, 1000)
  const pass = deliverPending(options).pipe(
    Effect.flatMap((done) => done.delivered + done.failed === 0 ? Effect.sleep(poll) : Effect.void),
    Effect.catch((error) =>
      Effect.andThen(Effect.logWarning("the outbox could not be read", error.detail), Effect.sleep(poll))
    )
  )
  return Effect.forever(pass)
}
