/**
 * Who may decide a call waiting for a person: a decision policy names who may
 * approve, edit and reject (people by id, or roles), whether the person who
 * asked may approve (`notRequester`: four-eyes) and how many distinct people
 * must say yes (`quorum`).
 *
 * A tool declares one (`Tool.make({ decisionPolicy })`), or its strategy picks
 * one per call (`Action.RequireApproval({ policy })`, for example from the
 * tool's metadata and the arguments). The reducer records it on the waiting
 * call, so the stored state alone says who may decide, in every shell.
 * Decisions (`Messages.approve` / `approveJson` / `reject`, `chat.approve`…,
 * the workflow client, the inbox) are checked against it before anything
 * changes (`DecisionNotAllowed`, `DuplicateVote`), and recorded with who, when
 * and the hash of the arguments the decider saw. The reducer runs an approved
 * call only if its recorded approvals meet the policy; a quorum's call keeps
 * waiting until enough distinct people approved, and one rejection rejects it.
 *
 * The requester is the `sender` of the user message that started the turn
 * (`Messages.user(text, { sender })`): under four-eyes, a call whose requester
 * is unknown cannot be approved by anyone.
 *
 * @since 0.3.0
 */
import type * as Messages from "./Messages.js"
import * as Policy from "./internal/policy.js"
import type * as S from "./internal/schema.js"

/** A decision policy: plain data, stored on the call it governs. */
export type DecisionPolicy = S.Policy

/** Who may take one kind of decision: ids, or roles. */
export type Deciders = S.Deciders

/** A kind of decision a person takes. */
export type Kind = Policy.Kind

/** Makes a policy (the identity function, for inference and documentation). */
export const make = (policy: DecisionPolicy): DecisionPolicy => policy

/** Whether a value is a valid policy (a strategy's invalid policy makes its call rejected by policy). */
export const isValid: (policy: unknown) => policy is DecisionPolicy = Policy.isValid

/** The policy a waiting or approved call is decided under, if any. */
export const of: (call: Messages.ToolCallPart) => DecisionPolicy | undefined = Policy.policyOf

/** Who asked for a call: the sender of the user message that started its turn, if recorded. */
export const requesterOf: (messages: Messages.Messages, callId: string) => Messages.Identity | undefined = Policy.requesterOf

/** The hash a decision records of the arguments its decider saw (`sha256:<hex>` of the arguments text). */
export const argumentsHash: (text: string) => string = Policy.argumentsHash

/** A waiting call's quorum progress: the yeses so far and how many it needs (1 without a quorum). */
export const progress = (call: Messages.ToolCallPart): { readonly votes: ReadonlyArray<Messages.Vote>; readonly quorum: number } => {
  const policy = Policy.policyOf(call)
  return { votes: Policy.votesOf(call), quorum: policy === undefined ? 1 : Policy.quorumOf(policy) }
}

/**
 * Whether `decider` may take this decision on the waiting call with `callId`
 * now (what `Messages.approve` / `reject` would check), or why not: for a UI
 * that shows only the buttons a person may press.
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
