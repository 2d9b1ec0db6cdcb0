/**
 * The one error of the AG-UI endpoint: a request it refuses, with a
 * machine-readable `code` (sent as the `code` of a `RUN_ERROR`) and the HTTP
 * status it answers with when the refusal comes before the stream starts.
 * Nothing was stored and nothing ran when a request is refused.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/** The codes of refused requests and failed runs, with their HTTP status. */
export const statuses = {
  /** The body is not a `RunAgentInput` (not JSON, a key twice, a field of the wrong type, too large). */
  bad_request: 400,
  /** No identity behind the request (the `Approver` found nobody). */
  unauthorized: 401,
  /** The `Approver`, the call's decision policy (not named, four-eyes, an edit under a quorum) or the cross-site check refuses this person this decision or conversation. */
  forbidden: 403,
  /** A resume names an interrupt that is no call of this conversation. */
  unknown_interrupt: 404,
  /** @deprecated No longer sent: a resume naming a call that no longer waits is `already_decided`, whether or not others wait. */
  not_paused: 409,
  /** A resume decides, differently, a call that no longer waits (decided by another tab, expired, withdrawn, or the conversation went on). */
  already_decided: 409,
  /** New input while calls wait, under `steering: "refuse"`: the run must carry a `resume` answering every interrupt. */
  interrupts_pending: 409,
  /** A resume that leaves some of the open interrupts unanswered. */
  interrupts_not_addressed: 409,
  /** Another run holds the conversation's lease right now: retryable, send the same request again (after `Retry-After` seconds). */
  conversation_busy: 409,
  /** The edited arguments do not fit the tool's parameters. */
  invalid_edit: 422,
  /** The request is not JSON (`content-type`). */
  unsupported_media_type: 415,
  /** The store failed or holds a damaged conversation. */
  store_failure: 500,
  /** The turn failed after it started (a `RUN_ERROR` in the stream), or the run died before it started (a defect: a 500). */
  turn_failed: 500
} as const

/** A code of `statuses`. */
export type Code = keyof typeof statuses

/** The `Code` literals, as a Schema. */
export const Code = Schema.Literals(Object.keys(statuses) as [Code, ...Array<Code>])

/** A refused request (or, `turn_failed`, a run that failed): nothing was stored or run by it. */
export class Refused extends Schema.TaggedError<Refused>("@chat-ts/ag-ui/Refused")("Refused", {
  code: Code,
  message: Schema.String,
  /** What is wrong, one problem per entry (an invalid edit's Schema issues). */
  problems: Schema.optional(Schema.Array(Schema.String))
}) {
  /** The HTTP status of this refusal. */
  get status(): number {
    return statuses[this.code]
  }

  /** Whether the same request, sent again unchanged, may succeed (`conversation_busy`): nothing was stored. */
  get retryable(): boolean {
    return this.code === "conversation_busy"
  }

  /** The seconds to wait before sending it again (`Retry-After`), when `retryable`. */
  get retryAfter(): number | undefined {
    return this.retryable ? busyRetryAfter : undefined
  }
}

/** The seconds a `conversation_busy` refusal asks a client to wait before sending the same request again. */
export const busyRetryAfter = 1

/** Makes a refusal. */
export const refuse = (code: Code, message: string, problems?: ReadonlyArray<string>): Refused =>
  new Refused({ code, message, ...(problems === undefined ? {} : { problems }) })
