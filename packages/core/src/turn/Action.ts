/**
 * What a tool's strategy decides for one call: run it now, ask a person,
 * run it later, or refuse it.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import type { Policy as DecisionPolicy, Review } from "../internal/schema.js"

/**
 * A point in time: an Effect `DateTime` or epoch milliseconds (a finite number).
 *
 * @category models
 * @since 0.1.0
 */
export type Instant = DateTime.DateTime | number

/**
 * How long to wait, in a form whose every value can be checked: milliseconds
 * (a finite, non-negative number), nanoseconds (a bigint), `[seconds, nanos]`,
 * a duration string (`"10 minutes"`) or object (`{ minutes: 10 }`). Not an
 * Effect `Duration` value: Effect reads `Duration.millis(NaN)` (and any NaN
 * arithmetic) as zero, the very same value as `Duration.zero`, so a delay
 * that went wrong could not be told from "now". A delay that is not valid
 * (NaN, infinite, negative, or a `Duration` value cast in) makes the call wait
 * for a person.
 *
 * @category models
 * @since 0.3.0
 */
export type Delay =
  | number
  | bigint
  | readonly [seconds: number, nanos: number]
  | `${number} ${Duration.Unit}`
  | Duration.DurationObject

/**
 * A strategy's decision for one tool call.
 *
 * @category models
 * @since 0.1.0
 */
export type Action = Data.TaggedEnum<{
  /** Run the call now. */
  Execute: {}
  /**
   * Do not run the call until a person approves it; optionally reject it by policy after `expiresAt`.
   * `review`: a reviewer model's verdict, kept on the pending call for the person (see `Reviewer`).
   * `policy`: who may decide it (see `DecisionPolicy`).
   */
  RequireApproval: {
    readonly expiresAt?: Instant | undefined
    readonly review?: Review | undefined
    readonly policy?: DecisionPolicy | undefined
  }
  /** Run the call at a later time: `at` an instant, or `after` a duration from the decision. */
  Defer:
    & ({ readonly at: Instant; readonly after?: undefined } | { readonly after: Delay; readonly at?: undefined })
    & { readonly policy?: DecisionPolicy | undefined }
  /** Refuse the call; the model sees `reason`. */
  Reject: { readonly reason: string }
  /** Run the call on the authority of grant `grant` (see `Grant`); the reducer checks it covers the call, else a person decides. */
  Granted: { readonly grant: string }
}>

const constructors = Data.taggedEnum<Action>()

/**
 * Run the call now.
 *
 * @category constructors
 * @since 0.1.0
 */
export const Execute: () => Action = () => constructors.Execute()

/**
 * Ask a person first; optionally reject by policy when `expiresAt` passes without a decision.
 *
 * @category constructors
 * @since 0.1.0
 */
export const RequireApproval = (
  options?: { readonly expiresAt?: Instant; readonly review?: Review; readonly policy?: DecisionPolicy }
): Action =>
  constructors.RequireApproval({
    expiresAt: options?.expiresAt,
    policy: options?.policy,
    ...(options?.review === undefined ? {} : { review: options.review })
  })

/**
 * Run the call at `at`, or `after` a delay (counted from when the strategy
 * decided). A time or delay that is not valid makes the call wait for a person.
 *
 * @category constructors
 * @since 0.1.0
 */
export const Defer = (
  options: ({ readonly at: Instant } | { readonly after: Delay }) & { readonly policy?: DecisionPolicy }
): Action => constructors.Defer(options as { readonly at: Instant })

/**
 * Refuse the call; the model sees `reason`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const Reject = (options: { readonly reason: string }): Action => constructors.Reject(options)

/**
 * Run the call on the authority of a grant (see `Grant.grantedOr`). The reducer
 * checks that the grant covers it (made before the call was proposed, live,
 * matching); when it does not, the call waits for a person.
 *
 * @category constructors
 * @since 0.3.0
 */
export const Granted = (options: { readonly grant: string }): Action => constructors.Granted(options)

/**
 * Pattern match on an action.
 *
 * @category pattern matching
 * @since 0.1.0
 */
export const match = constructors.$match

/**
 * Whether a value is an action of the given tag.
 *
 * @category guards
 * @since 0.1.0
 */
export const is = constructors.$is

/**
 * An instant as epoch milliseconds.
 *
 * @category conversions
 * @since 0.1.0
 */
export const toMillis = (instant: Instant): number =>
  typeof instant === "number" ? instant : DateTime.toEpochMillis(instant)

/**
 * The time a `Defer` action names, as epoch milliseconds, given the time it was
 * decided (`NaN` when its delay is not a valid `Delay`, so it is never "now").
 *
 * @category utils
 * @since 0.1.0
 */
export const deferredUntil = (
  action: { readonly at?: Instant | undefined; readonly after?: Delay | undefined },
  now: number
): number =>
  action.at !== undefined ? toMillis(action.at) : now + delayMillis(action.after ?? 0)

/**
 * A delay in milliseconds, or `NaN` when it is not a valid `Delay` (not a finite,
 * non-negative amount, or an Effect `Duration` value, which may be a NaN read as zero).
 *
 * @category utils
 * @since 0.3.0
 */
export const delayMillis = (delay: Delay): number => millisOf(delay)

/** `delayMillis` of anything (a strategy in JavaScript, or cast, may give anything). */
const millisOf = (delay: unknown): number => {
  if (typeof delay === "number") return delay >= 0 && Number.isFinite(delay) ? delay : Number.NaN
  if (typeof delay === "bigint") return delay >= 0n ? Number(delay) / 1e6 : Number.NaN
  if (Array.isArray(delay)) {
    const [seconds, nanos] = delay as ReadonlyArray<unknown>
    return delay.length === 2 && isCount(seconds) && isCount(nanos) ? seconds * 1000 + nanos / 1e6 : Number.NaN
  }
  // Effect reads "Infinity" as an endless duration: refused with the other strings that are no finite time.
  if (typeof delay === "string") return checkedMillis(delay as `${number} ${Duration.Unit}`)
  if (typeof delay !== "object" || delay === null || Duration.isDuration(delay) || Object.getPrototypeOf(delay) !== Object.prototype) {
    return Number.NaN
  }
  const entries = Object.entries(delay)
  return entries.every(([unit, n]) => durationUnits.has(unit) && (n === undefined || isCount(n)))
    ? checkedMillis(delay as Duration.DurationObject)
    : Number.NaN
}

/** The units a duration object may name (`{ minutes: 5 }`). */
const durationUnits: ReadonlySet<string> = new Set([
  "weeks",
  "days",
  "hours",
  "minutes",
  "seconds",
  "milliseconds",
  "microseconds",
  "nanoseconds"
])

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0

/** A duration string or object (its parts checked) in milliseconds, or `NaN` when Effect cannot read it or it is not finite. */
const checkedMillis = (input: `${number} ${Duration.Unit}` | Duration.DurationObject): number => {
  const decoded = Duration.fromInput(input)
  if (decoded._tag === "None" || !Duration.isFinite(decoded.value) || Duration.isNegative(decoded.value)) return Number.NaN
  return Duration.toMillis(decoded.value)
}
