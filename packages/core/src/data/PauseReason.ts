/**
 * Why a turn paused: calls awaiting a person's approval, calls scheduled for
 * a later time, or both. Every scheduled call keeps its own time.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Calls that wait for a person's approval.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AwaitingApproval = Schema.TaggedStruct("AwaitingApproval", {
  toolIds: Schema.Array(Schema.String)
})

/**
 * Calls scheduled for later; `earliest` is the soonest of their times (epoch millis).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Scheduled = Schema.TaggedStruct("Scheduled", {
  toolIds: Schema.Array(Schema.String),
  earliest: Schema.Number
})

/**
 * Both: calls awaiting approval and scheduled calls, each with its own time.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Mixed = Schema.TaggedStruct("Mixed", {
  approvals: Schema.Array(Schema.String),
  scheduled: Schema.Array(Schema.Struct({ id: Schema.String, at: Schema.Number }))
})

/**
 * Why a turn paused.
 *
 * @category schemas
 * @since 0.1.0
 */
export const PauseReason = Schema.Union([AwaitingApproval, Scheduled, Mixed])

/**
 * Why a turn paused.
 *
 * @category models
 * @since 0.1.0
 */
export type PauseReason = typeof PauseReason.Type

/**
 * Every call id the pause is waiting on, approvals first.
 *
 * @category utils
 * @since 0.1.0
 */
export const toolIds = (reason: PauseReason): ReadonlyArray<string> => {
  switch (reason._tag) {
    case "AwaitingApproval":
    case "Scheduled":
      return reason.toolIds
    case "Mixed":
      return [...reason.approvals, ...reason.scheduled.map((s) => s.id)]
  }
}

/**
 * The ids of the calls awaiting approval.
 *
 * @category utils
 * @since 0.1.0
 */
export const approvalIds = (reason: PauseReason): ReadonlyArray<string> =>
  reason._tag === "AwaitingApproval" ? reason.toolIds : reason._tag === "Mixed" ? reason.approvals : []

/**
 * The earliest time a scheduled call is due, if any call is scheduled.
 *
 * @category utils
 * @since 0.1.0
 */
export const earliest = (reason: PauseReason): number | undefined =>
  reason._tag === "Scheduled"
    ? reason.earliest
    : reason._tag === "Mixed" && reason.scheduled.length > 0
    ? Math.min(...reason.scheduled.map((s) => s.at))
    : undefined
