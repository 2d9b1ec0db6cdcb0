/**
 * Who may decide a call waiting for a person: a decision policy names who may
 * approve, edit and reject (people by id, or roles), whether the person who
 * asked may approve (`notRequester`: four-eyes) and how many distinct people
 * must say yes (`quorum`).
 *
 * A tool declares one (`Tool.make({ decisionPolicy })`), or its strategy picks
 * one per call (`Action.RequireApproval({ policy })`, for example from the
 * tool's metadata and the arguments). The reducer fixes it on the call when it
 * sends the call to a person (`decidedUnder`; a copy on the waiting status),
 * so the stored state alone says who may decide, in every shell, and no status
 * written later (`Messages.updateTool`, a `Worker.resume` decide) drops it.
 * Decisions (`Messages.approve` / `approveJson` / `reject`, `chat.approve`…,
 * the workflow client, the inbox) are checked against it before anything
 * changes (`DecisionNotAllowed`, `DuplicateVote`), and recorded with who, when
 * and the hash of the text that runs (the arguments, or for an edit the
 * edited arguments' canonical text). The reducer runs a call whose status
 * claims an approval only if its recorded approvals meet the fixed policy for
 * that text; a quorum's call keeps waiting until enough distinct people
 * approved, and one rejection rejects it. A document edited by hand can forge
 * a complete record of votes: only a signature (`SignedState`) tells that.
 *
 * The requesters are the `sender`s of the user messages the model answered
 * with the call (`Messages.user(text, { sender })`): the user messages
 * delivered together before its response (several when queued messages are
 * delivered at once). Under four-eyes none of them may approve, and a call one
 * of whose messages has no sender cannot be approved by anyone. Withdrawing a
 * call under a policy (a cancel, a steering message) is for its requesters and
 * whom its `reject` rule names (`mayWithdraw`).
 *
 * @since 0.3.0
 */
import type * as Messages from "./Messages.js"
import * as Policy from "./internal/policy.js"
import type * as S from "../internal/schema.js"
import * as Withdrawal from "./internal/withdrawal.js"

/**
 * A decision policy: plain data, stored on the call it governs.
 *
 * @category models
 * @since 0.3.0
 */
export type DecisionPolicy = S.Policy

/**
 * Who may take one kind of decision: ids, or roles.
 *
 * @category models
 * @since 0.3.0
 */
export type Deciders = S.Deciders

/**
 * A kind of decision a person takes.
 *
 * @category models
 * @since 0.3.0
 */
export type Kind = Policy.Kind

/**
 * Makes a policy (the identity function, for inference and documentation).
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (policy: DecisionPolicy): DecisionPolicy => policy

/**
 * Whether a value is a valid policy (a strategy's invalid policy makes its call rejected by policy).
 *
 * @category guards
 * @since 0.3.0
 */
export const isValid: (policy: unknown) => policy is DecisionPolicy = Policy.isValid

/**
 * The policy a waiting or approved call is decided under, if any (the one fixed on the call, whatever its status says).
 *
 * @category constructors
 * @since 0.3.0
 */
export const of: (call: Messages.ToolCallPart) => DecisionPolicy | undefined = Policy.policyOf

/**
 * Who asked for a call: the sender of the last user message its response answers, if recorded (see `requestersOf`).
 *
 * @category utils
 * @since 0.3.0
 */
export const requesterOf: (messages: Messages.Messages, callId: string) => Messages.Identity | undefined = Policy.requesterOf

/**
 * Everyone who asked for a call, as four-eyes counts them: the senders of the user messages its
 * response answers (the user messages delivered together before it), one entry each, `undefined`
 * for a message without a sender.
 *
 * @category utils
 * @since 0.3.0
 */
export const requestersOf: (messages: Messages.Messages, callId: string) => ReadonlyArray<Messages.Identity | undefined> =
  Policy.requestersOf

/**
 * The hash a decision records of the text it decided (`sha256:<hex>` of the arguments text, or of an edit's canonical text).
 *
 * @category utils
 * @since 0.3.0
 */
export const argumentsHash: (text: string) => string = Policy.argumentsHash

/**
 * A waiting call's quorum progress: the yeses so far and how many it needs (1 without a quorum).
 *
 * @category utils
 * @since 0.3.0
 */
export const progress = (call: Messages.ToolCallPart): { readonly votes: ReadonlyArray<Messages.Vote>; readonly quorum: number } => {
  const policy = Policy.policyOf(call)
  return { votes: Policy.votesOf(call), quorum: policy === undefined ? 1 : Policy.quorumOf(policy) }
}

/**
 * Whether `decider` may take this decision on the waiting call with `callId`
 * now (what `Messages.approve` / `reject` would check), or why not: for a UI
 * that shows only the buttons a person may press.
 *
 * @category utils
 * @since 0.3.0
 */
export const mayDecide = (
  messages: Messages.Messages,
  call: Messages.ToolCallPart,
  kind: Kind,
  decider: Messages.Identity | undefined
): { readonly allowed: true } | { readonly allowed: false; readonly detail: string } => {
  const verdict = Policy.check(messages, call, kind, decider)
  return verdict._tag === "Success" ? { allowed: true } : { allowed: false, detail: verdict.failure.message }
}

/**
 * Who withdraws a call: an id and the roles a policy's `reject` rule may name (a `cancellation`'s `by` and `roles`, a message's `sender`).
 *
 * @category models
 * @since 0.3.0
 */
export type Withdrawer = Withdrawal.Withdrawer

/**
 * Whether `who` may withdraw the call now (what `Messages.cancel` / `chat.cancel` and a steering
 * message that cancels it would check), or why not: for a UI that shows a Cancel button only to a
 * person who may press it. Only a call that has not started (awaiting approval, scheduled, or
 * approved and not yet running) can be withdrawn; under a decision policy, only by one of its
 * requesters (`requestersOf`) or someone its `reject` rule names; without one, by anyone (a `who`
 * given must have a canonical id either way).
 *
 * @category utils
 * @since 0.3.0
 */
export const mayWithdraw = (
  messages: Messages.Messages,
  call: Messages.ToolCallPart,
  who: Withdrawer | undefined
): { readonly allowed: true } | { readonly allowed: false; readonly detail: string } => {
  const tag = call.status._tag
  if (tag !== "AwaitingApproval" && tag !== "Scheduled" && tag !== "Approved") {
    return { allowed: false, detail: `it is ${tag}: only a call that has not started can be withdrawn` }
  }
  const verdict = Withdrawal.check(messages, call, who)
  return verdict._tag === "Success" ? { allowed: true } : { allowed: false, detail: verdict.failure.message }
}
