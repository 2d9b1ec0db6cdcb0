/**
 * Every typed error chat-ts raises, in one module.
 *
 * Errors raised after a turn changed its state carry the latest `messages`,
 * so tool calls that already ran are never lost or run again: store or resume
 * from `error.messages` when it is present (after a `ConcurrentModification`,
 * reload the conversation instead: another writer owns it now).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Message } from "../internal/schema.js"

/**
 * The most characters of a defect's text an error carries (`ToolHandlerDefect`,
 * `RefreshToolsDefect`): 10,000. A longer text (a 5 MB `Effect.die`) is cut, with a marker
 * saying how many characters were left out; the log and the state never held more.
 *
 * @category constants
 * @since 0.3.0
 */
export const maxDetailChars = 10_000

/**
 * `text` at most `maxDetailChars` long plus a marker saying how much was cut (a surrogate pair is never split).
 *
 * @category utils
 * @since 0.3.0
 */
export const boundDetail = (text: string): string => {
  if (text.length <= maxDetailChars) return text
  const code = text.charCodeAt(maxDetailChars - 1)
  const end = code >= 0xd800 && code <= 0xdbff ? maxDetailChars - 1 : maxDetailChars
  return `${text.slice(0, end)}… (${text.length - end} more characters cut)`
}

const messagesField = { messages: Schema.optional(Schema.Array(Message)) }

// ---------------------------------------------------------------------------
// Model errors (raised by providers through the LanguageModel contract)
// ---------------------------------------------------------------------------

/**
 * The provider refused the request because of a rate limit or quota (HTTP 429). Retryable.
 *
 * @category schemas
 * @since 0.1.0
 */
export class RateLimited extends Schema.TaggedError<RateLimited>("@chat-ts/RateLimited")("RateLimited", {
  message: Schema.String,
  /** How long the provider asked us to wait, in milliseconds, if it said. */
  retryAfterMillis: Schema.optional(Schema.Number),
  /** The provider's error code, e.g. `insufficient_quota` (which waiting does not fix). */
  code: Schema.optional(Schema.String),
  ...messagesField
}) {}

/**
 * The provider failed on its side (HTTP 5xx). Retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class ServerError extends Schema.TaggedError<ServerError>("@chat-ts/ServerError")("ServerError", {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  ...messagesField
}) {}

/**
 * The provider could not be reached, or the connection broke (also a stream cut mid-way). Retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class NetworkError extends Schema.TaggedError<NetworkError>("@chat-ts/NetworkError")("NetworkError", {
  message: Schema.String,
  ...messagesField
}) {}

/**
 * The credentials were missing or refused (HTTP 401/403). Not retryable.
 *
 * @category errors
 * @since 0.1.0
 */
export class AuthenticationError extends Schema.TaggedError<AuthenticationError>("@chat-ts/AuthenticationError")(
  "AuthenticationError",
  {
    message: Schema.String,
    status: Schema.optional(Schema.Number),
    ...messagesField
  }
) {}

/**
 * The provider rejected the request as invalid (HTTP 400), with its own message. Not retryable.
 *
 * @category schemas
 * @since 0.1.0
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>("@chat-ts/InvalidRequest")("InvalidRequest", {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  code: Schema.optional(Schema.String),
  param: Schema.optional(Schema.String),
  ...messagesField
}) {}

/**
 * The conversation does not fit the model's context window. Not retryable as is.
 *
 * @category schemas
 * @since 0.1.0
 */
export class ContextLengthExceeded extends Schema.TaggedError<ContextLengthExceeded>("@chat-ts/ContextLengthExceeded")(
  "ContextLengthExceeded",
  {
    message: Schema.String,
    ...messagesField
  }
) {}

/**
 * The provider answered with something that could not be understood.
 *
 * @category schemas
 * @since 0.1.0
 */
export class MalformedResponse extends Schema.TaggedError<MalformedResponse>("@chat-ts/MalformedResponse")(
  "MalformedResponse",
  {
    message: Schema.String,
    ...messagesField
  }
) {}

/**
 * Any error a `LanguageModel` or `EmbeddingModel` may fail with; as a Schema, the union of their
 * classes (for shells that record a model call's failure, as `@chat-ts/workflow` does).
 *
 * @category errors
 * @since 0.1.0
 */
export const ModelError = Schema.Union([
  RateLimited,
  ServerError,
  NetworkError,
  AuthenticationError,
  InvalidRequest,
  ContextLengthExceeded,
  MalformedResponse
])

/**
 * Any error a `LanguageModel` or `EmbeddingModel` may fail with.
 *
 * @category errors
 * @since 0.1.0
 */
export type ModelError =
  | RateLimited
  | ServerError
  | NetworkError
  | AuthenticationError
  | InvalidRequest
  | ContextLengthExceeded
  | MalformedResponse

/** Error codes of a 429 that waiting does not fix (the account has no quota left). */
const notRetryableCodes: ReadonlySet<string> = new Set(["insufficient_quota", "billing_hard_limit_reached"])

/**
 * Whether a model error is worth retrying (rate limits other than exhausted quota, server and network errors).
 *
 * @category guards
 * @since 0.1.0
 */
export const isRetryable = (error: ModelError): boolean =>
  (error._tag === "RateLimited" && (error.code === undefined || !notRetryableCodes.has(error.code))) ||
  error._tag === "ServerError" || error._tag === "NetworkError"

// ---------------------------------------------------------------------------
// Turn errors
// ---------------------------------------------------------------------------

/**
 * The turn used all of its model calls (`maxSteps`) without a final answer.
 *
 * @category schemas
 * @since 0.1.0
 */
export class StepLimitReached extends Schema.TaggedError<StepLimitReached>("@chat-ts/StepLimitReached")(
  "StepLimitReached",
  {
    maxSteps: Schema.Number,
    messages: Schema.Array(Message)
  }
) {
  override get message() {
    return `The turn reached its limit of ${this.maxSteps} model calls without a final answer.`
  }
}

/**
 * Input interrupted more model calls in one turn than `maxInputRestarts` allows. Nothing was lost:
 * `messages` end with that input (after the answer it cut short); stream them again to have it answered.
 *
 * @category schemas
 * @since 0.3.0
 */
export class InputRestartLimitReached extends Schema.TaggedError<InputRestartLimitReached>("@chat-ts/InputRestartLimitReached")(
  "InputRestartLimitReached",
  {
    maxInputRestarts: Schema.Number,
    messages: Schema.Array(Message)
  }
) {
  override get message() {
    return `Input interrupted the model more than ${this.maxInputRestarts} times in one turn; the input is in the messages, unanswered.`
  }
}

/**
 * A tool handler died (a defect, not a typed failure). The call is recorded as failed in `messages`.
 *
 * @category schemas
 * @since 0.1.0
 */
export class ToolHandlerDefect extends Schema.TaggedError<ToolHandlerDefect>("@chat-ts/ToolHandlerDefect")(
  "ToolHandlerDefect",
  {
    id: Schema.String,
    name: Schema.String,
    detail: Schema.String,
    messages: Schema.Array(Message)
  }
) {
  override get message() {
    return `The handler of tool '${this.name}' (call ${this.id}) died: ${this.detail}`
  }
}

/**
 * The final answer did not decode with the schema given to `completeStructured`.
 *
 * @category errors
 * @since 0.1.0
 */
export class StructuredOutputError extends Schema.TaggedError<StructuredOutputError>(
  "@chat-ts/StructuredOutputError"
)("StructuredOutputError", {
  detail: Schema.String,
  text: Schema.String,
  messages: Schema.Array(Message)
}) {
  override get message() {
    return `The model's final answer does not match the requested schema: ${this.detail}`
  }
}

// ---------------------------------------------------------------------------
// Resume and input errors
// ---------------------------------------------------------------------------

/**
 * No tool call with this id exists in the messages.
 *
 * @category schemas
 * @since 0.1.0
 */
export class UnknownToolCall extends Schema.TaggedError<UnknownToolCall>("@chat-ts/UnknownToolCall")(
  "UnknownToolCall",
  { id: Schema.String }
) {
  override get message() {
    return `No tool call with id '${this.id}' exists in these messages.`
  }
}

/**
 * The call was already decided or finished (approving it again would run it twice).
 *
 * @category schemas
 * @since 0.1.0
 */
export class ToolCallAlreadyResolved extends Schema.TaggedError<ToolCallAlreadyResolved>(
  "@chat-ts/ToolCallAlreadyResolved"
)("ToolCallAlreadyResolved", { id: Schema.String, status: Schema.String }) {
  override get message() {
    return `Tool call '${this.id}' was already decided (status ${this.status}); it cannot be approved or rejected again.`
  }
}

/**
 * The call is not waiting for a person's decision (it has not been decided by a strategy yet).
 *
 * @category schemas
 * @since 0.1.0
 */
export class ToolCallNotAwaitingDecision extends Schema.TaggedError<ToolCallNotAwaitingDecision>(
  "@chat-ts/ToolCallNotAwaitingDecision"
)("ToolCallNotAwaitingDecision", { id: Schema.String, status: Schema.String }) {
  override get message() {
    return `Tool call '${this.id}' is not awaiting a decision (status ${this.status}).`
  }
}

/**
 * Edited arguments given with an approval do not match the tool's parameters; nothing ran.
 *
 * @category schemas
 * @since 0.1.0
 */
export class InvalidEditedArguments extends Schema.TaggedError<InvalidEditedArguments>(
  "@chat-ts/InvalidEditedArguments"
)("InvalidEditedArguments", {
  id: Schema.String,
  name: Schema.String,
  detail: Schema.String,
  /** The messages as they were: nothing was changed or run. */
  messages: Schema.Array(Message)
}) {
  override get message() {
    return `The edited arguments of call '${this.id}' do not match the parameters of tool '${this.name}': ${this.detail}`
  }
}

/**
 * The call's decision policy does not let this decider take this decision (not one of the people
 * or roles it names, the person who asked, no identity given, an id that is not canonical, an edit
 * where a quorum is needed…), or does not let this person withdraw it (`kind: "cancel"`: only the
 * person who asked, or someone it lets reject). Nothing changed: the call waits as it did.
 *
 * @category schemas
 * @since 0.3.0
 */
export class DecisionNotAllowed extends Schema.TaggedError<DecisionNotAllowed>("@chat-ts/DecisionNotAllowed")(
  "DecisionNotAllowed",
  {
    id: Schema.String,
    /** The decider's id, when one was given. */
    by: Schema.optional(Schema.String),
    /** What was refused: a decision, or withdrawing the call (`cancel`: `Messages.cancel`, steering). */
    kind: Schema.Literals(["approve", "edit", "reject", "cancel"]),
    detail: Schema.String
  }
) {
  override get message() {
    return `${this.by === undefined ? "A decider without an identity" : `'${this.by}'`} may not ${this.kind} tool call '${this.id}': ${this.detail}`
  }
}

/**
 * This person already approved the call towards its quorum: a second yes by the same person does not count. Nothing changed.
 *
 * @category schemas
 * @since 0.3.0
 */
export class DuplicateVote extends Schema.TaggedError<DuplicateVote>("@chat-ts/DuplicateVote")(
  "DuplicateVote",
  { id: Schema.String, by: Schema.String }
) {
  override get message() {
    return `'${this.by}' already approved tool call '${this.id}'; its quorum needs approvals from other people.`
  }
}

/**
 * New input was added while tool calls still wait for a decision or a time.
 *
 * @category schemas
 * @since 0.1.0
 */
export class PendingToolCalls extends Schema.TaggedError<PendingToolCalls>("@chat-ts/PendingToolCalls")(
  "PendingToolCalls",
  { ids: Schema.Array(Schema.String), ...messagesField }
) {
  override get message() {
    return `Tool calls ${this.ids.join(", ")} are still pending: approve, reject or cancel them, or append with { supersede } (or Steering.steer) to cancel them.`
  }
}

/**
 * A conversation could not be encoded as JSON (a value JSON cannot hold, such as a BigInt, a cycle or a `NaN` time).
 *
 * @category errors
 * @since 0.1.0
 */
export class StateEncodeError extends Schema.TaggedError<StateEncodeError>("@chat-ts/StateEncodeError")(
  "StateEncodeError",
  { detail: Schema.String, ...messagesField }
) {
  override get message() {
    return `The conversation could not be encoded as JSON: ${this.detail}`
  }
}

/**
 * A secret (for example `SignedState`'s signing key) is missing or too weak to use.
 *
 * @category schemas
 * @since 0.1.0
 */
export class InvalidSecret extends Schema.TaggedError<InvalidSecret>("@chat-ts/InvalidSecret")(
  "InvalidSecret",
  { detail: Schema.String }
) {
  override get message() {
    return `The secret cannot be used: ${this.detail}`
  }
}

/**
 * What `SignedState.verify` was told to expect is not valid: `expected` missing, a
 * `conversationId` that is not a non-empty string, or an `atLeastVersion` that is not a safe
 * non-negative integer (a "latest version" lookup that missed gives `undefined` or `NaN`). No
 * document is accepted against it: the check fails closed instead of letting a replay through.
 *
 * @category schemas
 * @since 0.3.0
 */
export class InvalidBinding extends Schema.TaggedError<InvalidBinding>("@chat-ts/InvalidBinding")(
  "InvalidBinding",
  { detail: Schema.String }
) {
  override get message() {
    return `What the signed document is checked against is not valid, so no document is accepted: ${this.detail}`
  }
}

/**
 * A stored conversation could not be decoded: malformed, tampered with, or of an unknown version.
 *
 * @category errors
 * @since 0.1.0
 */
export class StateDecodeError extends Schema.TaggedError<StateDecodeError>("@chat-ts/StateDecodeError")(
  "StateDecodeError",
  { detail: Schema.String }
) {
  override get message() {
    return `The stored conversation could not be decoded: ${this.detail}`
  }
}

/**
 * Two toolkits given to one chat own a tool of the same name (at `Chat.make`, or in the tools `refreshTools` read).
 *
 * @category schemas
 * @since 0.1.0
 */
export class DuplicateToolName extends Schema.TaggedError<DuplicateToolName>("@chat-ts/DuplicateToolName")(
  "DuplicateToolName",
  { name: Schema.String, ...messagesField }
) {
  override get message() {
    return `The tool name '${this.name}' is owned by more than one toolkit of this chat.`
  }
}

/**
 * A tool has no handler in the context it is served from: its toolkit's layer
 * (`toolkit.toLayer`) was not provided to `Chat.make`, nor given in the
 * `handlers` of the `ToolSet` that `refreshTools` read. Raised by `Chat.make`,
 * or by a turn before the model is called (with the messages of what already ran).
 *
 * @category schemas
 * @since 0.3.0
 */
export class MissingToolHandler extends Schema.TaggedError<MissingToolHandler>("@chat-ts/MissingToolHandler")(
  "MissingToolHandler",
  { tool: Schema.String, ...messagesField }
) {
  override get message() {
    return `Tool '${this.tool}' has no handler: provide its toolkit's layer (toolkit.toLayer) to Chat.make, or give it in the handlers of the ToolSet that refreshTools reads.`
  }
}

/**
 * `refreshTools` died (a defect, not a typed failure: it threw, or gave
 * something that is not a `ToolSet`). The turn stops before the model is
 * called; `messages` holds what already ran.
 *
 * @category schemas
 * @since 0.3.0
 */
export class RefreshToolsDefect extends Schema.TaggedError<RefreshToolsDefect>("@chat-ts/RefreshToolsDefect")(
  "RefreshToolsDefect",
  { detail: Schema.String, ...messagesField }
) {
  override get message() {
    return `Reading the chat's tools (refreshTools) died: ${this.detail}`
  }
}

// ---------------------------------------------------------------------------
// Grant errors (see `Grant`)
// ---------------------------------------------------------------------------

/**
 * A grant cannot be made: its predicate cannot be evaluated, its tool pattern or id is not valid, or its times are not valid (NaN, past).
 *
 * @category schemas
 * @since 0.3.0
 */
export class InvalidGrant extends Schema.TaggedError<InvalidGrant>("@chat-ts/InvalidGrant")("InvalidGrant", {
  id: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Grant '${this.id}' is not valid: ${this.detail}`
  }
}

/**
 * A grant with this id is already in the messages (ids are unique within a conversation).
 *
 * @category schemas
 * @since 0.3.0
 */
export class DuplicateGrant extends Schema.TaggedError<DuplicateGrant>("@chat-ts/DuplicateGrant")("DuplicateGrant", {
  id: Schema.String
}) {
  override get message() {
    return `A grant with id '${this.id}' already exists in these messages.`
  }
}

/**
 * No grant with this id is in the messages.
 *
 * @category schemas
 * @since 0.3.0
 */
export class UnknownGrant extends Schema.TaggedError<UnknownGrant>("@chat-ts/UnknownGrant")("UnknownGrant", {
  id: Schema.String
}) {
  override get message() {
    return `No grant with id '${this.id}' exists in these messages.`
  }
}

/**
 * The grant was revoked: it settles nothing and cannot be revoked again.
 *
 * @category schemas
 * @since 0.3.0
 */
export class GrantRevoked extends Schema.TaggedError<GrantRevoked>("@chat-ts/GrantRevoked")("GrantRevoked", {
  id: Schema.String,
  by: Schema.String,
  at: Schema.Number
}) {
  override get message() {
    return `Grant '${this.id}' was revoked by ${this.by} at ${new Date(this.at).toISOString()}.`
  }
}

/**
 * A grant cannot settle this call: unknown, revoked, expired, made after the
 * call was proposed, or not covering its tool, arguments or scope. The call
 * waits for a person instead.
 *
 * @category schemas
 * @since 0.3.0
 */
export class GrantNotApplicable extends Schema.TaggedError<GrantNotApplicable>("@chat-ts/GrantNotApplicable")(
  "GrantNotApplicable",
  {
    grant: Schema.String,
    call: Schema.String,
    reason: Schema.Literals(["unknown", "revoked", "expired", "not-yet-valid", "proposed-before", "tool", "arguments", "scope"]),
    detail: Schema.String
  }
) {
  override get message() {
    return `Grant '${this.grant}' cannot settle call '${this.call}': ${this.detail}`
  }
}

/**
 * Errors of `Messages.grant`.
 *
 * @category errors
 * @since 0.3.0
 */
export type GrantError = InvalidGrant | DuplicateGrant

/**
 * Errors of `Messages.revokeGrant`.
 *
 * @category errors
 * @since 0.3.0
 */
export type RevokeGrantError = UnknownGrant | GrantRevoked | InvalidGrant

/**
 * Errors of resolving a pending call with `Messages.approve` / `Messages.reject`.
 *
 * @category errors
 * @since 0.1.0
 */
export type ResolveError =
  | UnknownToolCall
  | ToolCallAlreadyResolved
  | ToolCallNotAwaitingDecision
  | InvalidEditedArguments
  | DecisionNotAllowed
  | DuplicateVote

/**
 * A refused decision as a front door (an inbox, a UI endpoint) answers it: the person may not take
 * it (`forbidden`), the edit does not fit the tool (`invalid_edit`), there is no such call
 * (`not_found`), or the call no longer waits for a decision (`already_decided`).
 *
 * @category models
 * @since 0.3.0
 */
export interface Refusal {
  readonly kind: "forbidden" | "invalid_edit" | "not_found" | "already_decided"
  /** The id of the call the decision was about. */
  readonly id: string
  /** One line for the person: the policy's reason (`forbidden`), else what is wrong. */
  readonly message: string
  /** The edit's problems, one per line (`invalid_edit`); empty otherwise. */
  readonly problems: ReadonlyArray<string>
  /** What the call became (`already_decided`: its status tag). */
  readonly status?: string | undefined
}

/**
 * What kind of refusal `error` is, with the edit's problem lines: each front door maps the kind to
 * its own error or status (403, 422, 404, 409), so all of them refuse the same decisions alike.
 *
 * @category utils
 * @since 0.3.0
 */
export const refusalOf = (error: ResolveError): Refusal => {
  switch (error._tag) {
    case "DecisionNotAllowed":
    case "DuplicateVote":
      return { kind: "forbidden", id: error.id, message: error.message, problems: [] }
    case "InvalidEditedArguments":
      return {
        kind: "invalid_edit",
        id: error.id,
        message: `the edited arguments do not fit the parameters of '${error.name}'`,
        problems: error.detail.split("\n").map((line) => line.trimEnd()).filter((line) => line.trim() !== "")
      }
    case "UnknownToolCall":
      return { kind: "not_found", id: error.id, message: `no call '${error.id}' in this conversation`, problems: [] }
    case "ToolCallAlreadyResolved":
    case "ToolCallNotAwaitingDecision":
      return {
        kind: "already_decided",
        id: error.id,
        message: `the call '${error.id}' no longer waits for a decision (${error.status})`,
        problems: [],
        status: error.status
      }
  }
}

/**
 * The errors the loop itself stops a turn with: the model failed, too many steps, a handler's defect, an edit that does not decode, too many restarts by input.
 *
 * @category errors
 * @since 0.3.0
 */
export type LoopError = ModelError | StepLimitReached | ToolHandlerDefect | InvalidEditedArguments | InputRestartLimitReached

/**
 * The loop's errors, under their former name.
 *
 * @deprecated Use `LoopError` (this name is easily taken for `Chat.TurnError`, which is `TurnFailure`).
 * @category errors
 * @since 0.1.0
 */
export type TurnError = LoopError

/**
 * What a `checkpoint` may fail with: the store failed, another writer saved first, another worker
 * took the lease, or the state could not be encoded. The turn then stops with it (after the calls
 * already running finished), and the error carries the latest messages.
 *
 * @category errors
 * @since 0.3.0
 */
export type CheckpointError = StoreError | ConcurrentModification | ConversationBusy | StateEncodeError

/**
 * Everything a turn of a `Chat` (`complete`, `resume`, `stream`) may fail with (`Chat.TurnError`).
 *
 * @category models
 * @since 0.3.0
 */
export type TurnFailure = LoopError | PendingToolCalls | CheckpointError | InvalidSteeringMessage

/**
 * Every error of chat-ts.
 *
 * @category errors
 * @since 0.1.0
 */
export type ChatError =
  | LoopError
  | InvalidSteeringMessage
  | GrantError
  | RevokeGrantError
  | GrantNotApplicable
  | StructuredOutputError
  | ResolveError
  | PendingToolCalls
  | StateDecodeError
  | StateEncodeError
  | InvalidSecret
  | InvalidBinding
  | DuplicateToolName
  | InvalidToolSchema
  | MissingToolHandler
  | RefreshToolsDefect
  | StoreError
  | ConcurrentModification
  | ConversationBusy
  | ConversationNotFound
  | CorruptConversation

/**
 * Returns a copy of an error that carries the given messages (for errors that
 * have the field: core's, and any `Schema.TaggedError` declaring `messages`).
 *
 * @category combinators
 * @since 0.1.0
 */
export const withMessages = <E extends { readonly _tag: string }>(
  error: E,
  messages: ReadonlyArray<Message>
): E => {
  const Ctor = error.constructor as (new(props: object) => E) & { readonly fields?: { readonly [key: string]: unknown } }
  if (!messagesCarriers.has(error._tag) && !(typeof Ctor.fields === "object" && Ctor.fields !== null && "messages" in Ctor.fields)) {
    return error
  }
  // Copy the fields by name: a spread would miss `message`, which `Error` keeps non-enumerable.
  const props: { [key: string]: unknown } = {}
  for (const key of Object.keys(Ctor.fields ?? {})) {
    const value = (error as unknown as { readonly [key: string]: unknown })[key]
    if (key !== "_tag" && value !== undefined) props[key] = value
  }
  return new Ctor({ ...props, messages })
}

const messagesCarriers: ReadonlySet<string> = new Set([
  "RateLimited",
  "ServerError",
  "NetworkError",
  "AuthenticationError",
  "InvalidRequest",
  "ContextLengthExceeded",
  "MalformedResponse",
  "InvalidEditedArguments",
  "PendingToolCalls",
  "StateEncodeError",
  "StoreError",
  "ConcurrentModification",
  "DuplicateToolName",
  "InvalidToolSchema",
  "MissingToolHandler",
  "RefreshToolsDefect"
])

// ---------------------------------------------------------------------------
// Storage errors
// ---------------------------------------------------------------------------

/**
 * The conversation store failed (the database could not be reached, a query failed).
 *
 * @category errors
 * @since 0.1.0
 */
export class StoreError extends Schema.TaggedError<StoreError>("@chat-ts/StoreError")("StoreError", {
  detail: Schema.String,
  ...messagesField,
  /** The driver's own error (its message, its code such as PostgreSQL's SQLSTATE), when there is one. */
  cause: Schema.optional(Schema.Defect()),
  /**
   * `true` when the failure is worth retrying as it is (a lock held too long, a connection
   * lost): nothing was decided wrongly, try the same work again later. Absent otherwise.
   */
  retryable: Schema.optional(Schema.Boolean)
}) {
  override get message() {
    return `The conversation store failed: ${this.detail}${this.retryable === true ? " (worth retrying)" : ""}`
  }
}

/**
 * Whether an error is a `StoreError` that says it is worth retrying (`retryable: true`).
 *
 * @category guards
 * @since 0.3.0
 */
export const isRetryableStoreError = (error: unknown): error is StoreError =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "StoreError" &&
  "retryable" in error && error.retryable === true

/**
 * Someone else saved the conversation since it was loaded: reload it instead of overwriting their change.
 *
 * @category schemas
 * @since 0.1.0
 */
export class ConcurrentModification extends Schema.TaggedError<ConcurrentModification>(
  "@chat-ts/ConcurrentModification"
)("ConcurrentModification", {
  id: Schema.String,
  expectedVersion: Schema.Number,
  actualVersion: Schema.optional(Schema.Number),
  ...messagesField
}) {
  override get message() {
    return this.actualVersion === undefined
      ? `Conversation '${this.id}' was expected at version ${this.expectedVersion} but does not exist.`
      : `Conversation '${this.id}' is at version ${this.actualVersion}, not ${this.expectedVersion}: it changed since it was loaded.`
  }
}

/**
 * A tool cannot be declared to the model: its name is not 1–64 letters,
 * digits, `_` or `-`, its parameters are not an object at the top, they
 * cannot be written as JSON Schema, or the tool asks for `strict: true` and
 * its parameters cannot be strict. Raised by `Chat.make`, before any request.
 *
 * @category schemas
 * @since 0.1.0
 */
export class InvalidToolSchema extends Schema.TaggedError<InvalidToolSchema>("@chat-ts/InvalidToolSchema")(
  "InvalidToolSchema",
  { tool: Schema.String, detail: Schema.String, ...messagesField }
) {
  override get message() {
    return `Tool '${this.tool}' cannot be declared to the model: ${this.detail}`
  }
}

/** Epoch milliseconds as an ISO date, or as the number when no `Date` can hold it. */
const isoOf = (millis: number): string => {
  const date = new Date(millis)
  return Number.isNaN(date.getTime()) ? `${millis} (epoch ms)` : date.toISOString()
}

/**
 * The conversation's lease is not this run's: another run holds it (another worker, or another
 * resume with the same owner in this process; `expiresAt` says until when), or none does (no
 * `expiresAt`: this run's lease was released or expired). From
 * `acquire`, nothing was run or changed; from a save or a renewal under a lease, that save or
 * renewal did not happen, and the turn stops.
 *
 * @category schemas
 * @since 0.1.0
 */
export class ConversationBusy extends Schema.TaggedError<ConversationBusy>("@chat-ts/ConversationBusy")(
  "ConversationBusy",
  {
    id: Schema.String,
    /**
     * When the other run's lease ends unless it renews it (epoch millis, the store's clock);
     * absent when no run holds the lease now (it was released or expired).
     */
    expiresAt: Schema.optional(Schema.Number)
  }
) {
  override get message() {
    return this.expiresAt === undefined
      ? `Conversation '${this.id}' is not leased to this run: its lease was released or has expired, and no worker holds it now.`
      : `Conversation '${this.id}' is held by another run (another worker, or another resume in this process): its lease ends at ${isoOf(this.expiresAt)} unless renewed.`
  }
}

/**
 * No conversation with this id is stored.
 *
 * @category schemas
 * @since 0.1.0
 */
export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>("@chat-ts/ConversationNotFound")(
  "ConversationNotFound",
  { id: Schema.String }
) {
  override get message() {
    return `No conversation '${this.id}' is stored.`
  }
}

/**
 * A stored conversation's data is damaged (a malformed column, a document that does not decode): nothing was loaded.
 *
 * @category schemas
 * @since 0.1.0
 */
export class CorruptConversation extends Schema.TaggedError<CorruptConversation>("@chat-ts/CorruptConversation")(
  "CorruptConversation",
  { id: Schema.String, detail: Schema.String }
) {
  override get message() {
    return `The stored conversation '${this.id}' is damaged: ${this.detail}`
  }
}

// ---------------------------------------------------------------------------
// Notifications
// ---------------------------------------------------------------------------

/**
 * A `Notifier` could not deliver a notification (the receiver refused it, or could not be reached).
 *
 * @category schemas
 * @since 0.3.0
 */
export class NotificationFailed extends Schema.TaggedError<NotificationFailed>("@chat-ts/NotificationFailed")(
  "NotificationFailed",
  {
    /** The notification's id. */
    id: Schema.String,
    detail: Schema.String,
    /** The receiver's HTTP status, when it answered. */
    status: Schema.optional(Schema.Number),
    /** Whether sending it again may work (a 5xx, a timeout, a network error); a 4xx other than 408 and 429 is not. */
    retryable: Schema.Boolean
  }
) {
  override get message() {
    return `Notification '${this.id}' was not delivered: ${this.detail}`
  }
}

/**
 * A message given to `Steering.steer` that cannot be held back for a paused turn: not a user message, or with parts other than text and files.
 *
 * @category schemas
 * @since 0.3.0
 */
export class InvalidSteeringMessage extends Schema.TaggedError<InvalidSteeringMessage>("@chat-ts/InvalidSteeringMessage")(
  "InvalidSteeringMessage",
  { detail: Schema.String }
) {
  override get message() {
    return `The message cannot steer the turn: ${this.detail}`
  }
}
