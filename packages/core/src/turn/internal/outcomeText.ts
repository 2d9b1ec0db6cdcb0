/**
 * What the model reads for a call that did not run because its approval
 * expired or because it was cancelled: one text per outcome, so that the model
 * (and a person reading the transcript) can tell a person's "no" from a
 * deadline that passed and from a request that was withdrawn.
 *
 * @internal
 */
import type * as S from "../../internal/schema.js"

/** An instant as ISO text, or as epoch milliseconds when a `Date` cannot hold it. */
export const instantText = (at: number): string => {
  // Any finite time is a valid expiry, but only ±8.64e15 ms is a valid Date (toISOString throws beyond).
  const date = new Date(at)
  return Number.isNaN(date.getTime()) ? `${at} (epoch ms)` : date.toISOString()
}

/** The text of an approval request whose deadline passed with no decision. */
export const expiredText = (at: number): string => `The approval request expired at ${instantText(at)} without a decision.`

/** The text of an approval that came after its request's deadline. */
export const lateApprovalText = (at: number): string =>
  `The approval came too late: the request expired at ${instantText(at)}, before the turn resumed.`

/** The message the model sees for an expired call. */
export const expiryText = (status: typeof S.Expired.Type): string => {
  const at = status.expiresAt
  if (at === undefined) return "This tool call did not run: its approval request's deadline is not a valid time, so it counts as passed."
  return `This tool call did not run: nobody decided in time. ${status.approvedLate === true ? lateApprovalText(at) : expiredText(at)}`
}

const withdrawnBy: Record<S.CancelledBy, string> = {
  requester: "This tool call was withdrawn by the one who asked for it",
  "user-message": "This tool call was cancelled because the user sent a new message before it was decided",
  operator: "This tool call was cancelled by an operator"
}

/** The message the model sees for a cancelled call. */
export const cancellationText = (status: typeof S.Cancelled.Type): string => {
  // A stored document may hold a `by` this version does not know: say it was cancelled, still.
  const who = Object.hasOwn(withdrawnBy, status.by) ? withdrawnBy[status.by] : "This tool call was cancelled"
  return status.reason === undefined || status.reason === "" ? `${who}; it did not run.` : `${who}; it did not run. Reason: ${status.reason}`
}
