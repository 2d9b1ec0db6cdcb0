/**
 * The "no"s a `Worker.resume` decide writes itself, checked against the
 * decision policy of the call they end. A decide returns messages: it may use
 * `Messages.reject` / `cancel` (checked as they are taken), or write a status
 * itself (`Messages.updateTool(…, (c) => ({ ...c, status: { _tag: "Cancelled", … } }))`).
 * A status that claims an approval is judged by the reducer when it would run
 * the call (`Policy.satisfied`); a status that ends a call without running it
 * (`Rejected`, `Cancelled`, `Expired`) is the model's answer at once, so it is
 * judged here, against the stored state the decide was given: a call that
 * waited under a policy may end so only as the policy allows, as if the entry
 * had been used (a rejection names a person its `reject` rule names; a
 * withdrawal names one of its requesters or such a person, by its
 * `cancellation` record or the sender of a user message the decide added; an
 * expiry comes no earlier than the request's deadline).
 *
 * A decide cannot loosen what a call is decided under either: the rule fixed on
 * a call of the stored state (`decidedUnder`) is put back on the call the
 * decide returns, however it was rewritten (`bind`); a call under a policy
 * that never ran may not be given a result (`Completed`, `Failed`: the model
 * would read it as the tool's answer) nor be written `Running` (which the turn
 * would report as interrupted, perhaps run); and a call the stored state does not
 * hold (a new id) must come as `Proposed`, so the strategy decides it; nor may
 * a call stored `Proposed` (its strategy not asked yet) be written anything that
 * runs it or lets a person run it past the tool's policy (`Approved`,
 * `Scheduled`, `Running`, `AwaitingApproval`, `Completed`); nor may a call
 * that ended (`Completed`, `Failed`, `Rejected`, `Expired`, `Cancelled`) be
 * given another status, or one that started (`Running`) be made to wait or run
 * again: a call never runs twice.
 *
 * Like the approvals' check, this reads the records the decide wrote: a record
 * that names the right person is believed (only `SignedState` tells who wrote a
 * document).
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as ChatError from "../data/ChatError.js"
import * as Policy from "./internal/policy.js"
import type * as S from "../internal/schema.js"
import * as Withdrawal from "./internal/withdrawal.js"

type Refusal = ChatError.DecisionNotAllowed

const callsOf = (messages: ReadonlyArray<S.Message>): Map<string, S.ToolCallPart> => {
  const out = new Map<string, S.ToolCallPart>()
  for (const message of messages) {
    for (const part of message.parts) if (part._tag === "ToolCall") out.set(part.id, part)
  }
  return out
}

/**
 * The senders of the user messages the decide added: messages appended after the stored ones
 * (`Messages.append(…, { supersede })`) and messages newly held on a response (`Steering.steer`).
 */
const addedSenders = (before: ReadonlyArray<S.Message>, after: ReadonlyArray<S.Message>): ReadonlyArray<Withdrawal.Withdrawer> => {
  const out: Array<Withdrawal.Withdrawer> = []
  after.forEach((message, index) => {
    const previous = before[index]
    if (index >= before.length) {
      if (message.role === "user" && message.sender !== undefined) out.push(message.sender)
      return
    }
    const held = message.queued ?? []
    for (const queued of held.slice(previous?.queued?.length ?? 0)) if (queued.sender !== undefined) out.push(queued.sender)
  })
  return out
}

const deadlineOf = (status: S.ToolCallStatus): number | undefined =>
  status._tag === "AwaitingApproval" || status._tag === "Approved" ? status.expiresAt : undefined

/** Whether ending `was` (in `before`) as `now` is allowed, or the refusal. */
const checkOne = (
  before: ReadonlyArray<S.Message>,
  after: ReadonlyArray<S.Message>,
  was: S.ToolCallPart,
  call: S.ToolCallPart,
  at: number
): Result.Result<void, Refusal> => {
  const status = call.status
  switch (status._tag) {
    case "Rejected": {
      const decision = status.decision
      if (decision === undefined || (decision.kind !== undefined && decision.kind !== "reject")) {
        return Result.fail(new ChatError.DecisionNotAllowed({
          id: call.id,
          kind: "reject",
          detail: "it waits under a decision policy, and the Rejected status written for it names nobody who rejected it (use Messages.reject with a decider)"
        }))
      }
      const checked = Policy.check(before, was, "reject", { id: decision.by, ...(decision.roles === undefined ? {} : { roles: decision.roles }) })
      return Result.isSuccess(checked) || checked.failure._tag !== "DecisionNotAllowed" ? Result.void : Result.fail(checked.failure)
    }
    case "Cancelled": {
      const record = Withdrawal.fromRecord(status.cancellation)
      const candidates = [...(record === undefined ? [] : [record]), ...addedSenders(before, after)]
      if (candidates.length === 0) return Withdrawal.check(before, was, undefined)
      let first: Result.Result<void, Refusal> | undefined
      for (const who of candidates) {
        const checked = Withdrawal.check(before, was, who)
        if (Result.isSuccess(checked)) return checked
        first ??= checked
      }
      return first!
    }
    case "Completed":
    case "Failed":
    case "Running":
      return Result.fail(new ChatError.DecisionNotAllowed({
        id: call.id,
        kind: "approve",
        detail: status._tag === "Running"
          ? "it waits under a decision policy and did not start, so a decide cannot write it Running (approve it, and the turn starts it)"
          : `it waits under a decision policy and did not run, so a decide cannot write it ${status._tag} (approve it, and the tool's own result is what the model reads)`
      }))
    case "Expired": {
      const deadline = deadlineOf(was.status)
      if (deadline !== undefined && deadline <= at) return Result.void
      return Result.fail(new ChatError.DecisionNotAllowed({
        id: call.id,
        kind: "cancel",
        detail: deadline === undefined
          ? "it waits under a decision policy with no deadline, so it cannot be written Expired (cancel or reject it)"
          : "it waits under a decision policy until its deadline, so it cannot be written Expired before it (cancel or reject it)"
      }))
    }
    default:
      return Result.void
  }
}

/**
 * Whether the statuses `after` gives the calls that waited in `before` under a decision policy
 * (awaiting approval, scheduled, approved and not started) end them only as that policy allows;
 * the first refusal otherwise (`DecisionNotAllowed`: `reject` for a rejection, `cancel` for a
 * withdrawal or an early expiry). A call without a policy, or whose status did not change, passes.
 */
export const check = (
  before: ReadonlyArray<S.Message>,
  after: ReadonlyArray<S.Message>,
  at: number
): Result.Result<void, Refusal> => {
  if (before === after) return Result.void
  const previous = callsOf(before)
  for (const call of callsOf(after).values()) {
    const was = previous.get(call.id)
    if (was === undefined && call.status._tag !== "Proposed") {
      return Result.fail(new ChatError.DecisionNotAllowed({
        id: call.id,
        kind: "approve",
        detail: `the stored conversation holds no call with this id, so a decide may add it only as Proposed (for the strategy to decide), not ${call.status._tag}`
      }))
    }
    if (was !== undefined && was.status._tag !== call.status._tag && (ended(was.status) || (was.status._tag === "Running" && mayRunAgain(call.status)))) {
      return Result.fail(new ChatError.DecisionNotAllowed({
        id: call.id,
        kind: "approve",
        detail: ended(was.status)
          ? `it already ended (${was.status._tag}), so a decide may not write it ${call.status._tag}: a call never runs twice, and its answer stays as it was`
          : `it already started (Running: it may have run), so a decide may not write it ${call.status._tag}: a call never runs twice (rerun it with the rerun option, if its tool is idempotent)`
      }))
    }
    if (was !== undefined && was.status._tag === "Proposed" && !endsUnrun(call.status)) {
      return Result.fail(new ChatError.DecisionNotAllowed({
        id: call.id,
        kind: "approve",
        detail: `its strategy has not decided it yet (the stored turn stopped before), so a decide may not write it ${call.status._tag}: leave it Proposed, and the strategy and the tool's policy decide it`
      }))
    }
    if (was === undefined || was.status._tag === call.status._tag || Policy.policyOf(was) === undefined) continue
    const checked = checkOne(before, after, was, call, at)
    if (Result.isFailure(checked)) return checked
  }
  return Result.void
}

/** Whether a status is a call's final answer. */
const ended = (status: S.ToolCallStatus): boolean =>
  status._tag === "Completed" || status._tag === "Failed" || status._tag === "Rejected" || status._tag === "Expired" ||
  status._tag === "Cancelled"

/** Whether a status would have the turn run (or a person approve) the call again. */
const mayRunAgain = (status: S.ToolCallStatus): boolean =>
  status._tag === "Approved" || status._tag === "Scheduled" || status._tag === "AwaitingApproval" || status._tag === "Proposed"

/** Whether a status ends a call without running it or letting it run (what a decide may write on a call not yet decided). */
const endsUnrun = (status: S.ToolCallStatus): boolean =>
  status._tag === "Proposed" || status._tag === "Rejected" || status._tag === "Cancelled" || status._tag === "Expired" ||
  status._tag === "Failed"

/**
 * `after` with the rule each call of `before` is decided under put back on it (`decidedUnder`,
 * whatever the decide wrote in its place: a copy without it, a document decoded again), then
 * checked (`check`): what the turn resumes with, or the first refusal.
 */
export const bind = (
  before: ReadonlyArray<S.Message>,
  after: ReadonlyArray<S.Message>,
  at: number
): Result.Result<ReadonlyArray<S.Message>, Refusal> => {
  if (before === after) return Result.succeed(after)
  const previous = callsOf(before)
  let changed = false
  const bound = after.map((message) => {
    let parts: Array<S.Part> | undefined
    message.parts.forEach((part, index) => {
      if (part._tag !== "ToolCall") return
      const was = previous.get(part.id)
      const kept = was === undefined ? part : Policy.keepDecidedUnder(was, part)
      if (kept === part) return
      parts ??= message.parts.slice()
      parts[index] = kept
    })
    if (parts === undefined) return message
    changed = true
    return { ...message, parts }
  })
  const result = changed ? bound : after
  return Result.map(check(before, result, at), () => result)
}
