/**
 * Steering during a pause: what a new user message does to a turn whose
 * calls are still pending (awaiting approval, scheduled, approved or running).
 *
 * The rule is the reducer's, whatever shell runs the turn:
 * - `"cancel"` (the default): every call of the paused response that no one
 *   has decided yet (awaiting approval, scheduled, or not yet decided) becomes
 *   `Cancelled` by `"user-message"`, with a reason the model sees; calls
 *   already approved (or running) still run. The message is held on the
 *   response (`queued`) and answered as soon as every call of it is resolved,
 *   which with nothing approved is the next resume.
 * - `"queue"`: nothing is cancelled; the message is held until the pause is
 *   resolved (every call decided and run, rejected, expired or cancelled),
 *   then answered.
 *
 * Either way the held message is part of the stored messages (it survives a
 * restart), and `Turn.step` delivers it: it appends it as a user message once
 * the response's calls are all resolved, and the model answers it, seeing the
 * calls' outcomes first. With no call pending it is simply appended.
 *
 * @since 0.2.0
 */
import * as Result from "effect/Result"
import * as ChatError from "../data/ChatError.js"
import * as Withdrawal from "./internal/withdrawal.js"
import * as Messages from "./Messages.js"

/**
 * What a new user message does to pending calls: cancel the undecided ones (default), or wait for them.
 *
 * @category models
 * @since 0.3.0
 */
export type Rule = "cancel" | "queue"

/**
 * Options of `steer`.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  /** The rule (default `"cancel"`). */
  readonly rule?: Rule | undefined
  /** Why the undecided calls are cancelled, shown to the model (default `defaultReason`). */
  readonly reason?: string | undefined
  /** Who sent the message and when, recorded on each call it cancels (audit only). */
  readonly cancellation?: Messages.Decision | undefined
}

/**
 * The reason a cancelled call shows the model when none is given.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaultReason = "The user sent a new message instead of deciding; answer that message."

/** The statuses `"cancel"` withdraws: no one decided them yet. */
const undecided: ReadonlySet<string> = new Set(["Proposed", "AwaitingApproval", "Scheduled"])

/** Why `message` cannot be held for a pause, if it cannot: only user messages of text and files can. */
const problemOf = (message: Messages.Message): string | undefined => {
  if (typeof message !== "object" || message === null || !Array.isArray(message.parts)) return "it is not a message with parts"
  if (message.role !== "user") return `it is a ${String(message.role)} message, not a user message`
  const other = message.parts.find((part) => part._tag !== "Text" && part._tag !== "File")
  return other === undefined ? undefined : `it holds a ${String(other._tag)} part; only text and files can wait for a pause`
}

/**
 * Adds a user message to a conversation whose turn may be paused, following
 * `rule` (see the module). Fails with `InvalidSteeringMessage` for a message
 * that is not a user message of text and files, and with `PendingToolCalls`
 * when calls are pending before the last response (the state `append` makes
 * without `supersede`), and with `DecisionNotAllowed` (`kind: "cancel"`) when the
 * `"cancel"` rule would withdraw a call under a decision policy that the
 * message's `sender` (or, without one, `cancellation`) neither asked for nor
 * may reject (see `Messages.cancel`); the messages are then unchanged. Send
 * such a message with `rule: "queue"` instead, or decide the call first.
 *
 * @category utils
 * @since 0.3.0
 */
export const steer = (
  messages: Messages.Messages,
  message: Messages.Message,
  options: Options = {}
): Result.Result<Messages.Messages, ChatError.InvalidSteeringMessage | ChatError.PendingToolCalls | ChatError.DecisionNotAllowed> => {
  const problem = problemOf(message)
  if (problem !== undefined) return Result.fail(new ChatError.InvalidSteeringMessage({ detail: problem }))
  const last = messages.length - 1
  const response = last >= 0 && messages[last]!.role === "assistant" ? messages[last]! : undefined
  const pending = Messages.pendingTools(messages)
  if (pending.length === 0 && (response === undefined || response.queued === undefined)) return Result.succeed([...messages, message])
  const held = response === undefined ? [] : Messages.toolCallsOf(response)
  const stranded = pending.filter((call) => !held.includes(call))
  if (response === undefined || stranded.length > 0) {
    return Result.fail(new ChatError.PendingToolCalls({ ids: (stranded.length > 0 ? stranded : pending).map((call) => call.id) }))
  }
  const cancel = (options.rule ?? "cancel") === "cancel"
  if (cancel) {
    // A steering message withdraws a call under a decision policy only if its sender asked for it or may reject it.
    const withdrawn = Messages.toolCallsOf(response).filter((call) => undecided.has(call.status._tag))
    const allowed = Withdrawal.checkAll(messages, withdrawn, message.sender ?? Withdrawal.fromRecord(options.cancellation))
    if (Result.isFailure(allowed)) return Result.fail(allowed.failure)
  }
  const cancelOptions: Messages.CancelOptions = {
    by: "user-message",
    reason: options.reason ?? defaultReason,
    ...(options.cancellation === undefined ? {} : { cancellation: options.cancellation })
  }
  const parts = response.parts.map((part) =>
    part._tag === "ToolCall" && cancel && undecided.has(part.status._tag) ? Messages.cancelled(part, cancelOptions) : part
  )
  // Held with who sent it (four-eyes compares with it) and its own metadata, delivered as they were.
  const queued: Messages.QueuedMessage = {
    parts: message.parts as Messages.QueuedMessage["parts"],
    ...(message.sender === undefined ? {} : { sender: message.sender }),
    ...(message.providerMetadata === undefined ? {} : { providerMetadata: message.providerMetadata })
  }
  const next = messages.slice()
  next[last] = { ...response, parts, queued: [...(response.queued ?? []), queued] }
  return Result.succeed(next)
}
