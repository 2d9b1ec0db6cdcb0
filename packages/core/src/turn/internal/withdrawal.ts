/**
 * Who may withdraw a call under a decision policy (`Messages.cancel`,
 * `chat.cancel`, a steering message that cancels it): cancelling a call is a
 * "no" that the model sees, so a policy's `reject` rule governs it, with one
 * exception: the person who asked for the call (its requester) may always
 * withdraw their own request. A call without a policy may be withdrawn by
 * anyone, as before.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as ChatError from "../../data/ChatError.js"
import * as Identity from "../../internal/identity.js"
import * as Policy from "./policy.js"
import type * as S from "../../internal/schema.js"

/** Who withdraws a call: an id and the roles a policy's `reject` rule may name. */
export interface Withdrawer {
  readonly id: string
  readonly roles?: ReadonlyArray<string> | undefined
}

/** The withdrawer an audit record names (`cancellation: { by, roles }`), if any. */
export const fromRecord = (record: S.Decision | undefined): Withdrawer | undefined =>
  record === undefined ? undefined : { id: record.by, ...(record.roles === undefined ? {} : { roles: record.roles }) }

/**
 * Whether `who` may withdraw `call` (in `messages`): a `who` given must have a
 * canonical id; without a policy, anyone may; with one, `who` must be known and be the call's requester
 * or named by the policy's `reject` rule (`DecisionNotAllowed` with
 * `kind: "cancel"` otherwise).
 */
export const check = (
  messages: ReadonlyArray<S.Message>,
  call: S.ToolCallPart,
  who: Withdrawer | undefined
): Result.Result<void, ChatError.DecisionNotAllowed> => {
  const refuse = (detail: string) =>
    Result.fail(new ChatError.DecisionNotAllowed({ id: call.id, kind: "cancel", detail, ...(who === undefined ? {} : { by: String(who.id) }) }))
  // A withdrawer's id is recorded on the call: with or without a policy, it must be canonical.
  const bad = who === undefined ? undefined : Identity.personProblem(who, "the withdrawer")
  if (bad !== undefined) return refuse(bad)
  const policy = Policy.policyOf(call)
  if (policy === undefined) return Result.void
  if (who === undefined) {
    return refuse("it is under a decision policy, so withdrawing it needs to know who withdraws it (give `cancellation: { by, at }`, or a sender)")
  }
  // Any of its requesters (every sender of the user messages it answers) withdraws their own request.
  const asked = Policy.requestersOf(messages, call.id)
  if (asked.some((requester) => requester !== undefined && Identity.isCanonical(requester.id) && requester.id === who.id)) return Result.void
  if (!Policy.isValid(policy)) return refuse("its decision policy is not valid, so only the person who asked for it may withdraw it")
  if (Policy.names(Policy.decidersFor(policy, "reject"), who)) return Result.void
  return refuse("only the person who asked for it, or someone its decision policy lets reject it, may withdraw it")
}

/** The first call of `calls` that `who` may not withdraw, as the refusal, or success. */
export const checkAll = (
  messages: ReadonlyArray<S.Message>,
  calls: ReadonlyArray<S.ToolCallPart>,
  who: Withdrawer | undefined
): Result.Result<void, ChatError.DecisionNotAllowed> => {
  for (const call of calls) {
    const checked = check(messages, call, who)
    if (Result.isFailure(checked)) return checked
  }
  return Result.void
}
