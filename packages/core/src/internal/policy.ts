/**
 * The rules of decision policies, pure: who may approve, edit or reject a
 * call waiting for a person, four-eyes (not the person who asked) and quorums
 * (N distinct approvers). `Messages.approve` / `reject` check a decision with
 * `check` before changing anything; the reducer runs an approved call only if
 * `satisfied` says its recorded approvals meet the policy it was approved
 * under.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as ChatError from "../ChatError.js"
import * as Identity from "./identity.js"
import * as Lazy from "./lazy.js"
import * as S from "./schema.js"

/** The three decisions a person takes. */
export type Kind = "approve" | "edit" | "reject"

// Compiled on first use (most programs never check a policy).
const isPolicy = Lazy.guard(() => Schema.is(S.Policy))
const isIdentity = Lazy.guard(() => Schema.is(S.Identity))

/** Whether a value is a policy the state may hold (the reducer rejects a call whose policy is not): its ids and roles canonical too. */
export const isValid = (policy: unknown): policy is S.Policy => isPolicy(policy) && policyIdsProblem(policy) === undefined

/** Why a policy names an id or role that is not canonical (`"bob "` would never match `bob`), or `undefined`. */
export const policyIdsProblem = (policy: S.Policy): string | undefined => {
  for (const kind of ["approve", "edit", "reject"] as const) {
    const deciders = policy[kind]
    const bad = deciders === undefined
      ? undefined
      : Identity.listProblem(deciders.ids, `an id its policy lets ${kind}`) ?? Identity.listProblem(deciders.roles, `a role its policy lets ${kind}`)
    if (bad !== undefined) return bad
  }
  return undefined
}

/** The hash of arguments as a decider saw them (JSON text, canonical in the state): `sha256:<hex>`. */
export const argumentsHash = (text: string): string => `sha256:${nodeCrypto().createHash("sha256").update(text, "utf8").digest("hex")}`

/** `node:crypto`, loaded on the first hash (about 50 internal modules Node would otherwise load at import). */
const nodeCrypto = Lazy.value(() => process.getBuiltinModule("node:crypto"))

/** The policy a waiting (or approved) call is decided under, if any. */
export const policyOf = (call: S.ToolCallPart): S.Policy | undefined => {
  const status = call.status
  return status._tag === "AwaitingApproval" || status._tag === "Scheduled" || status._tag === "Approved" ? status.policy : undefined
}

/** The yeses a waiting call has towards its quorum. */
export const votesOf = (call: S.ToolCallPart): ReadonlyArray<S.Vote> => {
  const status = call.status
  return (status._tag === "AwaitingApproval" || status._tag === "Scheduled") && status.votes !== undefined ? status.votes : []
}

/** How many distinct approvals the policy needs (1 without a quorum). */
export const quorumOf = (policy: S.Policy): number => policy.quorum ?? 1

/** Who may take a kind of decision: edits and rejections default to the approvers. */
export const decidersFor = (policy: S.Policy, kind: Kind): S.Deciders | undefined =>
  kind === "reject" ? policy.reject ?? policy.approve : kind === "edit" ? policy.edit ?? policy.approve : policy.approve

/** Whether `deciders` names this person (by id or by one of their roles); absent names everyone identified. */
export const names = (deciders: S.Deciders | undefined, person: { readonly id: string; readonly roles?: ReadonlyArray<string> | undefined }): boolean => {
  if (deciders === undefined) return true
  if ((deciders.ids ?? []).includes(person.id)) return true
  const roles = deciders.roles ?? []
  return (person.roles ?? []).some((role) => roles.includes(role))
}

/**
 * Who asked for the call: the sender of the user message that started the turn
 * the call belongs to (the last user message before the message holding it).
 */
export const requesterOf = (messages: ReadonlyArray<S.Message>, callId: string): S.Identity | undefined => {
  let i = messages.length - 1
  for (; i >= 0; i--) {
    if (messages[i]!.parts.some((part) => part._tag === "ToolCall" && part.id === callId)) break
  }
  for (; i >= 0; i--) {
    const message = messages[i]!
    if (message.role === "user") return message.sender
  }
  return undefined
}

const refuse = (id: string, kind: Kind, decider: S.Identity | undefined, detail: string) =>
  Result.fail(new ChatError.DecisionNotAllowed({ id, kind, detail, ...(decider === undefined ? {} : { by: decider.id }) }))

/** Why the person who asked may not approve, or `undefined` when four-eyes does not stand in the way. */
const fourEyes = (policy: S.Policy, requester: S.Identity | undefined, by: string): string | undefined => {
  if (policy.notRequester !== true) return undefined
  if (requester === undefined) return "the person who asked may not approve it, and who asked is not known (the turn's user message has no sender)"
  const bad = Identity.describe("the id of the person who asked", requester.id)
  if (bad !== undefined) return `the person who asked may not approve it, and who asked is not known: ${bad}`
  return requester.id === by ? "the person who asked may not approve their own request (four-eyes)" : undefined
}

/**
 * Whether `decider` may take this decision on `call` (waiting for a decision),
 * under the policy recorded on it. Without a policy anyone may (an identity,
 * when given, must be valid); with one, the decider must be identified, named
 * for this kind of decision, not the requester when four-eyes applies, and not
 * already among the call's votes.
 */
export const check = (
  messages: ReadonlyArray<S.Message>,
  call: S.ToolCallPart,
  kind: Kind,
  decider: S.Identity | undefined
): Result.Result<void, ChatError.DecisionNotAllowed | ChatError.DuplicateVote> => {
  if (decider !== undefined && !isIdentity(decider)) {
    return refuse(call.id, kind, undefined, "the decider's identity is not valid (a non-empty id of at most 200 characters, and roles as strings)")
  }
  const badDecider = decider === undefined ? undefined : Identity.personProblem(decider, "the decider")
  if (badDecider !== undefined) return refuse(call.id, kind, decider, badDecider)
  const policy = policyOf(call)
  if (policy === undefined) return Result.void
  if (!isValid(policy)) {
    const why = isPolicy(policy) ? policyIdsProblem(policy) : undefined
    return refuse(call.id, kind, decider, `the call's decision policy is not valid${why === undefined ? "" : ` (${why})`}, so nobody may decide it`)
  }
  if (decider === undefined) return refuse(call.id, kind, decider, "its decision policy needs to know who decides (give a decider)")
  if (!names(decidersFor(policy, kind), decider)) return refuse(call.id, kind, decider, `they are not among those its policy lets ${kind}`)
  if (kind === "reject") return Result.void
  const eyes = fourEyes(policy, requesterOf(messages, call.id), decider.id)
  if (eyes !== undefined) return refuse(call.id, kind, decider, eyes)
  const quorum = quorumOf(policy)
  if (kind === "edit" && quorum > 1) {
    return refuse(call.id, kind, decider, `it needs ${quorum} approvals of the same arguments, so it cannot be edited (reject it instead)`)
  }
  if (votesOf(call).some((vote) => vote.by === decider.id)) return Result.fail(new ChatError.DuplicateVote({ id: call.id, by: decider.id }))
  return Result.void
}

/** A decider's yes as a vote: who, their roles, when, and the hash of the arguments they saw. */
export const voteOf = (decider: S.Identity, at: number, call: S.ToolCallPart): S.Vote => ({
  by: decider.id,
  ...(decider.roles === undefined ? {} : { roles: decider.roles }),
  at,
  argumentsHash: argumentsHash(call.arguments)
})

/** A decision record for a decider's decision (with the quorum's votes, when there is one). */
export const recordOf = (
  decider: S.Identity,
  at: number,
  kind: Kind,
  call: S.ToolCallPart,
  votes: ReadonlyArray<S.Vote>
): S.Decision => ({
  by: decider.id,
  at,
  ...(decider.roles === undefined ? {} : { roles: decider.roles }),
  kind,
  argumentsHash: argumentsHash(call.arguments),
  ...(votes.length === 0 ? {} : { votes })
})

/** The votes an approved call's decision record stands for: its quorum's, or the decision itself as one vote. */
const approvalsOf = (decision: S.Decision | undefined): ReadonlyArray<S.Vote> | undefined => {
  if (decision === undefined) return undefined
  if (decision.votes !== undefined) return decision.votes
  if (decision.argumentsHash === undefined) return undefined
  return [{ by: decision.by, at: decision.at, argumentsHash: decision.argumentsHash, ...(decision.roles === undefined ? {} : { roles: decision.roles }) }]
}

/**
 * Whether an approved call may run: without a policy, yes; with one, its
 * decision record must hold approvals from at least `quorum` distinct people,
 * each named by the policy (for an edit, as an editor), none the requester
 * when four-eyes applies, each of the arguments the call holds.
 */
export const satisfied = (messages: ReadonlyArray<S.Message>, call: S.ToolCallPart): boolean => {
  const status = call.status
  if (status._tag !== "Approved" || status.policy === undefined) return true
  const policy = status.policy
  if (!isValid(policy)) return false
  const kind: Kind = status.editedArguments === undefined ? "approve" : "edit"
  const quorum = quorumOf(policy)
  if (kind === "edit" && quorum > 1) return false
  const votes = approvalsOf(status.decision)
  if (votes === undefined) return false
  const requester = policy.notRequester === true ? requesterOf(messages, call.id) : undefined
  const hash = argumentsHash(call.arguments)
  const counted = new Set<string>()
  for (const vote of votes) {
    if (vote.argumentsHash !== hash || !names(decidersFor(policy, kind), { id: vote.by, roles: vote.roles })) continue
    // A vote written past `check` (state edited by hand) by an id that is not canonical counts for nobody.
    if (Identity.personProblem({ id: vote.by, roles: vote.roles }, "the voter") !== undefined) continue
    if (fourEyes(policy, requester, vote.by) !== undefined) continue
    counted.add(vote.by)
  }
  return counted.size >= quorum
}

/** The waiting status an approval that does not meet its policy goes back to (its deadline or scheduled time kept). */
export const unmet = (status: Extract<S.ToolCallStatus, { readonly _tag: "Approved" }>): S.ToolCallStatus => {
  const policy = status.policy === undefined ? {} : { policy: status.policy }
  if (status.scheduledAt !== undefined) return { _tag: "Scheduled", at: status.scheduledAt, ...policy }
  return { _tag: "AwaitingApproval", ...(status.expiresAt === undefined ? {} : { expiresAt: status.expiresAt }), ...policy }
}
