/**
 * The rules of decision policies, pure: who may approve, edit or reject a
 * call waiting for a person, four-eyes (not the person who asked) and quorums
 * (N distinct approvers). The policy a call is decided under is fixed on the
 * call (`decidedUnder`) when its strategy sends it to a person, so no status
 * written afterwards drops it. `Messages.approve` / `reject` check a decision
 * with `check` before changing anything; the reducer runs a call whose status
 * claims an approval only if `satisfied` says its recorded approvals meet that
 * fixed policy, for the very text that runs.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as ChatError from "../../data/ChatError.js"
import * as Identity from "../../internal/identity.js"
import * as Lazy from "../../internal/lazy.js"
import * as S from "../../internal/schema.js"

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

/**
 * What a call is decided under: the rule fixed on it (`decidedUnder`), else, in documents written
 * before it was kept there, the policy its waiting or approved status carries (with its scheduled time).
 */
export const decidedUnderOf = (call: S.ToolCallPart): S.DecidedUnder | undefined => {
  if (call.decidedUnder !== undefined) return call.decidedUnder
  const status = call.status
  switch (status._tag) {
    case "AwaitingApproval":
      return status.policy === undefined ? undefined : { policy: status.policy }
    case "Scheduled":
      return status.policy === undefined ? undefined : { policy: status.policy, ...(S.isMillis(status.at) ? { at: status.at } : {}) }
    case "Approved":
      return status.policy === undefined
        ? undefined
        : { policy: status.policy, ...(S.isMillis(status.scheduledAt) ? { at: status.scheduledAt } : {}) }
    default:
      return undefined
  }
}

/** The policy a waiting (or approved) call is decided under, if any: the one fixed on the call, whatever its status says. */
export const policyOf = (call: S.ToolCallPart): S.Policy | undefined => {
  const status = call.status
  return status._tag === "AwaitingApproval" || status._tag === "Scheduled" || status._tag === "Approved"
    ? decidedUnderOf(call)?.policy
    : undefined
}

/**
 * `next` (what an update made of `call`) with the rule `call` is decided under: an update may
 * write any status, it never drops or replaces the policy fixed on the call (nor the one a waiting
 * status of an older document carries: it is fixed on the call from then on).
 */
export const keepDecidedUnder = (call: S.ToolCallPart, next: S.ToolCallPart): S.ToolCallPart => {
  const under = decidedUnderOf(call)
  return under === undefined || typeof next !== "object" || next === null || next.decidedUnder === under ? next : { ...next, decidedUnder: under }
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
 * Who asked for the call: the senders of the user messages the model answered
 * with it, one entry each (`undefined` for a message without a sender). Those
 * are the user messages delivered together before the response's turn: the
 * run of consecutive user messages that ends at the last user message before
 * the message holding the call (several when messages queued during a pause
 * were delivered together, or steered in one after another). Empty when the
 * call is not found or no user message precedes it.
 */
export const requestersOf = (messages: ReadonlyArray<S.Message>, callId: string): ReadonlyArray<S.Identity | undefined> => {
  let i = messages.length - 1
  for (; i >= 0; i--) {
    if (messages[i]!.parts.some((part) => part._tag === "ToolCall" && part.id === callId)) break
  }
  for (; i >= 0 && messages[i]!.role !== "user"; i--);
  const out: Array<S.Identity | undefined> = []
  for (; i >= 0 && messages[i]!.role === "user"; i--) out.unshift(messages[i]!.sender)
  return out
}

/** The sender of the last user message the model answered with the call (see `requestersOf` for all of them). */
export const requesterOf = (messages: ReadonlyArray<S.Message>, callId: string): S.Identity | undefined => {
  const requesters = requestersOf(messages, callId)
  return requesters[requesters.length - 1]
}

const refuse = (id: string, kind: Kind, decider: S.Identity | undefined, detail: string) =>
  Result.fail(new ChatError.DecisionNotAllowed({ id, kind, detail, ...(decider === undefined ? {} : { by: decider.id }) }))

/**
 * Why the person who asked may not approve, or `undefined` when four-eyes does not stand in the way:
 * every sender of the user messages the call answers is a requester, and one message without a
 * sender makes who asked unknown.
 */
const fourEyes = (policy: S.Policy, requesters: ReadonlyArray<S.Identity | undefined>, by: string): string | undefined => {
  if (policy.notRequester !== true) return undefined
  if (requesters.length === 0 || requesters.some((requester) => requester === undefined)) {
    return "the person who asked may not approve it, and who asked is not known (a user message it answers has no sender)"
  }
  for (const requester of requesters) {
    const bad = Identity.describe("the id of the person who asked", requester!.id)
    if (bad !== undefined) return `the person who asked may not approve it, and who asked is not known: ${bad}`
  }
  return requesters.some((requester) => requester!.id === by)
    ? "the person who asked may not approve their own request (four-eyes: everyone whose message it answers asked for it)"
    : undefined
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
  const eyes = fourEyes(policy, requestersOf(messages, call.id), decider.id)
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

/**
 * The text a decision names: the call's arguments as it holds them, or, for an
 * edit, the canonical text of the edited arguments (`JSON.stringify` of what
 * they parse to: the value the handler gets, however the text was spaced).
 */
export const decidedText = (call: S.ToolCallPart, edited: string | undefined): string => {
  if (edited === undefined) return call.arguments
  try {
    return JSON.stringify(JSON.parse(edited)) ?? edited
  } catch {
    return edited
  }
}

/**
 * A decision record for a decider's decision (with the quorum's votes, when there is one): its
 * hash covers the text that runs, the edited arguments' canonical text for an edit.
 */
export const recordOf = (
  decider: S.Identity,
  at: number,
  kind: Kind,
  call: S.ToolCallPart,
  votes: ReadonlyArray<S.Vote>,
  edited?: string
): S.Decision => ({
  by: decider.id,
  at,
  ...(decider.roles === undefined ? {} : { roles: decider.roles }),
  kind,
  argumentsHash: argumentsHash(decidedText(call, kind === "edit" ? edited : undefined)),
  ...(votes.length === 0 ? {} : { votes })
})

/** A decision record as one vote (when it names the arguments it decided). */
const asVote = (decision: S.Decision): ReadonlyArray<S.Vote> =>
  decision.argumentsHash === undefined
    ? []
    : [{ by: decision.by, at: decision.at, argumentsHash: decision.argumentsHash, ...(decision.roles === undefined ? {} : { roles: decision.roles }) }]

/**
 * The yeses a decision record stands for, for a status of this kind: for an edit, the decision
 * itself, only if it is an edit (a quorum's approvals are of the arguments as proposed); for an
 * approval, its quorum's votes or the decision itself, unless it records another kind (an edit,
 * a rejection).
 */
const approvalsOf = (decision: S.Decision | undefined, kind: Kind): ReadonlyArray<S.Vote> => {
  if (decision === undefined) return []
  if (kind === "edit") return decision.kind === "edit" ? asVote(decision) : []
  if (decision.kind !== undefined && decision.kind !== "approve") return []
  return decision.votes ?? asVote(decision)
}

/**
 * Whether a call whose status claims an approval (`Approved`, or `Running` when
 * it would run again) may run: decided under no policy, yes; under one (the
 * policy fixed on the call, whatever the status says), its decision record must
 * hold approvals from at least `quorum` distinct people, each named by the
 * policy (for an edit, as an editor, and the decision itself of kind `edit`),
 * none a requester when four-eyes applies, each naming the text that runs (the
 * arguments' hash, the edited arguments' canonical hash for an edit).
 */
export const satisfied = (messages: ReadonlyArray<S.Message>, call: S.ToolCallPart): boolean => {
  const status = call.status
  if (status._tag !== "Approved" && status._tag !== "Running") return true
  const under = decidedUnderOf(call)
  if (under === undefined) return true
  const policy = under.policy
  if (!isValid(policy)) return false
  const kind: Kind = status.editedArguments === undefined ? "approve" : "edit"
  const quorum = quorumOf(policy)
  if (kind === "edit" && quorum > 1) return false
  const votes = approvalsOf(status.decision, kind)
  if (votes.length === 0) return false
  const requesters = policy.notRequester === true ? requestersOf(messages, call.id) : []
  const hash = argumentsHash(decidedText(call, status.editedArguments))
  const counted = new Set<string>()
  for (const vote of votes) {
    if (vote.argumentsHash !== hash || !names(decidersFor(policy, kind), { id: vote.by, roles: vote.roles })) continue
    // A vote written past `check` (state edited by hand) by an id that is not canonical counts for nobody.
    if (Identity.personProblem({ id: vote.by, roles: vote.roles }, "the voter") !== undefined) continue
    if (fourEyes(policy, requesters, vote.by) !== undefined) continue
    counted.add(vote.by)
  }
  return counted.size >= quorum
}

/**
 * Whether a call left running may start again (`Resume`'s `rerun`): decided under no policy, or
 * deferred under one to a time that has come (with the model's arguments: its time runs no edit),
 * or its approvals meet the policy (`satisfied`).
 */
export const mayRerun = (messages: ReadonlyArray<S.Message>, call: S.ToolCallPart, now: number): boolean => {
  const under = call.decidedUnder
  if (under === undefined) return true
  const status = call.status
  const edited = status._tag === "Running" && status.editedArguments !== undefined
  if (!edited && under.at !== undefined && S.isMillis(now) && under.at <= now) return true
  return satisfied(messages, call)
}

/**
 * The waiting status a call whose claimed approval does not meet its policy goes back to: under
 * the policy fixed on it, scheduled for the time it was deferred to, else awaiting approval (the
 * status's deadline kept); votes are not carried over.
 */
export const unmet = (call: S.ToolCallPart): S.ToolCallStatus => {
  const status = call.status
  const under = decidedUnderOf(call)
  const policy = under === undefined ? {} : { policy: under.policy }
  const at = under !== undefined ? under.at : status._tag === "Approved" ? status.scheduledAt : undefined
  if (at !== undefined) return { _tag: "Scheduled", at, ...policy }
  const expiresAt = status._tag === "Approved" ? status.expiresAt : undefined
  return { _tag: "AwaitingApproval", ...(expiresAt === undefined ? {} : { expiresAt }), ...policy }
}

/**
 * For a scheduled call under a fixed policy, the status its rule allows when the one it has does
 * not: a call never deferred waits for a person, one deferred runs no earlier than the time it was
 * deferred to. `undefined` when the status is allowed (or the call is not scheduled under a policy).
 */
export const lawfulSchedule = (call: S.ToolCallPart): S.ToolCallStatus | undefined => {
  const under = call.decidedUnder
  const status = call.status
  if (under === undefined || status._tag !== "Scheduled") return undefined
  if (under.at !== undefined && S.isMillis(status.at) && status.at >= under.at) return undefined
  const votes = status.votes === undefined ? {} : { votes: status.votes }
  return under.at === undefined
    ? { _tag: "AwaitingApproval", policy: under.policy, ...votes }
    : { _tag: "Scheduled", at: under.at, policy: under.policy, ...votes }
}
