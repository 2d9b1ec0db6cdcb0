/**
 * Late approvals in the property kit's laws: an approval (or edit) accepted at
 * or after the approval deadline of its call counts for nothing: the call
 * never runs, and when the model is called again it sees the call expired (or
 * otherwise refused). Core expires such a call on resume (`Expired` with
 * `approvedLate`); a decision path or a store that lets it run breaks this.
 *
 * @internal
 */
import * as Messages from "../../turn/Messages.js"
import type * as Trace from "../Trace.js"

const unrun = new Set(["Rejected", "Cancelled", "Expired"])

/** The approval deadline the call with `id` had when last seen awaiting approval before `seq`. */
const deadlineBefore = (trace: Trace.Trace, id: string, seq: number): number | undefined => {
  let deadline: number | undefined
  for (const state of trace.states) {
    if (state.seq > seq) break
    const status = Messages.findTool(state.messages, id)?.status
    if (status?._tag === "AwaitingApproval") deadline = status.expiresAt
  }
  return deadline
}

/** The ways the trace lets a late approval count: the call ran after it, or the model was later told it is something else than refused. */
export const violations = (trace: Trace.Trace): ReadonlyArray<string> =>
  trace.decisions.flatMap((decision) => {
    if (!decision.accepted || (decision.kind !== "approve" && decision.kind !== "edit" && decision.kind !== "approve-late")) return []
    const deadline = deadlineBefore(trace, decision.id, decision.seq)
    if (deadline === undefined || decision.at < deadline) return []
    const late = `${decision.id} was approved (${decision.kind} by ${decision.by.id}) at ${decision.at}, past its deadline ${deadline}`
    const out: Array<string> = []
    if (trace.runs.some((run) => run.id === decision.id && run.seq > decision.seq)) out.push(`${late}, but ran`)
    const told = trace.requests.filter((request) => request.seq > decision.seq).map((request) => Messages.findTool(request.request.messages, decision.id))
    const seen = told.filter((found) => found !== undefined).at(-1)
    if (seen !== undefined && !unrun.has(seen.status._tag)) out.push(`${late}, but the model was last told it is ${seen.status._tag}`)
    return out
  })
