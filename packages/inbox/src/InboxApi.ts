/**
 * The inbox's HTTP API, declared with `@effect/platform`'s `HttpApi`: typed
 * endpoints from Schemas (their OpenAPI document is served at `/openapi.json`).
 *
 * - `GET /api/session`: who you are and the CSRF token decisions must carry;
 * - `GET /api/pending`: pending calls across conversations (filters, pages);
 * - `GET /api/conversations/:id`: one conversation, its messages and pending calls;
 * - `POST /api/conversations/:id/calls/:callId/decision`: approve, approve with
 *   edited arguments, or reject; `If-Match: <version>` for optimistic concurrency.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import { Identity } from "./Approver.js"
import * as InboxError from "./InboxError.js"

/** Why a call waits: for a person's approval, or for its scheduled time. */
export const WaitReason = Schema.Literal("approval", "scheduled")

/** Who decided a call and when (epoch millis). */
export const Decision = Schema.Struct({ by: Schema.String, at: Schema.Number })

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
  deadline: Schema.optional(Schema.Number)
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
  minAge: Schema.optional(Schema.NumberFromString.pipe(Schema.nonNegative())),
  /** Only calls with a deadline before this time (epoch millis). */
  deadlineBefore: Schema.optional(Schema.NumberFromString),
  /** How many conversations to read for this page (1 to 1000, default 100). */
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))),
  cursor: Schema.optional(Schema.String)
})

/** A call of a conversation as the page shows it: any status, with its decision when recorded. */
export class CallView extends Schema.Class<CallView>("@chat-ts/inbox/CallView")({
  id: Schema.String,
  tool: Schema.String,
  arguments: Schema.String,
  status: Schema.String,
  decision: Schema.optional(Decision),
  /** The result or error text once resolved; the rejection reason for a rejected call. */
  outcome: Schema.optional(Schema.String)
}) {}

/** One conversation: its messages for context and its pending calls. */
export class ConversationView extends Schema.Class<ConversationView>("@chat-ts/inbox/ConversationView")({
  id: Schema.String,
  version: Schema.Number,
  updatedAt: Schema.Number,
  /** The stored messages (the `Messages` encoded form of @chat-ts/core). */
  messages: Schema.Array(Schema.Unknown),
  calls: Schema.Array(CallView),
  pending: Schema.Array(PendingCall)
}) {}

/** A decision: approve (with edited arguments, a JSON value, when given) or reject (with a reason the model sees). */
export const DecisionPayload = Schema.Union(
  Schema.TaggedStruct("Approve", { arguments: Schema.optional(Schema.Unknown) }),
  Schema.TaggedStruct("Reject", { reason: Schema.optional(Schema.String.pipe(Schema.maxLength(4000))) })
)

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
  turn: Schema.Literal("waiting", "paused", "complete", "busy", "failed"),
  detail: Schema.optional(Schema.String)
}) {}

/** Who you are and the token the page's decisions carry in `x-csrf-token`. */
export class Session extends Schema.Class<Session>("@chat-ts/inbox/Session")({
  identity: Identity,
  csrfToken: Schema.String
}) {}

/** The identity of the request being served, provided by the `Authentication` middleware. */
export class CurrentIdentity extends Context.Tag("@chat-ts/inbox/CurrentIdentity")<CurrentIdentity, Identity>() {}

/** Finds the identity behind each request with the `Approver` (none: 401). */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@chat-ts/inbox/Authentication", {
  failure: InboxError.Unauthorized,
  provides: CurrentIdentity
}) {}

const id = HttpApiSchema.param("id", Schema.String)
const callId = HttpApiSchema.param("callId", Schema.String)

/** The endpoints. */
export class InboxGroup extends HttpApiGroup.make("inbox")
  .add(HttpApiEndpoint.get("session", "/api/session").addSuccess(Session))
  .add(HttpApiEndpoint.get("list", "/api/pending").setUrlParams(ListQuery).addSuccess(PendingPage).addError(InboxError.BadRequest))
  .add(
    HttpApiEndpoint.get("conversation")`/api/conversations/${id}`
      .addSuccess(ConversationView)
      .addError(InboxError.NotFound)
  )
  .add(
    HttpApiEndpoint.post("decide")`/api/conversations/${id}/calls/${callId}/decision`
      .setPayload(DecisionPayload)
      .setHeaders(Schema.Struct({
        "if-match": Schema.optional(Schema.String),
        "x-csrf-token": Schema.optional(Schema.String),
        "sec-fetch-site": Schema.optional(Schema.String)
      }))
      .addSuccess(Decided)
      .addError(InboxError.Forbidden)
      .addError(InboxError.NotFound)
      .addError(InboxError.Conflict)
      .addError(InboxError.InvalidEdit)
  )
  .addError(InboxError.StoreFailure)
  .middleware(Authentication)
{}

/** The inbox API. */
export class Api extends HttpApi.make("chat-ts-inbox").add(InboxGroup).annotateContext(OpenApi.annotations({
  title: "chat-ts approvals inbox",
  description: "Pending tool calls of paused chat-ts conversations, and the decisions people take on them."
})) {}
