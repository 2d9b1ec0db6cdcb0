/**
 * The errors of the inbox API, each with its HTTP status: a request it cannot
 * read (400), a request without
 * an identity (401), a decision the `Approver` or the CSRF check refuses (403),
 * an unknown conversation or call (404), a decision that lost a race or comes
 * too late (409), an edit the tool's parameters refuse (422), a store that
 * failed (500).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** A request the inbox cannot read: a cursor it did not give, a page size out of range (400). */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  message: Schema.String
}, { httpApiStatus: 400 }) {}

/** No identity: the `Approver` found nobody behind the request (401). */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}, { httpApiStatus: 401 }) {}

/** Refused: the `Approver`'s policy forbids this decision, or the CSRF token is missing or wrong (403). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}, { httpApiStatus: 403 }) {}

/** No conversation or no call with this id (404). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}, { httpApiStatus: 404 }) {}

/**
 * Too late: the conversation's version is not the `If-Match` one, someone else saved first, or the call
 * no longer waits for a decision (409). `version` is the current one, when known.
 */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String,
  version: Schema.optional(Schema.Number),
  status: Schema.optional(Schema.String)
}, { httpApiStatus: 409 }) {}

/** The edited arguments do not fit the tool's parameters (422); nothing was stored. */
export class InvalidEdit extends Schema.TaggedError<InvalidEdit>()("InvalidEdit", {
  message: Schema.String,
  /** What is wrong with the arguments, one problem per entry. */
  problems: Schema.Array(Schema.String)
}, { httpApiStatus: 422 }) {}

/** A grant the inbox cannot make: a predicate that cannot be evaluated, a bad tool pattern or expiry (422); nothing was stored. */
export class InvalidGrant extends Schema.TaggedError<InvalidGrant>()("InvalidGrant", {
  message: Schema.String
}, { httpApiStatus: 422 }) {}

/** The store failed or holds a damaged conversation (500); the detail names which, never a secret. */
export class StoreFailure extends Schema.TaggedError<StoreFailure>()("StoreFailure", {
  message: Schema.String
}, { httpApiStatus: 500 }) {}

/**
 * A webhook request whose signature does not verify (`WebhookNotifier.verify`): a wrong or missing signature,
 * a body changed on the way, a timestamp outside the tolerance (a replay), or a body that is not a notification (401).
 */
export class InvalidSignature extends Schema.TaggedError<InvalidSignature>()("InvalidSignature", {
  message: Schema.String
}, { httpApiStatus: 401 }) {}
