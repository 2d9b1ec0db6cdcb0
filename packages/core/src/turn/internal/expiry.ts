/**
 * The `Expired` status the reducer gives a call whose approval request's own
 * deadline passed: with no decision, or with an approval that came too late.
 *
 * @internal
 */
import { isMillis } from "../../internal/schema.js"
import type * as S from "../../internal/schema.js"

/** `call` as expired at `expiresAt` (a time that is not valid is left out: it counts as passed). `approvedLate`: a person approved it after. */
export const expired = (call: S.ToolCallPart, expiresAt: number, approvedLate: boolean): S.ToolCallPart => {
  const status = call.status
  return {
    ...call,
    status: {
      _tag: "Expired",
      // A deadline that is no valid time (state built by hand) cannot be stored as one: the state must stay writable.
      ...(isMillis(expiresAt) ? { expiresAt } : {}),
      ...(approvedLate ? { approvedLate: true } : {}),
      ...("decision" in status && status.decision !== undefined ? { decision: status.decision } : {}),
      // A quorum's yeses so far stay on the record, as a rejection keeps them.
      ...((status._tag === "AwaitingApproval" || status._tag === "Scheduled") && status.votes !== undefined && status.votes.length > 0
        ? { votes: status.votes }
        : {})
    }
  }
}
