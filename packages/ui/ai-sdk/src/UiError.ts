/**
 * The errors of the UI endpoint, each with its HTTP status and a JSON body
 * `{ _tag, message }`. Every refusal changes nothing in the store and runs
 * nothing.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/** A body that is not a `useChat` request: not JSON, a key twice, a missing chat id, a trigger we do not serve (400). */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  message: Schema.String
}, { httpApiStatus: 400 }) {}

/** No identity: the `Approver` found nobody behind the request (401). */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}, { httpApiStatus: 401 }) {}

/** Refused: the `Approver`'s policy forbids this decision, or the request comes from another site (403). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}, { httpApiStatus: 403 }) {}

/** No such conversation, or an approval id that names no call of it (forged, or of another conversation) (404). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}, { httpApiStatus: 404 }) {}

/**
 * The request does not fit the stored conversation (409): the call was already decided otherwise
 * (`AlreadyDecided`), nothing waits for a decision (`NotPaused`), calls still wait so a new message
 * is refused (`Paused`), or another run holds the conversation now (`Busy`: try again).
 */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String,
  reason: Schema.Literals(["AlreadyDecided", "NotPaused", "Paused", "Busy"])
}, { httpApiStatus: 409 }) {}

/** The edited arguments do not fit the tool's parameters (422); nothing was stored. */
export class InvalidEdit extends Schema.TaggedError<InvalidEdit>()("InvalidEdit", {
  message: Schema.String,
  callId: Schema.String,
  /** What is wrong with the arguments, one problem per entry. */
  problems: Schema.Array(Schema.String)
}, { httpApiStatus: 422 }) {}

/** The store failed or holds a damaged conversation (500); the detail names which, never a secret. */
export class StoreFailure extends Schema.TaggedError<StoreFailure>()("StoreFailure", {
  message: Schema.String
}, { httpApiStatus: 500 }) {}

/** Every refusal of a request. */
export type UiError = BadRequest | Unauthorized | Forbidden | NotFound | Conflict | InvalidEdit | StoreFailure

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
    case "InvalidEdit":
      return 422
    case "StoreFailure":
      return 500
  }
}
