/**
 * What a tool's strategy decides for one call: run it now, ask a person,
 * run it later, or refuse it.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"

/** A point in time: an Effect `DateTime` or epoch milliseconds. */
export type Instant = DateTime.DateTime | number

/** A strategy's decision for one tool call. */
export type Action = Data.TaggedEnum<{
  /** Run the call now. */
  Execute: {}
  /** Do not run the call until a person approves it; optionally reject it by policy after `expiresAt`. */
  RequireApproval: { readonly expiresAt?: Instant | undefined }
  /** Run the call at a later time: `at` an instant, or `after` a duration from the decision. */
  Defer: { readonly at: Instant; readonly after?: undefined } | { readonly after: Duration.Input; readonly at?: undefined }
  /** Refuse the call; the model sees `reason`. */
  Reject: { readonly reason: string }
}>

const constructors = Data.taggedEnum<Action>()

/** Run the call now. */
export const Execute: () => Action = () => constructors.Execute()

/** Ask a person first; optionally reject by policy when `expiresAt` passes without a decision. */
export const RequireApproval = (options?: { readonly expiresAt?: Instant }): Action =>
  constructors.RequireApproval({ expiresAt: options?.expiresAt })

/** Run the call at `at`, or `after` a duration (counted from when the strategy decided). */
export const Defer = (
  options: { readonly at: Instant } | { readonly after: Duration.Input }
): Action => constructors.Defer(options as { readonly at: Instant })

/** Refuse the call; the model sees `reason`. */
export const Reject = (options: { readonly reason: string }): Action => constructors.Reject(options)

/** Pattern match on an action. */
export const match = constructors.$match

/** Whether a value is an action of the given tag. */
export const is = constructors.$is

/** An instant as epoch milliseconds. */
export const toMillis = (instant: Instant): number =>
  typeof instant === "number" ? instant : DateTime.toEpochMillis(instant)

/** The time a `Defer` action names, as epoch milliseconds, given the time it was decided. */
export const deferredUntil = (
  action: { readonly at?: Instant | undefined; readonly after?: Duration.Input | undefined },
  now: number
): number =>
  action.at !== undefined ? toMillis(action.at) : now + Duration.toMillis(action.after ?? 0)
