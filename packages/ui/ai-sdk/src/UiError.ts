/**
 * The errors of the UI endpoint, each with its HTTP status and a JSON body
 * `{ _tag, message }`. Every refusal changes nothing in the store and runs
 * nothing.
 *
 * @since 0.2.0
 */
import { InboxError } from "@chat-ts/inbox"
import * as Schema from "effect/Schema"

/**
 * The refusals the approvals inbox has too, the same classes (`@chat-ts/inbox`'s `InboxError`): a
 * body that is not a `useChat` request (400), no identity (401), the `Approver`'s policy, the tool's
 * decision policy (`DecisionNotAllowed`, `DuplicateVote`) or another site (403), no such conversation or an approval id naming no call of it (404), a store that
 * failed (500).
 */
export const { BadRequest, Forbidden, NotFound, StoreFailure, Unauthorized } = InboxError

/** A request that cannot be read (400). */
export type BadRequest = InboxError.BadRequest
/** No identity (401). */
export type Unauthorized = InboxError.Unauthorized
/** Refused by the policy or as cross-site (403). */
export type Forbidden = InboxError.Forbidden
/** No such conversation or call (404). */
export type NotFound = InboxError.NotFound
/** The store failed (500). */
export type StoreFailure = InboxError.StoreFailure

/**
 * The request does not fit the stored conversation (409): the call was already decided otherwise
 * (`AlreadyDecided`), nothing waits for a decision (`NotPaused`), calls still wait and a new message
 * is refused (`Paused`: `steering: "refuse"`, or an approved call still to run), the last response
 * cannot be regenerated (`NotRegenerable`: it holds tool calls, or it is not the last), or another
 * run holds the conversation now (`Busy`: `retryable`, send the same request again after
 * `retryAfter` seconds, also the `Retry-After` header).
 */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String,
  reason: Schema.Literals(["AlreadyDecided", "NotPaused", "Paused", "NotRegenerable", "Busy"]),
  /** The same request, sent again unchanged, may succeed (only `Busy`): nothing was stored. */
  retryable: Schema.optional(Schema.Boolean),
  /** How many seconds to wait before sending it again (with `retryable`). */
  retryAfter: Schema.optional(Schema.Number)
}, { httpApiStatus: 409 }) {}

/** The seconds a `Busy` refusal asks a client to wait before sending the same request again. */
export const busyRetryAfter = 1

/** Another run holds the conversation now: a retryable 409 (`Retry-After`); nothing was stored or run. */
export const busy = (message = "another run holds this conversation now: send the same request again in a moment"): Conflict =>
  new Conflict({ reason: "Busy", message, retryable: true, retryAfter: busyRetryAfter })

/** The body is not `application/json` (415); nothing was read. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  message: Schema.String
}, { httpApiStatus: 415 }) {}

/** The edited arguments do not fit the tool's parameters (422); nothing was stored. */
export class InvalidEdit extends Schema.TaggedError<InvalidEdit>()("InvalidEdit", {
  message: Schema.String,
  callId: Schema.String,
  /** What is wrong with the arguments, one problem per entry. */
  problems: Schema.Array(Schema.String)
}, { httpApiStatus: 422 }) {}

/** Every refusal of a request. */
export type UiError = BadRequest | Unauthorized | Forbidden | NotFound | Conflict | UnsupportedMediaType | InvalidEdit | StoreFailure

/** The HTTP status of a refusal. */
export const statusOf = (error: UiError): number => {
  switch (error._tag) {
    case "BadRequest":
      return 400
    case "Unauthorized":
      return 401
    case "Forbidden":
      return 403
    case "NotFound":
      return 404
    case "Conflict":
      return 409
    case "UnsupportedMediaType":
      return 415
    case "InvalidEdit":
      return 422
    case "StoreFailure":
      return 500
  }
}
