/**
 * A person's decision about one call of a durable turn: approve it (maybe with
 * edited arguments), reject it (maybe with a reason) or cancel it (withdraw
 * it); an approval or rejection is taken by a `decider` when the call has a
 * decision policy (see `DecisionPolicy` in @chat-ts/core). It travels from any
 * process to the workflow through a `DurableDeferred`, so it is plain Schema
 * data; `at` (when it was taken) is set by the client's clock when a decider
 * is given, so the workflow records the same time.
 *
 * @since 0.1.0
 */
import * as Messages from "@chat-ts/core/Messages"
import * as Schema from "effect/Schema"

/** Who decides and when, for calls under a decision policy. */
const by = {
  /** Who decides: checked against the call's decision policy, recorded with the decision. */
  decider: Schema.optional(Messages.Identity),
  /** When (epoch millis); set by `decide` from the clock when a decider is given and this is not. */
  at: Schema.optional(Schema.Finite)
}

/** Run the call; `edited` (a JSON value) replaces its arguments, checked against the tool's parameters. */
export const Approve = Schema.TaggedStruct("Approve", { edited: Schema.optional(Schema.Unknown), ...by })

/** Do not run the call; the model sees `reason` when given. */
export const Reject = Schema.TaggedStruct("Reject", { reason: Schema.optional(Schema.String), ...by })

/**
 * Withdraw the call (it never runs; the model sees who withdrew it and `reason`): by the one who
 * asked for it (default) or an operator. Not a rejection: nobody said no to it.
 */
export const Cancel = Schema.TaggedStruct("Cancel", {
  reason: Schema.optional(Schema.String),
  by: Schema.optional(Schema.Literals(["requester", "operator"])),
  /** Who withdrew it and when, recorded as the call's `cancellation` when given. */
  ...by
})

/**
 * A person's decision about one call (not `Turn.Decision`, what a strategy decided, nor
 * `Messages.Decision`, the record of who decided).
 */
export const PersonDecision = Schema.Union([Approve, Reject, Cancel])

/** A person's decision about one call. */
export type PersonDecision = typeof PersonDecision.Type

/**
 * A person's decision, under its former name.
 *
 * @deprecated Use `PersonDecision` (core has two other "decisions": `Turn.Decision`, `Messages.Decision`).
 */
export const Decision = PersonDecision

/**
 * A person's decision, under its former name.
 *
 * @deprecated Use `PersonDecision`.
 */
export type Decision = PersonDecision

/** Who takes a decision (for calls under a decision policy). */
export interface DecideAs {
  readonly decider?: Messages.Identity
}

const asOf = (options: DecideAs | undefined) => options?.decider === undefined ? {} : { decider: options.decider }

/** Approves a call, with edited arguments when given, as `decider` when given. */
export const approve = (edited?: unknown, options?: DecideAs): PersonDecision =>
  Approve.make({ ...(edited === undefined ? {} : { edited }), ...asOf(options) })

/** Rejects a call, with a reason for the model when given, as `decider` when given. */
export const reject = (reason?: string, options?: DecideAs): PersonDecision =>
  Reject.make({ ...(reason === undefined ? {} : { reason }), ...asOf(options) })

/** The decider and time of a decision, as `Messages.approve` / `reject` take them (nothing without a decider or time). */
export const decideOptions = (decision: PersonDecision): Messages.DecideOptions | undefined =>
  decision.decider === undefined || decision.at === undefined
    ? undefined
    : { decider: decision.decider, at: decision.at }

/** Withdraws a call, by the requester unless `by` says an operator, with a reason for the model when given. */
export const cancel = (
  options: { readonly reason?: string; readonly by?: "requester" | "operator" } & DecideAs = {}
): PersonDecision =>
  Cancel.make({
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    ...(options.by === undefined ? {} : { by: options.by }),
    ...asOf(options)
  })
