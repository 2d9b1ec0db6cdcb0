/**
 * A person's decision about one call of a durable turn: approve it (maybe with
 * edited arguments) or reject it (maybe with a reason). It travels from any
 * process to the workflow through a `DurableDeferred`, so it is plain Schema
 * data.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** Run the call; `edited` (a JSON value) replaces its arguments, checked against the tool's parameters. */
export const Approve = Schema.TaggedStruct("Approve", { edited: Schema.optional(Schema.Unknown) })

/** Do not run the call; the model sees `reason` when given. */
export const Reject = Schema.TaggedStruct("Reject", { reason: Schema.optional(Schema.String) })

/** A decision about one call. */
export const Decision = Schema.Union([Approve, Reject])

/** A decision about one call. */
export type Decision = typeof Decision.Type

/** Approves a call, with edited arguments when given. */
export const approve = (edited?: unknown): Decision =>
  edited === undefined ? Approve.make({}) : Approve.make({ edited })

/** Rejects a call, with a reason for the model when given. */
export const reject = (reason?: string): Decision => reason === undefined ? Reject.make({}) : Reject.make({ reason })
