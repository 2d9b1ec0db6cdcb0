/**
 * The inbox's HTTP API, declared with `effect/http-api`'s `HttpApi`: typed
 * endpoints from Schemas (their OpenAPI document is served at `/openapi.json`).
 *
 * - `GET /api/session`: who you are and the CSRF token decisions must carry;
 * - `GET /api/pending`: pending calls across conversations (filters, pages);
 * - `GET /api/conversations/:id`: one conversation, its messages and pending calls;
 * - `POST /api/conversations/:id/calls/:callId/decision`: approve, approve with
 *   edited arguments, or reject; `If-Match: <version>` for optimistic concurrency.
 * - `POST /api/conversations/:id/grants`: make a grant for this conversation
 *   (it covers calls proposed after it only);
 * - `POST /api/conversations/:id/grants/:grantId/revoke`: revoke one.
 *
 * @since 0.1.0
 */
import * as Messages from "@chat-ts/core/Messages"
import * as Context from "effect/Context"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { Identity } from "./Approver.js"
import * as InboxError from "./InboxError.js"

/** Why a call waits: for a person's approval, or for its scheduled time. */
export const WaitReason = Schema.Literals(["approval", "scheduled"])

/** Who decided a call and when (epoch millis). */
export const Decision = Schema.Struct({ by: Schema.String, at: Schema.Number })

/** Whether the person asking may take one kind of decision on a call, and why not. */
export const Permission = Schema.Struct({ allowed: Schema.Boolean, detail: Schema.optional(Schema.String) })

/** A call waiting for a decision, with what a person needs to take it. */
export class PendingCall extends Schema.Class<PendingCall>("@chat-ts/inbox/PendingCall")({
  conversationId: Schema.String,
  /** The conversation's version: send it back as `If-Match`. */
  version: Schema.Number,
  /** When the conversation was last saved (epoch millis). */
  updatedAt: Schema.Number,
  id: Schema.String,
  tool: Schema.String,
  /** The tool's description, as the model sees it (absent when no tool of that name serves the chat). */
  description: Schema.optional(Schema.String),
  /** The arguments as the model sent them (JSON text, possibly invalid). */
  arguments: Schema.String,
  /** The tool's parameters as JSON Schema (for an edit form). */
  parameters: Schema.optional(Schema.Unknown),
  reason: WaitReason,
  /** For `approval`: when the request expires; for `scheduled`: when the call is due (epoch millis). */
  deadline: Schema.optional(Schema.Number),
  /** A reviewer model's verdict on the call (`safe`, `needs-person`, `refuse`, `unavailable`) and its reason: advice, not a decision. */
  review: Schema.optional(Messages.Review),
  /** Who may decide it: the decision policy recorded on the call (absent: anyone the `Approver` allows). */
  policy: Schema.optional(Messages.DecisionPolicy),
  /**
   * Who asked for it: the sender of the last user message it answers, when known.
   *
   * @deprecated Several people may have asked (messages delivered together): read `requesters`.
   */
  requester: Schema.optional(Schema.String),
  /**
   * Everyone who asked for it, as four-eyes counts them: the ids of the senders of the user messages it
   * answers (the messages delivered together before it), each once, in order (see `DecisionPolicy.requestersOf`).
   */
  requesters: Schema.optional(Schema.Array(Schema.String)),
  /** Whether a user message it answers has no sender: who asked is not fully known (under four-eyes nobody may approve). */
  requesterUnknown: Schema.optional(Schema.Boolean),
  /**
   * What the person asking may do with it under its decision policy (`DecisionPolicy.mayDecide` /
   * `mayWithdraw` for their identity), with why not: the page shows only these buttons. The
   * `Approver`'s own `authorize` is asked when a decision is sent, not here.
   */
  may: Schema.optional(Schema.Struct({ approve: Permission, edit: Permission, reject: Permission, cancel: Permission })),
  /** How many distinct approvals it needs (1 without a quorum). */
  quorum: Schema.optional(Schema.Number),
  /** The approvals given so far towards the quorum: who and when. */
  votes: Schema.optional(Schema.Array(Schema.Struct({ by: Schema.String, at: Schema.Number })))
}) {}

/** One page of pending calls. */
export class PendingPage extends Schema.Class<PendingPage>("@chat-ts/inbox/PendingPage")({
  items: Schema.Array(PendingCall),
  /** Give it back as `cursor` for the next page; absent on the last one. */
  cursor: Schema.optional(Schema.String)
}) {}

/** The filters and page of `GET /api/pending`. */
export const ListQuery = Schema.Struct({
  /** Only calls of this tool. */
  tool: Schema.optional(Schema.String),
  /** Only conversations paused at least this many milliseconds ago. */
  minAge: Schema.optional(Schema.NumberFromString.check(Schema.isGreaterThanOrEqualTo(0))),
  /** Only calls with a deadline before this time (epoch millis). */
  deadlineBefore: Schema.optional(Schema.NumberFromString),
  /** How many conversations to read for this page (1 to 1000, default 100). */
  limit: Schema.optional(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 }))),
  cursor: Schema.optional(Schema.String)
})

/** A call of a conversation as the page shows it: any status, with its decision when recorded. */
export class CallView extends Schema.Class<CallView>("@chat-ts/inbox/CallView")({
  id: Schema.String,
  tool: Schema.String,
  arguments: Schema.String,
  status: Schema.String,
  decision: Schema.optional(Decision),
  /** Who cancelled the call and when, for a call an operator (or the user) withdrew. */
  cancellation: Schema.optional(Decision),
  /** The result or error text once resolved: what the model reads for a rejected, expired or cancelled call. */
  outcome: Schema.optional(Schema.String)
}) {}

/** A grant of a conversation as the page shows it (see `Grant` in @chat-ts/core). */
export class GrantView extends Schema.Class<GrantView>("@chat-ts/inbox/GrantView")({
  id: Schema.String,
  tool: Schema.String,
  /** The argument predicate (absent: any arguments). */
  where: Schema.optional(Schema.Unknown),
  conversation: Schema.optional(Schema.String),
  user: Schema.optional(Schema.String),
  by: Schema.String,
  at: Schema.Number,
  expiresAt: Schema.Number,
  reason: Schema.optional(Schema.String),
  revoked: Schema.optional(Schema.Struct({ by: Schema.String, at: Schema.Number, reason: Schema.optional(Schema.String) })),
  /** Whether it covers new calls now (not revoked, not expired). */
  live: Schema.Boolean
}) {}

/** One conversation: its messages for context and its pending calls. */
export class ConversationView extends Schema.Class<ConversationView>("@chat-ts/inbox/ConversationView")({
  id: Schema.String,
  version: Schema.Number,
  updatedAt: Schema.Number,
  /** The stored messages (the `Messages` encoded form of @chat-ts/core). */
  messages: Schema.Array(Schema.Unknown),
  calls: Schema.Array(CallView),
  pending: Schema.Array(PendingCall),
  /** Its grants, live or not (revoked and expired ones stay for the audit). */
  grants: Schema.Array(GrantView)
}) {}

/** The longest a grant made in the inbox may last: 366 days. */
export const maxGrantMillis = 366 * 24 * 3_600_000

/**
 * A grant to make for this conversation: calls of `tool` (a name or `*` pattern) whose arguments
 * satisfy `where` run without a person for `expiresAfterMillis`; with `user`, only in turns for that user.
 */
export const GrantPayload = Schema.Struct({
  id: Schema.optional(Schema.NonEmptyString.check(Schema.isMaxLength(200))),
  tool: Schema.String.check(Schema.isMaxLength(64)),
  where: Schema.optional(Schema.Unknown),
  user: Schema.optional(Schema.String.check(Schema.isMaxLength(200))),
  expiresAfterMillis: Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: maxGrantMillis })),
  reason: Schema.optional(Schema.String.check(Schema.isMaxLength(4000)))
})

/** A grant payload. */
export type GrantPayload = typeof GrantPayload.Type

/** A revocation: why (optional). */
export const RevokePayload = Schema.Struct({ reason: Schema.optional(Schema.String.check(Schema.isMaxLength(4000))) })

/** A grant stored: the conversation's new version and the grant. */
export class GrantStored extends Schema.Class<GrantStored>("@chat-ts/inbox/GrantStored")({
  version: Schema.Number,
  grant: GrantView
}) {}

const guardedHeaders = {
  "if-match": Schema.optional(Schema.String),
  "x-csrf-token": Schema.optional(Schema.String),
  "sec-fetch-site": Schema.optional(Schema.String)
}

/**
 * A decision: approve (with edited arguments, a JSON value, when given), reject (with a reason the
 * model sees), or cancel: an operator withdraws the call (it never runs; the model sees it was
 * cancelled by an operator, and the reason), which is not a rejection.
 */
export const DecisionPayload = Schema.Union([
  Schema.TaggedStruct("Approve", { arguments: Schema.optional(Schema.Unknown) }),
  Schema.TaggedStruct("Reject", { reason: Schema.optional(Schema.String.check(Schema.isMaxLength(4000))) }),
  Schema.TaggedStruct("Cancel", { reason: Schema.optional(Schema.String.check(Schema.isMaxLength(4000))) })
])

/** A decision's payload. */
export type DecisionPayload = typeof DecisionPayload.Type

/** What happened after a decision: the new version and whether the turn went on. */
export class Decided extends Schema.Class<Decided>("@chat-ts/inbox/Decided")({
  version: Schema.Number,
  /**
   * `waiting`: other calls still wait for a decision; `paused` / `complete`: the turn resumed here and
   * ended so; `busy`: a worker holds the conversation and will go on; `failed`: the resumed turn failed
   * (the decision is stored).
   */
  turn: Schema.Literals(["waiting", "paused", "complete", "busy", "failed"]),
  detail: Schema.optional(Schema.String)
}) {}

/** Who you are and the token the page's decisions carry in `x-csrf-token`. */
export class Session extends Schema.Class<Session>("@chat-ts/inbox/Session")({
  identity: Identity,
  csrfToken: Schema.String
}) {}

/** The identity of the request being served, provided by the `Authentication` middleware. */
export class CurrentIdentity extends Context.Service<CurrentIdentity, Identity>()("@chat-ts/inbox/CurrentIdentity") {}

/** Finds the identity behind each request with the `Approver` (none: 401). */
export class Authentication extends HttpApiMiddleware.Service<Authentication, {
  provides: CurrentIdentity
}>()("@chat-ts/inbox/Authentication", {
  error: InboxError.Unauthorized
}) {}

/**
 * The endpoints. Every one may fail with `StoreFailure` (500) and answers 400 to a request it cannot decode
 * (`BadRequestNoContent`; `list` says why in a `BadRequest`); the middleware adds `Unauthorized` (401).
 */
export class InboxGroup extends HttpApiGroup.make("inbox")
  .add(HttpApiEndpoint.get("session", "/api/session", {
    success: Session,
    error: [HttpApiError.BadRequestNoContent, InboxError.StoreFailure]
  }))
  .add(HttpApiEndpoint.get("list", "/api/pending", {
    query: ListQuery,
    success: PendingPage,
    error: [InboxError.BadRequest, InboxError.StoreFailure]
  }))
  .add(HttpApiEndpoint.get("conversation", "/api/conversations/:id", {
    params: { id: Schema.String },
    success: ConversationView,
    error: [HttpApiError.BadRequestNoContent, InboxError.NotFound, InboxError.StoreFailure]
  }))
  .add(HttpApiEndpoint.post("decide", "/api/conversations/:id/calls/:callId/decision", {
    params: { id: Schema.String, callId: Schema.String },
    payload: DecisionPayload,
    headers: {
      "if-match": Schema.optional(Schema.String),
      "x-csrf-token": Schema.optional(Schema.String),
      "sec-fetch-site": Schema.optional(Schema.String)
    },
    success: Decided,
    error: [
      HttpApiError.BadRequestNoContent,
      InboxError.Forbidden,
      InboxError.NotFound,
      InboxError.Conflict,
      InboxError.InvalidEdit,
      InboxError.StoreFailure
    ]
  }))
  .add(HttpApiEndpoint.post("grant", "/api/conversations/:id/grants", {
    params: { id: Schema.String },
    payload: GrantPayload,
    headers: guardedHeaders,
    success: GrantStored,
    error: [
      HttpApiError.BadRequestNoContent,
      InboxError.Forbidden,
      InboxError.NotFound,
      InboxError.Conflict,
      InboxError.InvalidGrant,
      InboxError.StoreFailure
    ]
  }))
  .add(HttpApiEndpoint.post("revokeGrant", "/api/conversations/:id/grants/:grantId/revoke", {
    params: { id: Schema.String, grantId: Schema.String },
    payload: RevokePayload,
    headers: guardedHeaders,
    success: GrantStored,
    error: [HttpApiError.BadRequestNoContent, InboxError.Forbidden, InboxError.NotFound, InboxError.Conflict, InboxError.StoreFailure]
  }))
  .middleware(Authentication)
{}

/** The inbox API. */
export class Api extends HttpApi.make("chat-ts-inbox").add(InboxGroup).annotateMerge(OpenApi.annotations({
  title: "chat-ts approvals inbox",
  description: "Pending tool calls of paused chat-ts conversations, and the decisions people take on them."
})) {}
