/**
 * The parts of the AI SDK 7 UI message stream this package writes, typed
 * here (no runtime dependency on `ai`), and what chat-ts adds in the places
 * the protocol leaves open: a `data-chat-ts-call` part per call that waits,
 * was decided or ran (deadline, scheduled time, edited arguments, who
 * decided, the JSON Schema an edit must fit), and the message metadata
 * (conversation, version, usage, pause). A page types its messages with
 * `UiMessage` (`useChat<UiMessage>()`) to read them.
 *
 * Each chunk is sent as one server-sent event, `data: <json>\n\n`, ending
 * with `data: [DONE]`, with the header `x-vercel-ai-ui-message-stream: v1`.
 *
 * @since 0.2.0
 */

/** Who may take one kind of decision: these ids, or anyone holding one of these roles (absent: anyone identified). */
export interface CallDeciders {
  readonly ids?: ReadonlyArray<string> | undefined
  readonly roles?: ReadonlyArray<string> | undefined
}

/** Who may decide a call (its tool's decision policy, see core's `DecisionPolicy`); the endpoint enforces it (403). */
export interface CallPolicy {
  readonly approve?: CallDeciders | undefined
  /** Who may approve with edited arguments (default: who may approve). */
  readonly edit?: CallDeciders | undefined
  /** Who may reject (default: who may approve). */
  readonly reject?: CallDeciders | undefined
  /** Four-eyes: the person who sent the message the call answers may not approve it. */
  readonly notRequester?: boolean | undefined
  /** How many distinct people must approve (default 1). */
  readonly quorum?: number | undefined
}

/** One person's yes towards a quorum. */
export interface CallVote {
  readonly by: string
  readonly at: number
  readonly roles?: ReadonlyArray<string> | undefined
}

/** A reviewer model's verdict on a call waiting for a person (core's `Reviewer`): advice for the person, never sent to the model. */
export interface CallReview {
  readonly verdict: "safe" | "needs-person" | "refuse" | "unavailable"
  readonly reason: string
  /** How sure the reviewer said it was, from 0 to 1. */
  readonly confidence?: number | undefined
}

/** What chat-ts says about one call, in a `data-chat-ts-call` part whose `id` is the call's id (a later one replaces it). */
export interface CallData {
  /** The call's id (the `toolCallId` of its tool part). */
  readonly callId: string
  /** The tool it calls. */
  readonly tool: string
  /** Where it stands. */
  readonly status:
    | "awaiting-approval"
    | "scheduled"
    | "approved"
    | "running"
    | "completed"
    | "failed"
    | "rejected"
    | "expired"
    | "cancelled"
  /** The arguments it runs (or would run) with, as JSON text: the edited ones once a person edited them. */
  readonly arguments: string
  /** Whether a person edited the arguments. */
  readonly edited: boolean
  /** Awaiting approval: the approval's deadline (epoch millis), after which it fails closed. */
  readonly deadline?: number
  /** Scheduled: when it runs (epoch millis). */
  readonly scheduledAt?: number
  /** Who decided and when (epoch millis), once decided through a person. */
  readonly decidedBy?: string
  readonly decidedAt?: number
  /** Rejected or cancelled: the reason the model was given. */
  readonly reason?: string
  /** Awaiting approval, scheduled or approved: who may decide it (absent: whoever the `Approver` lets). */
  readonly policy?: CallPolicy
  /**
   * Awaiting approval or scheduled: everyone who asked for it, as four-eyes counts them (the ids of the senders of the
   * user messages it answers, each once, in order; several when messages were delivered together). Under four-eyes none
   * of them may approve it.
   */
  readonly requesters?: ReadonlyArray<string>
  /** Awaiting approval or scheduled: a user message it answers has no sender (who asked is not fully known; under four-eyes nobody may approve). */
  readonly requesterUnknown?: boolean
  /**
   * The yeses given towards the policy's quorum: so far while it waits, all of them once approved
   * (quorum progress is `votes.length` of `policy.quorum`).
   */
  readonly votes?: ReadonlyArray<CallVote>
  /** Awaiting approval: the reviewer's verdict, when a reviewer looked at it. */
  readonly review?: CallReview
  /** Expired: a person approved it, but after its deadline (so it did not run). */
  readonly approvedLate?: boolean
  /** Cancelled: who withdrew it (`user-message`: a new message steered the conversation). */
  readonly cancelledBy?: "requester" | "user-message" | "operator"
  /** Awaiting approval: the JSON Schema edited arguments must fit (send them in `chatTs.edits`). */
  readonly parameters?: unknown
}

/** The data parts chat-ts writes, by name (`data-<name>`), for `UIMessage<…, DataTypes>`. */
export type DataTypes = {
  readonly "chat-ts-call": CallData
}

/** The message metadata chat-ts writes (on `start`, `message-metadata` and `finish`). */
export interface Metadata {
  /** The conversation (the chat id). */
  readonly conversationId: string
  /** The stored version after the turn ended (on `finish`). */
  readonly version?: number
  /** Tokens of the turn so far (on `finish`). */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number }
  /** How the turn ended (on `finish`): complete, paused on calls, or failed. */
  readonly turn?: "complete" | "paused" | "failed"
  /** On a request that changed nothing because it was already applied (a client retrying). */
  readonly duplicate?: boolean
  /**
   * On `start`, when the message joined a turn that was running (sent while a response streamed,
   * after `stop()`): the rest of that turn streams here, the model answering the message in it.
   */
  readonly joined?: boolean
}

/** A UI message of a chat-ts chat, structurally the AI SDK's `UIMessage<Metadata, DataTypes>`. */
export interface UiMessage {
  readonly id: string
  readonly role: "system" | "user" | "assistant"
  readonly metadata?: Metadata
  readonly parts: ReadonlyArray<{ readonly type: string } & Record<string, unknown>>
}

/** The extra body a page may send with a request (`addToolApprovalResponse({ …, options: { body } })`). */
export interface RequestExtras {
  readonly chatTs?: {
    /** Edited arguments of approved calls, by approval id, as values (checked against the tool's Schema). */
    readonly edits?: Readonly<Record<string, unknown>>
  }
}

/** One chunk of the UI message stream, as chat-ts writes them (a subset of the AI SDK's `UIMessageChunk<Metadata, DataTypes>`). */
export type UiMessageChunk =
  | { readonly type: "start"; readonly messageMetadata?: Metadata }
  | { readonly type: "start-step" }
  | { readonly type: "finish-step" }
  | { readonly type: "text-start"; readonly id: string }
  | { readonly type: "text-delta"; readonly id: string; readonly delta: string }
  | { readonly type: "text-end"; readonly id: string }
  | { readonly type: "reasoning-start"; readonly id: string }
  | { readonly type: "reasoning-delta"; readonly id: string; readonly delta: string }
  | { readonly type: "reasoning-end"; readonly id: string }
  | { readonly type: "tool-input-start"; readonly toolCallId: string; readonly toolName: string }
  | { readonly type: "tool-input-delta"; readonly toolCallId: string; readonly inputTextDelta: string }
  | { readonly type: "tool-input-available"; readonly toolCallId: string; readonly toolName: string; readonly input: unknown }
  | { readonly type: "tool-input-error"; readonly toolCallId: string; readonly toolName: string; readonly input: unknown; readonly errorText: string }
  | { readonly type: "tool-approval-request"; readonly approvalId: string; readonly toolCallId: string }
  | { readonly type: "tool-output-available"; readonly toolCallId: string; readonly output: unknown }
  | { readonly type: "tool-output-error"; readonly toolCallId: string; readonly errorText: string }
  | { readonly type: "tool-output-denied"; readonly toolCallId: string }
  | { readonly type: "data-chat-ts-call"; readonly id: string; readonly data: CallData }
  | { readonly type: "message-metadata"; readonly messageMetadata: Metadata }
  | { readonly type: "finish"; readonly finishReason?: "stop" | "tool-calls" | "length" | "content-filter" | "error" | "other"; readonly messageMetadata?: Metadata }
  | { readonly type: "error"; readonly errorText: string }

/** The response headers of a UI message stream. */
export const headers: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no"
}

/** One chunk as a server-sent event. */
export const toSse = (chunk: UiMessageChunk): string => `data: ${JSON.stringify(chunk)}\n\n`

/** The last event of every stream. */
export const done = "data: [DONE]\n\n"
