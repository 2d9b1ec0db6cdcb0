/**
 * A person's decision about one call of a durable turn: approve it (maybe with
 * edited arguments), reject it (maybe with a reason) or cancel it (withdraw it). It travels from any
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

/**
 * Withdraw the call (it never runs; the model sees who withdrew it and `reason`): by the one who
 * asked for it (default) or an operator. Not a rejection: nobody said no to it.
 */
export const Cancel = Schema.TaggedStruct("Cancel", {
  reason: Schema.optional(Schema.String),
  by: Schema.optional(Schema.Literals(["requester", "operator"]))
})

/** A decision about one call. */
export const Decision = Schema.Union([Approve, Reject, Cancel])

/** A decision about one call. */
export type Decision = typeof Decision.Type

/** Approves a call, with edited arguments when given. */
export const approve = (edited?: unknown): Decision =>
  edited === undefined ? Approve.make({}) : Approve.make({ edited })

/** Rejects a call, with a reason for the model when given. */
export const reject = (reason?: string): Decision => reason === undefined ? Reject.make({}) : Reject.make({ reason })

/** Withdraws a call, by the requester unless `by` says an operator, with a reason for the model when given. */
export const cancel = (options: { readonly reason?: string; readonly by?: "requester" | "operator" } = {}): Decision =>
  Cancel.make({
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    ...(options.by === undefined ? {} : { by: options.by })
  })
