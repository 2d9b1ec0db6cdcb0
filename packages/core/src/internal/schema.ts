/**
 * The Schema definitions of conversation data (parts, tool call statuses,
 * messages). Kept apart from `Messages.ts` so that `ChatError.ts` can refer to
 * them without an import cycle; `Messages.ts` re-exports all of them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/** Token counts of one model response or of a whole turn (re-exported by `Usage`). */
export const Usage = Schema.Struct({
  inputTokens: Schema.Finite,
  outputTokens: Schema.Finite,
  reasoningTokens: Schema.optional(Schema.Finite),
  cachedInputTokens: Schema.optional(Schema.Finite)
})

/** The latest and earliest epoch milliseconds a JavaScript `Date` can hold (±100,000,000 days). */
export const maxMillis = 8.64e15

/** Epoch milliseconds (UTC): a finite number a `Date` can hold. */
export const Millis = Schema.Finite.check(Schema.isBetween({ minimum: -maxMillis, maximum: maxMillis }))

/** Whether a value is a time the state may hold: finite epoch milliseconds a `Date` can hold. */
export const isMillis = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u) && Math.abs(u) <= maxMillis

/** How deeply a stored JSON value (a tool result or error, provider metadata) may nest. */
export const maxJsonDepth = 256

/**
 * The longest edited arguments (their JSON text, in UTF-16 code units) a person may give: 1,000,000
 * characters, what fits the UI endpoints' default body (1 MiB) with room to spare, and twenty times
 * what a tool result may show the model (50,000). Longer is refused as an invalid edit.
 */
export const maxEditChars = 1_000_000

/**
 * The longest arguments (their JSON text, in UTF-16 code units) a model may propose for a call:
 * the same 1,000,000 characters as an edit, since an approved call runs either. Longer arguments
 * make the call `Invalid` before its strategy runs (the model is told the length and the limit),
 * and are never parsed or rewritten; the response keeps the text as the model sent it.
 */
export const maxArgumentChars = maxEditChars

/** Why a model's arguments' text is too long, or `undefined`. */
export const argumentsLengthProblem = (text: string): string | undefined =>
  text.length > maxArgumentChars
    ? `The arguments are ${text.length} characters long, more than the limit of ${maxArgumentChars} characters (Messages.maxArgumentChars).`
    : undefined

/** Why edited arguments' text is too long, or `undefined`. */
export const editLengthProblem = (text: string): string | undefined =>
  text.length > maxEditChars
    ? `the edit is ${text.length} characters long, more than the limit of ${maxEditChars} characters (Messages.maxEditChars)`
    : undefined

/**
 * Why `value` is not plain JSON data that `JSON.stringify` writes and
 * `JSON.parse` reads back unchanged, or `undefined` when it is: only `null`,
 * booleans, finite numbers, strings, arrays and plain objects, at most
 * `maxJsonDepth` deep (which also rules out cycles), and no `__proto__` key
 * (decoding one into an object would set that object's prototype). It never
 * recurses past `maxJsonDepth`: a hostile value cannot overflow the stack.
 */
export const jsonProblem = (value: unknown): string | undefined => problemAt(value, 0)

/**
 * The problem of `value` at `depth`, its path relative to `value` ("$" first).
 * Recursive, but never deeper than `maxJsonDepth` frames; the path is only
 * built for the one value that has a problem.
 */
const problemAt = (v: unknown, depth: number): string | undefined => {
  switch (typeof v) {
    case "string":
    case "boolean":
      return undefined
    case "number":
      return Number.isFinite(v) ? undefined : `$ is ${v}, which JSON cannot hold`
    case "object": {
      if (v === null) return undefined
      if (depth >= maxJsonDepth) return `$ nests deeper than ${maxJsonDepth} levels (or is cyclic)`
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const problem = problemAt(v[i], depth + 1)
          if (problem !== undefined) return problem.replace("$", `$[${i}]`)
        }
        return undefined
      }
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) return "$ is not a plain object"
      for (const key of Object.keys(v)) {
        if (key === "__proto__") return `$ has a "__proto__" key, which is not allowed`
        const descriptor = Object.getOwnPropertyDescriptor(v, key)!
        if (!("value" in descriptor)) return `$.${key} is an accessor, not data`
        const problem = problemAt(descriptor.value, depth + 1)
        if (problem !== undefined) return problem.replace("$", `$.${key}`)
      }
      return undefined
    }
    default:
      return `$ is ${typeof v === "undefined" ? "undefined" : `a ${typeof v}`}, which JSON cannot hold`
  }
}

/**
 * Plain JSON data (see `jsonProblem`); what tool results and errors are stored as.
 * A value that is not fails with the problem as its message (its path and what is wrong).
 */
export const Json: Schema.Codec<unknown> = Schema.declareConstructor<unknown>()(
  [],
  () => (input, _ast, options) => {
    const problem = jsonProblem(input)
    return problem === undefined
      ? Effect.succeed(input)
      : Effect.fail(new SchemaIssue.InvalidValue({ message: problem }, input, options))
  },
  { identifier: "Json", description: "plain JSON data", expected: "plain JSON data" }
)

// ---------------------------------------------------------------------------
// Files (message parts, and what a tool result shows the model besides its JSON)
// ---------------------------------------------------------------------------

export const FileData = Schema.Union([
  Schema.TaggedStruct("Base64", { base64: Schema.String }),
  Schema.TaggedStruct("Url", { url: Schema.String })
])
export type FileData = typeof FileData.Type

export const FilePart = Schema.TaggedStruct("File", {
  mediaType: Schema.String,
  data: FileData,
  filename: Schema.optional(Schema.String)
})
export type FilePart = typeof FilePart.Type

// ---------------------------------------------------------------------------
// Tool call statuses
// ---------------------------------------------------------------------------

/** A person who asks or decides: an id (recorded in the audit) and the roles a decision policy may name. */
export const Identity = Schema.Struct({
  id: Schema.NonEmptyString.check(Schema.isMaxLength(200)),
  roles: Schema.optional(Schema.Array(Schema.String.check(Schema.isMaxLength(200))).check(Schema.isMaxLength(100)))
})
export type Identity = typeof Identity.Type

/** Who may take one kind of decision: these ids, or anyone holding one of these roles (absent: anyone identified). */
export const Deciders = Schema.Struct({
  ids: Schema.optional(Schema.Array(Schema.String)),
  roles: Schema.optional(Schema.Array(Schema.String))
})
export type Deciders = typeof Deciders.Type

/**
 * Who may decide a call waiting for a person (see `DecisionPolicy`): who may approve, edit and
 * reject, whether the person who asked may approve (`notRequester`: four-eyes), and how many
 * distinct people must approve (`quorum`, default 1). Plain data, kept on the call's status.
 */
export const Policy = Schema.Struct({
  approve: Schema.optional(Deciders),
  /** Who may approve with edited arguments (default: who may approve). */
  edit: Schema.optional(Deciders),
  /** Who may reject (default: who may approve). */
  reject: Schema.optional(Deciders),
  notRequester: Schema.optional(Schema.Boolean),
  quorum: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 })))
})
export type Policy = typeof Policy.Type

/** One person's yes towards a quorum: who (with the roles they held), when, and the hash of the arguments they saw. */
export const Vote = Schema.Struct({
  by: Schema.String,
  roles: Schema.optional(Schema.Array(Schema.String)),
  at: Millis,
  argumentsHash: Schema.String
})
export type Vote = typeof Vote.Type

/**
 * Who decided a call and when (epoch millis): an audit record kept in the state, never shown to the model.
 * Decisions taken with an identity also record its roles, what was decided, the hash of the arguments
 * the decider saw, and for a quorum every vote (the last one is the decision itself).
 */
export const Decision = Schema.Struct({
  by: Schema.String,
  at: Millis,
  roles: Schema.optional(Schema.Array(Schema.String)),
  kind: Schema.optional(Schema.Literals(["approve", "edit", "reject"])),
  argumentsHash: Schema.optional(Schema.String),
  votes: Schema.optional(Schema.Array(Vote)),
  /** The id of the grant that settled the call, when a grant did (see `Grant`); absent otherwise and in 0.1 documents. */
  grant: Schema.optional(Schema.String)
})
export type Decision = typeof Decision.Type

/**
 * A reviewer model's verdict on a call waiting for a person (see `Reviewer`), shown to the approver,
 * never sent to the model: `unavailable` when the reviewer failed, timed out or answered nothing usable.
 */
export const Review = Schema.Struct({
  verdict: Schema.Literals(["safe", "needs-person", "refuse", "unavailable"]),
  reason: Schema.String,
  /** How sure the reviewer said it was, from 0 to 1 (absent when it gave no verdict). */
  confidence: Schema.optional(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })))
})
export type Review = typeof Review.Type

export const Proposed = Schema.TaggedStruct("Proposed", {})
export const AwaitingApproval = Schema.TaggedStruct("AwaitingApproval", {
  expiresAt: Schema.optional(Millis),
  /** What a reviewer model said of the call, for the person deciding (absent without a reviewer, and in 0.1 documents). */
  review: Schema.optional(Review),
  /** Who may decide it (absent: whoever calls `approve` / `reject`). */
  policy: Schema.optional(Policy),
  /** The yeses given so far towards the policy's quorum. */
  votes: Schema.optional(Schema.Array(Vote))
})
export const Scheduled = Schema.TaggedStruct("Scheduled", {
  at: Millis,
  /** Who may run it early or cancel it (absent: whoever calls `approve` / `reject`). */
  policy: Schema.optional(Policy),
  /** The yeses given so far towards running it early under a quorum. */
  votes: Schema.optional(Schema.Array(Vote))
})
export const Approved = Schema.TaggedStruct("Approved", {
  /** Replacement arguments (JSON text) chosen by the person who approved. */
  editedArguments: Schema.optional(Schema.String),
  /** The approval request's deadline, kept so that an approval resumed after it fails closed. */
  expiresAt: Schema.optional(Millis),
  /** When the call was scheduled for, if a person approved it early: a refused edit puts it back. */
  scheduledAt: Schema.optional(Millis),
  /** Who approved it and when, if recorded (kept through Running, Completed, Failed). */
  decision: Schema.optional(Decision),
  /** The policy it was approved under: the reducer runs it only if `decision` satisfies it. */
  policy: Schema.optional(Policy)
})
/**
 * A running call's request for a person's input (an MCP server's elicitation): what is asked, the
 * JSON Schema the answer must match, and when it is answered "cancel" if nobody answered. It lives on
 * the `Running` status while it waits, so the stored state and the turn's events show it.
 */
export const InputRequest = Schema.Struct({
  /** Unique while it waits (e.g. `elicitation-3`); the answer names it. */
  id: Schema.NonEmptyString,
  /** Who asks (an MCP server's name). */
  from: Schema.String,
  /** What is asked, to show to the person. */
  message: Schema.String,
  /** The JSON Schema the answer's content must match. */
  requestedSchema: Json,
  /** When it is answered "cancel" if nobody answered (epoch millis). */
  deadline: Millis
})
export type InputRequest = typeof InputRequest.Type

export const Running = Schema.TaggedStruct("Running", {
  editedArguments: Schema.optional(Schema.String),
  /** Which run of the call this is (absent: the first); only idempotent tools run again after a crash. */
  attempt: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  decision: Schema.optional(Decision),
  /**
   * The requests for a person's input the call waits on now (absent when none, and in every document
   * written by 0.1). Held by the live connection: after a crash they are lost with it (see `Turn`).
   */
  inputRequests: Schema.optional(Schema.Array(InputRequest))
})
export const Completed = Schema.TaggedStruct("Completed", {
  result: Json,
  /**
   * Files (images…) the result shows the model as files, not as text: `result` mentions each
   * one in its place. Absent in results without files (and in every document written by 0.1).
   */
  files: Schema.optional(Schema.Array(FilePart)),
  editedArguments: Schema.optional(Schema.String),
  decision: Schema.optional(Decision)
})
export const Failed = Schema.TaggedStruct("Failed", {
  error: Json,
  /**
   * Files (images…) the failure shows the model as files, as `Completed`'s do: `error` mentions
   * each one in its place. Absent in failures without files (and in every document written by 0.1).
   */
  files: Schema.optional(Schema.Array(FilePart)),
  editedArguments: Schema.optional(Schema.String),
  decision: Schema.optional(Decision)
})
export const Rejected = Schema.TaggedStruct("Rejected", {
  reason: Schema.optional(Schema.String),
  by: Schema.Literals(["user", "policy"]),
  decision: Schema.optional(Decision)
})

/**
 * The approval request's own deadline passed (new in 0.2: 0.1 recorded this as a rejection by
 * policy, and a 0.1 document keeps saying so). `approvedLate`: a person approved it, after the
 * deadline; `decision`: who, when recorded.
 */
export const Expired = Schema.TaggedStruct("Expired", {
  /** The deadline; absent when it was no valid time (state built by hand), which counts as passed. */
  expiresAt: Schema.optional(Millis),
  approvedLate: Schema.optional(Schema.Boolean),
  decision: Schema.optional(Decision),
  /** The yeses a quorum had when the deadline passed (absent when it had none, and in documents written before they were kept). */
  votes: Schema.optional(Schema.Array(Vote))
})

/** Who withdrew a call: the one who asked for it, a newer user message (steering), or an operator. */
export const CancelledBy = Schema.Literals(["requester", "user-message", "operator"])
export type CancelledBy = typeof CancelledBy.Type

/**
 * The call was withdrawn before it ran (new in 0.2). `reason` is shown to the model; `cancellation`
 * (who and when) is audit only, like `decision` (who approved it, if anyone had).
 */
export const Cancelled = Schema.TaggedStruct("Cancelled", {
  by: CancelledBy,
  reason: Schema.optional(Schema.String),
  cancellation: Schema.optional(Decision),
  decision: Schema.optional(Decision),
  /** The yeses a quorum had when it was withdrawn (absent when it had none, and in documents written before they were kept). */
  votes: Schema.optional(Schema.Array(Vote))
})

export const ToolCallStatus = Schema.Union([
  Proposed,
  AwaitingApproval,
  Scheduled,
  Approved,
  Running,
  Completed,
  Failed,
  Rejected,
  Expired,
  Cancelled
])
export type ToolCallStatus = typeof ToolCallStatus.Type

// ---------------------------------------------------------------------------
// Parts
// ---------------------------------------------------------------------------

const ProviderMetadata = Schema.Record(Schema.String, Json)

export const TextPart = Schema.TaggedStruct("Text", { text: Schema.String })
export type TextPart = typeof TextPart.Type

export const ReasoningPart = Schema.TaggedStruct("Reasoning", {
  text: Schema.String,
  /** Provider signature or encrypted content that must be sent back unchanged. */
  signature: Schema.optional(Schema.String),
  providerMetadata: Schema.optional(ProviderMetadata)
})
export type ReasoningPart = typeof ReasoningPart.Type

/**
 * What a call waiting for a person is decided under, fixed by the reducer when its strategy sent it
 * to a person (see `DecisionPolicy`): the policy every approval of it must meet and, for a call
 * deferred under it, the time it may run at without anyone's approval. It lives on the call, not on
 * a status, so that no status written afterwards drops it.
 */
export const DecidedUnder = Schema.Struct({
  policy: Policy,
  /** When the call runs without a decision (it was deferred to then); absent: only approvals that meet `policy` run it. */
  at: Schema.optional(Millis)
})
export type DecidedUnder = typeof DecidedUnder.Type

export const ToolCallPart = Schema.TaggedStruct("ToolCall", {
  id: Schema.NonEmptyString,
  name: Schema.String,
  /**
   * The arguments as the model sent them (JSON text, possibly invalid), unless they gave a key
   * twice: then the canonical text of what they decode to (each key once, with its last value,
   * as `JSON.parse` reads it), which the person, the policy, the model and the handler all see.
   */
  arguments: Schema.String,
  /** The arguments exactly as the model sent them, when `arguments` is their canonical text (audit only: never sent or run). */
  rawArguments: Schema.optional(Schema.String),
  status: ToolCallStatus,
  /**
   * The decision policy the call is decided under, fixed when it was sent to a person (absent for calls
   * sent to nobody, and in documents written before it was kept here: then its waiting status's policy).
   */
  decidedUnder: Schema.optional(DecidedUnder)
})
export type ToolCallPart = typeof ToolCallPart.Type

export const Part = Schema.Union([TextPart, ReasoningPart, FilePart, ToolCallPart])
export type Part = typeof Part.Type

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

export const FinishReason = Schema.Literals(["stop", "tool-calls", "length", "content-filter", "error", "other"])
export type FinishReason = typeof FinishReason.Type

export const Role = Schema.Literals(["system", "user", "assistant"])
export type Role = typeof Role.Type

/** A user message held back until the pause of the response it waits on is resolved (see `Steering`). */
export const QueuedMessage = Schema.Struct({
  parts: Schema.Array(Schema.Union([TextPart, FilePart])),
  /** Who sent it (kept for four-eyes when it is delivered); absent in documents written before it was kept. */
  sender: Schema.optional(Identity),
  /** The message's own provider metadata (an endpoint's message id, say), delivered with it. */
  providerMetadata: Schema.optional(ProviderMetadata)
})
export type QueuedMessage = typeof QueuedMessage.Type

// ---------------------------------------------------------------------------
// Grants (standing approvals recorded in the messages, never sent to the model)
// ---------------------------------------------------------------------------

/** Who revoked a grant, when, and why: kept on the grant, which then settles nothing more. */
export const GrantRevocation = Schema.Struct({ by: Schema.String, at: Millis, reason: Schema.optional(Schema.String) })
export type GrantRevocation = typeof GrantRevocation.Type

/** Whom a grant is for beyond its conversation's messages: a conversation id, a user, or both (each must match the turn's). */
export const GrantScope = Schema.Struct({ conversation: Schema.optional(Schema.String), user: Schema.optional(Schema.String) })
export type GrantScope = typeof GrantScope.Type

/**
 * A standing approval: calls of tool `tool` (a name, or a pattern with `*`) whose
 * canonical arguments satisfy `where` (a predicate as data, see `Grant`), within
 * `scope`, proposed after the message holding the grant and before `expiresAt`,
 * run without a person. Lives on the message that was last when it was made.
 */
export const Grant = Schema.Struct({
  id: Schema.NonEmptyString,
  tool: Schema.String,
  where: Schema.optional(Json),
  scope: Schema.optional(GrantScope),
  /** Who made it (recorded as `decision.by` on the calls it settles). */
  by: Schema.String,
  /** When it was made (epoch ms). */
  at: Millis,
  /** When it stops settling calls (epoch ms, exclusive). */
  expiresAt: Millis,
  reason: Schema.optional(Schema.String),
  revoked: Schema.optional(GrantRevocation)
})
export type Grant = typeof Grant.Type

export const Message = Schema.Struct({
  role: Role,
  parts: Schema.Array(Part),
  /**
   * On a paused model response only: user messages that came while its calls were pending, to be
   * answered once every call of the response is resolved (new in 0.2; see `Steering`).
   */
  queued: Schema.optional(Schema.Array(QueuedMessage)),
  /** Usage of the model response this assistant message holds. */
  usage: Schema.optional(Usage),
  finishReason: Schema.optional(FinishReason),
  providerMetadata: Schema.optional(ProviderMetadata),
  /** Who sent this user message: the requester of the calls its turn proposes (four-eyes). Never sent to the model. */
  sender: Schema.optional(Identity),
  /** Grants made while this was the last message (they cover only calls of later messages); never sent to the model. */
  grants: Schema.optional(Schema.Array(Grant))
})
export type Message = typeof Message.Type
