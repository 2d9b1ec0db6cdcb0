/**
 * What chat-ts reads and writes of AG-UI 1.x (`@ag-ui/core` 1.0): the part
 * of a `RunAgentInput` the endpoint reads (thread and run ids, the last user
 * message, the `resume` answers), the answer a chat-ts interrupt expects, and
 * the `metadata` chat-ts puts on interrupts and tool results for what AG-UI
 * has no field for (who decided, the deadline, the scheduled time, how a call
 * ended). These types are for clients too: import them to render an
 * interrupt and build its answer.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/** The AG-UI protocol version this package speaks (sent as `protocolVersion` of `RUN_STARTED`). */
export const protocolVersion = "1.0"

/** The key of chat-ts's entry in AG-UI `metadata` objects. */
export const metadataKey = "chat-ts"

/** The `reason` of an interrupt for a call waiting for a person (AG-UI's core value). */
export const approvalReason = "tool_call"

/** The `reason` of an interrupt for a call waiting for its scheduled time (a namespaced custom reason). */
export const scheduledReason = "chat-ts:scheduled"

const Id = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256))

/** One answer of `RunAgentInput.resume` (AG-UI's `ResumeEntry`). */
export const ResumeEntry = Schema.Struct({
  interruptId: Id,
  status: Schema.Literals(["resolved", "cancelled"]),
  payload: Schema.optional(Schema.Unknown),
  metadata: Schema.optional(Schema.Unknown)
})
export type ResumeEntry = typeof ResumeEntry.Type

/**
 * A message of `RunAgentInput.messages`, as far as chat-ts reads it (only the last one, if it is the
 * user's); its other fields (`toolCalls`, `toolCallId`…) are kept as sent, only to be given back in
 * the `MESSAGES_SNAPSHOT` that follows an edit.
 */
export const InputMessage = Schema.StructWithRest(Schema.Struct({
  id: Id,
  role: Schema.String,
  content: Schema.optional(Schema.Unknown)
}), [Schema.Record(Schema.String, Schema.Unknown)])
export type InputMessage = typeof InputMessage.Type

/**
 * The fields of AG-UI's `RunAgentInput` chat-ts reads. `state`, `tools`,
 * `context` and `forwardedProps` are accepted and ignored: the conversation
 * in the store is the truth, never the client's copy.
 */
export const RunAgentInput = Schema.Struct({
  threadId: Id,
  runId: Id,
  messages: Schema.Array(InputMessage).check(Schema.isMaxLength(10_000)),
  resume: Schema.optional(Schema.Array(ResumeEntry).check(Schema.isMaxLength(1_000)))
})
export type RunAgentInput = typeof RunAgentInput.Type

/**
 * The answer (`payload` of a `resolved` resume entry) a chat-ts interrupt
 * expects: approve, approve with `editedArgs` (the whole arguments, replaced,
 * checked against the tool's Schema), or decline with a `reason` the model
 * sees. AG-UI's recommended approve-with-edits shape, plus `reason`.
 */
export const Answer = Schema.Union([
  Schema.Struct({ approved: Schema.Literal(true), editedArgs: Schema.optional(Schema.Unknown) }),
  Schema.Struct({ approved: Schema.Literal(false), reason: Schema.optional(Schema.String.check(Schema.isMaxLength(4_000))) })
])
export type Answer = typeof Answer.Type

/** One person's yes so far towards a quorum (who, when), in an interrupt's details. */
export interface Vote {
  readonly by: string
  readonly at: number
}

/**
 * Who may decide a call (its decision policy, see `DecisionPolicy` in @chat-ts/core): ids or roles
 * per kind of decision, four-eyes (`notRequester`) and the quorum.
 */
export interface Policy {
  readonly approve?: { readonly ids?: ReadonlyArray<string> | undefined; readonly roles?: ReadonlyArray<string> | undefined } | undefined
  readonly edit?: { readonly ids?: ReadonlyArray<string> | undefined; readonly roles?: ReadonlyArray<string> | undefined } | undefined
  readonly reject?: { readonly ids?: ReadonlyArray<string> | undefined; readonly roles?: ReadonlyArray<string> | undefined } | undefined
  readonly notRequester?: boolean | undefined
  readonly quorum?: number | undefined
}

/** A reviewer model's verdict on the call, for the person deciding (never sent to the model). */
export interface Review {
  readonly verdict: "safe" | "needs-person" | "refuse" | "unavailable"
  readonly reason: string
  readonly confidence?: number | undefined
}

/** What chat-ts puts under `metadata["chat-ts"]` of each interrupt. */
export interface InterruptDetails {
  /** The tool the call would run. */
  readonly tool: string
  /** The tool's description, when the chat knows the tool. */
  readonly description?: string
  /** The arguments the call would run with, parsed (the text as sent when it is not JSON). */
  readonly arguments: unknown
  /** The JSON Schema an edit must fit (the tool's parameters), when the chat knows the tool. */
  readonly parameters?: unknown
  /** What the call waits for: a person (`approval`) or its time (`time`). */
  readonly waitsFor: "approval" | "time"
  /** The approval's deadline (epoch millis); also in `expiresAt` as ISO 8601. */
  readonly expiresAt?: number
  /** When a scheduled call is due (epoch millis). */
  readonly scheduledAt?: number
  /** Who may decide it, when the call has a decision policy (absent: whoever the `Approver` allows). */
  readonly policy?: Policy
  /**
   * Who asked for the call: the sender of the last user message it answers, when recorded.
   *
   * @deprecated Several people may have asked (messages delivered together, `steering: "queue"`): read `requesters`.
   */
  readonly requester?: string
  /**
   * Everyone who asked for the call, as four-eyes counts them: the ids of the senders of the user messages it
   * answers (the messages delivered together before it), each once, in order. Under four-eyes none of them may approve.
   */
  readonly requesters?: ReadonlyArray<string>
  /** Whether a user message the call answers has no sender (who asked is not fully known: under four-eyes nobody may approve). */
  readonly requesterUnknown?: boolean
  /** How many distinct people must approve (1 without a quorum) and the yeses so far: the call waits until `votes` reaches `quorum`. */
  readonly quorum: { readonly needed: number; readonly votes: ReadonlyArray<Vote> }
  /** The reviewer model's verdict, when a reviewer looked at the call. */
  readonly review?: Review
}

/** An interrupt's `metadata` as chat-ts writes it. */
export interface InterruptMetadata {
  readonly [metadataKey]: InterruptDetails
}

/** How a call ended, under `metadata["chat-ts"]` of its `TOOL_CALL_RESULT`. */
export interface ResultDetails {
  /** `Expired`: its approval's deadline passed; `Cancelled`: withdrawn before it ran. Neither ran. */
  readonly status: "Completed" | "Failed" | "Rejected" | "Expired" | "Cancelled"
  /** For a rejected call: a person (`user`) or a policy (a strategy, a 0.1 expired approval). */
  readonly rejectedBy?: "user" | "policy"
  /** For a cancelled call: who withdrew it (the one who asked, a newer user message, an operator). */
  readonly cancelledBy?: "requester" | "user-message" | "operator"
  /** For a cancelled call: who withdrew it and when, when a person did. */
  readonly cancellation?: { readonly by: string; readonly at: number }
  /** For an expired call: the deadline (epoch millis), and whether a person approved it after it (`approvedLate`). */
  readonly expiresAt?: number
  readonly approvedLate?: boolean
  /** Who approved or rejected it and when (epoch millis), when a person decided. */
  readonly decision?: { readonly by: string; readonly at: number }
  /** The arguments it ran with when a person edited them (JSON text). */
  readonly editedArguments?: string
}

/** A `TOOL_CALL_RESULT`'s `metadata` as chat-ts writes it. */
export interface ResultMetadata {
  readonly [metadataKey]: ResultDetails
}

/** An AG-UI event as chat-ts sends it (the `@ag-ui/core` `Event` types describe each one). */
export interface Event {
  readonly type: string
  readonly [field: string]: unknown
}
