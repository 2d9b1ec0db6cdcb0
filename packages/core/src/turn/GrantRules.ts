/**
 * The rules of grants (see `Grant`): making, adding, revoking, and whether a
 * grant may settle a call. Kept apart from `Grant.ts` so that `Messages` and
 * `Turn` use them without importing tools and toolkits.
 *
 * @internal
 */
import { dual } from "effect/Function"
import * as Result from "effect/Result"
import * as Action from "./Action.js"
import * as ChatError from "../data/ChatError.js"
import * as GrantPredicate from "./internal/grantPredicate.js"
import * as Identity from "../internal/identity.js"
import * as JsonText from "../internal/jsonText.js"
import * as S from "../internal/schema.js"

/** A grant as stored in the messages. */
export type Grant = S.Grant

/** The Schema of a grant. */
export const Grant = S.Grant

/** An argument predicate: `{ path, equals | oneOf | prefix | suffix }`, `{ all }`, `{ any }`, `{ not }` (see the module doc of `internal/grantPredicate.ts`). */
export type Predicate = GrantPredicate.Predicate

/** Whom a turn acts for, which a grant's `scope` must match: given by the shell (`Chat.TurnOptions.grantContext`, `Worker`). */
export interface Context {
  readonly conversation?: string | undefined
  readonly user?: string | undefined
}

/** What `Messages.grant` takes. */
export interface Options {
  /** Unique within the conversation. */
  readonly id: string
  /** A tool name, or a pattern where `*` stands for any characters (`read_*`, `*`). */
  readonly tool: string
  /** The arguments the calls must have (see `Predicate`); absent: any arguments. */
  readonly where?: Predicate | undefined
  readonly scope?: S.GrantScope | undefined
  /** Who gives it. */
  readonly by: string
  /** When it is given (usually now). */
  readonly at: Action.Instant
  /** When it stops covering calls; or give `expiresAfter`. */
  readonly expiresAt?: Action.Instant | undefined
  /** How long it lasts from `at` (a `Delay`: milliseconds, `"1 hour"`, `{ hours: 1 }`). */
  readonly expiresAfter?: Action.Delay | undefined
  readonly reason?: string | undefined
}

/** The longest grant id. */
export const maxIdLength = 200

const toolPattern = /^[a-zA-Z0-9_*-]{1,64}$/

/** Whether tool `name` matches `pattern` (`*` stands for any characters, everything else is literal). */
export const matchesTool = (pattern: string, name: string): boolean => {
  if (!toolPattern.test(pattern)) return false
  const pieces = pattern.split("*")
  if (pieces.length === 1) return pattern === name
  const first = pieces[0]!
  const last = pieces[pieces.length - 1]!
  if (name.length < first.length + last.length || !name.startsWith(first) || !name.endsWith(last)) return false
  let from = first.length
  const end = name.length - last.length
  for (const piece of pieces.slice(1, -1)) {
    const found = name.indexOf(piece, from)
    if (found === -1 || found + piece.length > end) return false
    from = found + piece.length
  }
  return true
}

const instantMillis = (instant: unknown): number => {
  const millis: unknown = Action.toMillis(instant as Action.Instant)
  return typeof millis === "number" ? millis : Number.NaN
}

/** Why stored grant data is not a grant that can ever apply (hand-written state), or `undefined`. */
const storedProblem = (grant: Grant): string | undefined => {
  if (typeof grant.id !== "string" || grant.id.length === 0 || grant.id.length > maxIdLength) return `its id must be 1 to ${maxIdLength} characters`
  if (typeof grant.tool !== "string" || !toolPattern.test(grant.tool)) return "its tool must be a tool name or a pattern of letters, digits, '_', '-' and '*'"
  if (typeof grant.by !== "string") return "it must say who gives it (`by`)"
  // The calls it settles record `by` as their decider: an empty or look-alike id would be an anonymous, or a forged, grantor.
  const grantor = Identity.describe("who gives it (`by`)", grant.by)
  if (grantor !== undefined) return grantor
  if (!S.isMillis(grant.at)) return `its time (at) ${String(grant.at)} is not a valid instant`
  if (!S.isMillis(grant.expiresAt)) return `its expiry ${String(grant.expiresAt)} is not a valid instant`
  if (!(grant.expiresAt > grant.at)) return "it expires before it starts"
  if (grant.where !== undefined) {
    const bad = GrantPredicate.problem(grant.where)
    if (bad !== undefined) return `its predicate cannot be evaluated: ${bad}`
  }
  return undefined
}

/** A grant from options, or `InvalidGrant` (bad id, tool pattern, predicate, time, or an expiry not after `at`). */
export const make = (options: Options): Result.Result<Grant, ChatError.InvalidGrant> => {
  const id = typeof options.id === "string" ? options.id : String(options.id)
  const at = instantMillis(options.at)
  if ((options.expiresAt === undefined) === (options.expiresAfter === undefined)) {
    return Result.fail(new ChatError.InvalidGrant({ id, detail: "give exactly one of expiresAt and expiresAfter" }))
  }
  const expiresAt = options.expiresAt !== undefined
    ? instantMillis(options.expiresAt)
    : at + Action.delayMillis(options.expiresAfter!)
  const grant: Grant = {
    id,
    tool: options.tool,
    ...(options.where === undefined ? {} : { where: options.where }),
    ...(options.scope === undefined ? {} : { scope: options.scope }),
    by: options.by,
    at,
    expiresAt,
    ...(options.reason === undefined ? {} : { reason: options.reason })
  }
  const scopeProblem = options.scope === undefined ? undefined : checkScope(options.scope)
  const problem = scopeProblem ?? storedProblem(grant)
  return problem === undefined ? Result.succeed(grant) : Result.fail(new ChatError.InvalidGrant({ id, detail: problem }))
}

const checkScope = (scope: unknown): string | undefined => {
  if (typeof scope !== "object" || scope === null || Array.isArray(scope)) return "its scope must be { conversation?, user? }"
  for (const [key, value] of Object.entries(scope)) {
    if (key !== "conversation" && key !== "user") return `its scope has an unknown key ${JSON.stringify(key)}`
    if (value !== undefined && typeof value !== "string") return `its scope's ${key} must be a string`
  }
  return undefined
}

/** A grant with the index of the message holding it. */
export interface Located {
  readonly grant: Grant
  readonly index: number
}

/** Every grant of the conversation with the index of its message, in order. */
export const all = (messages: ReadonlyArray<S.Message>): ReadonlyArray<Located> => {
  const out: Array<Located> = []
  for (let index = 0; index < messages.length; index++) {
    const grants = messages[index]!.grants
    if (grants !== undefined) for (const grant of grants) out.push({ grant, index })
  }
  return out
}

/** The grant with this id, and where it is, or `undefined`. */
export const find = (messages: ReadonlyArray<S.Message>, id: string): Located | undefined =>
  all(messages).find((located) => located.grant.id === id)

/** Whether a grant is in force at `now`: valid data, not revoked, `at <= now < expiresAt`. */
export const isLive = (grant: Grant, now: number): boolean =>
  storedProblem(grant) === undefined && grant.revoked === undefined && S.isMillis(now) && grant.at <= now && now < grant.expiresAt

/**
 * Adds a grant to the conversation, on its last message: it covers calls of
 * later messages only. Fails with `InvalidGrant` (see `make`, or an empty
 * conversation) or `DuplicateGrant`, leaving the messages unchanged.
 */
export const add: {
  (options: Options): (messages: ReadonlyArray<S.Message>) => Result.Result<ReadonlyArray<S.Message>, ChatError.GrantError>
  (messages: ReadonlyArray<S.Message>, options: Options): Result.Result<ReadonlyArray<S.Message>, ChatError.GrantError>
} = dual(2, (messages: ReadonlyArray<S.Message>, options: Options): Result.Result<ReadonlyArray<S.Message>, ChatError.GrantError> =>
  Result.flatMap(make(options), (grant): Result.Result<ReadonlyArray<S.Message>, ChatError.GrantError> => {
    if (find(messages, grant.id) !== undefined) return Result.fail(new ChatError.DuplicateGrant({ id: grant.id }))
    const last = messages.length - 1
    if (last < 0) {
      return Result.fail(new ChatError.InvalidGrant({ id: grant.id, detail: "the conversation has no message to record it on" }))
    }
    const next = messages.slice()
    next[last] = { ...messages[last]!, grants: [...(messages[last]!.grants ?? []), grant] }
    return Result.succeed(next)
  }))

/** Who revokes a grant, when (usually now) and why. */
export interface Revocation {
  readonly by: string
  readonly at: Action.Instant
  readonly reason?: string | undefined
}

/**
 * Revokes a grant: it stays where it is, marked `revoked { by, at, reason }`,
 * and settles no call from then on. `UnknownGrant`, `GrantRevoked` (already),
 * or `InvalidGrant` (a time that is not valid), with the messages unchanged.
 */
export const revoke: {
  (id: string, revocation: Revocation): (messages: ReadonlyArray<S.Message>) => Result.Result<ReadonlyArray<S.Message>, ChatError.RevokeGrantError>
  (messages: ReadonlyArray<S.Message>, id: string, revocation: Revocation): Result.Result<ReadonlyArray<S.Message>, ChatError.RevokeGrantError>
} = dual(
  3,
  (messages: ReadonlyArray<S.Message>, id: string, revocation: Revocation): Result.Result<ReadonlyArray<S.Message>, ChatError.RevokeGrantError> => {
    const located = find(messages, id)
    if (located === undefined) return Result.fail(new ChatError.UnknownGrant({ id }))
    const { grant, index } = located
    if (grant.revoked !== undefined) return Result.fail(new ChatError.GrantRevoked({ id, by: grant.revoked.by, at: grant.revoked.at }))
    const at = instantMillis(revocation.at)
    if (!S.isMillis(at)) return Result.fail(new ChatError.InvalidGrant({ id, detail: `the revocation time ${String(at)} is not a valid instant` }))
    if (typeof revocation.by !== "string") return Result.fail(new ChatError.InvalidGrant({ id, detail: "say who revokes it (`by`)" }))
    const revoker = Identity.describe("who revokes it (`by`)", revocation.by)
    if (revoker !== undefined) return Result.fail(new ChatError.InvalidGrant({ id, detail: revoker }))
    const revoked: S.GrantRevocation = {
      by: revocation.by,
      at,
      ...(revocation.reason === undefined ? {} : { reason: revocation.reason })
    }
    const message = messages[index]!
    const next = messages.slice()
    next[index] = { ...message, grants: message.grants!.map((g) => (g.id === id ? { ...g, revoked } : g)) }
    return Result.succeed(next)
  }
)

/** The index of the message holding the call with this id, or -1. */
const callIndex = (messages: ReadonlyArray<S.Message>, id: string): number => {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.parts.some((part) => part._tag === "ToolCall" && part.id === id)) return i
  }
  return -1
}

const scopeMatches = (scope: S.GrantScope | undefined, context: Context): boolean =>
  scope === undefined ||
  ((scope.conversation === undefined || scope.conversation === context.conversation) &&
    (scope.user === undefined || scope.user === context.user))

/**
 * Whether grant `grantId` may settle call `call` (proposed in `messages`) at
 * `now` for a turn acting for `context`: the grant, or `GrantNotApplicable`
 * saying why not. This is the rule the reducer applies to every decision that
 * names a grant.
 */
export const check = (
  messages: ReadonlyArray<S.Message>,
  grantId: string,
  call: S.ToolCallPart,
  now: number,
  context: Context = {}
): Result.Result<Grant, ChatError.GrantNotApplicable> => {
  const refuse = (reason: ChatError.GrantNotApplicable["reason"], detail: string) =>
    Result.fail(new ChatError.GrantNotApplicable({ grant: String(grantId), call: call.id, reason, detail }))
  const located = typeof grantId === "string" ? find(messages, grantId) : undefined
  if (located === undefined) return refuse("unknown", "there is no such grant in the messages")
  const { grant, index } = located
  const bad = storedProblem(grant)
  if (bad !== undefined) return refuse("arguments", `the stored grant is not valid: ${bad}`)
  if (grant.revoked !== undefined) return refuse("revoked", `it was revoked by ${grant.revoked.by}`)
  if (!S.isMillis(now)) return refuse("expired", "the decision time is not a valid instant")
  if (now >= grant.expiresAt) return refuse("expired", `it expired at ${new Date(grant.expiresAt).toISOString()}`)
  if (now < grant.at) return refuse("not-yet-valid", `it starts at ${new Date(grant.at).toISOString()}`)
  const at = callIndex(messages, call.id)
  if (at <= index) return refuse("proposed-before", "the call was proposed before the grant was made (a grant never settles a pending call)")
  if (!matchesTool(grant.tool, call.name)) return refuse("tool", `it covers tool '${grant.tool}', not '${call.name}'`)
  if (grant.where !== undefined) {
    const args = JsonText.parse(call.arguments)
    if (Result.isFailure(args) || !GrantPredicate.evaluate(grant.where, args.success)) {
      return refuse("arguments", "the call's arguments do not satisfy its predicate")
    }
  }
  if (!scopeMatches(grant.scope, context)) return refuse("scope", "the turn is not in its scope (conversation or user)")
  return Result.succeed(grant)
}

/** The live grants that cover call `call` at `now` for `context` (what the strategy is shown as `call.grants`). */
export const covering = (
  messages: ReadonlyArray<S.Message>,
  call: S.ToolCallPart,
  now: number,
  context: Context = {}
): ReadonlyArray<Grant> =>
  all(messages).flatMap(({ grant }) => Result.isSuccess(check(messages, grant.id, call, now, context)) ? [grant] : [])

/** Whether a call's decision record says a grant settled it. */
export const settledBy = (call: S.ToolCallPart): string | undefined => {
  const status = call.status
  return "decision" in status ? status.decision?.grant : undefined
}

