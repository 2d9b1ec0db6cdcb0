/**
 * The mapping of a streamed turn (`ChatEvent`s) to AG-UI events, for one
 * run: it opens and closes text messages, reasoning messages, tool calls and
 * steps so that the stream obeys AG-UI's ordering rules (what `@ag-ui/client`
 * verifies), and ends the run with its outcome.
 *
 * @internal
 */
import type { ChatEvent } from "@chat-ts/core"
import * as Messages from "@chat-ts/core/Messages"
import * as Usage from "@chat-ts/core/Usage"
import type * as AgUiError from "../AgUiError.js"
import * as AgUiProtocol from "../AgUiProtocol.js"

type Event = AgUiProtocol.Event

/** AG-UI's `TokenUsage` entries of a turn's usage. */
export const usageOf = (usage: Usage.Usage): ReadonlyArray<Record<string, number>> => [{
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens,
  totalTokens: usage.inputTokens + usage.outputTokens,
  ...(usage.reasoningTokens === undefined ? {} : { reasoningTokens: usage.reasoningTokens }),
  ...(usage.cachedInputTokens === undefined ? {} : { cachedInputTokens: usage.cachedInputTokens })
}]

/** What `ResultDetails` says of how a call that did not run ended (rejected, expired, cancelled). */
const refusalDetails = (status: Messages.ToolCallStatus): Partial<AgUiProtocol.ResultDetails> => {
  switch (status._tag) {
    case "Rejected":
      return { rejectedBy: status.by }
    case "Expired":
      return {
        ...(status.expiresAt === undefined ? {} : { expiresAt: status.expiresAt }),
        ...(status.approvedLate === true ? { approvedLate: true } : {})
      }
    case "Cancelled":
      return {
        cancelledBy: status.by,
        ...(status.cancellation === undefined ? {} : { cancellation: { by: status.cancellation.by, at: status.cancellation.at } })
      }
    default:
      return {}
  }
}

const ended = (tag: string): AgUiProtocol.ResultDetails["status"] =>
  tag === "Completed" || tag === "Rejected" || tag === "Expired" || tag === "Cancelled" ? tag : "Failed"

/** The `metadata` of a resolved call's `TOOL_CALL_RESULT`: how it ended and who decided. */
export const resultMetadata = (call: Messages.ToolCallPart): AgUiProtocol.ResultMetadata => {
  const status = call.status
  const decision = Messages.decisionOf(call).decision
  const edited = "editedArguments" in status ? status.editedArguments : undefined
  return {
    [AgUiProtocol.metadataKey]: {
      status: ended(status._tag),
      ...refusalDetails(status),
      ...(decision === undefined ? {} : { decision: { by: decision.by, at: decision.at } }),
      ...(edited === undefined ? {} : { editedArguments: edited })
    }
  }
}

/** The AG-UI events of one run, made one chat event at a time. */
export class RunEvents {
  private text: string | undefined
  /** The assistant message of the current step: its text and every call it makes (`parentMessageId`). */
  private assistant: string | undefined
  private reasoning: string | undefined
  private step: string | undefined
  private steps = 0
  private messages = 0
  /** The usage of this run's own model calls (a resumed run does not count the calls before its pause). */
  private usage: Usage.Usage | undefined
  private readonly open = new Set<string>()
  /** The calls whose `TOOL_CALL_RESULT` this run sent. */
  private readonly reported = new Set<string>()

  constructor(readonly threadId: string, readonly runId: string) {}

  /** `RUN_STARTED`. */
  started(): Event {
    return { type: "RUN_STARTED", threadId: this.threadId, runId: this.runId, protocolVersion: AgUiProtocol.protocolVersion }
  }

  private nextId(kind: string): string {
    this.messages += 1
    return `${this.runId}:${kind}:${this.messages}`
  }

  /** The id of the current step's assistant message (made on first use). */
  private assistantId(): string {
    return (this.assistant ??= this.nextId("text"))
  }

  private inStep(out: Array<Event>): void {
    if (this.step !== undefined) return
    this.steps += 1
    this.step = `model-call-${this.steps}`
    out.push({ type: "STEP_STARTED", stepName: this.step })
  }

  private closeText(out: Array<Event>): void {
    if (this.text !== undefined) out.push({ type: "TEXT_MESSAGE_END", messageId: this.text })
    this.text = undefined
  }

  private closeReasoning(out: Array<Event>): void {
    if (this.reasoning === undefined) return
    out.push({ type: "REASONING_MESSAGE_END", messageId: this.reasoning }, { type: "REASONING_END", messageId: this.reasoning })
    this.reasoning = undefined
  }

  private startCall(out: Array<Event>, id: string, name: string): void {
    if (this.open.has(id)) return
    this.closeText(out)
    this.closeReasoning(out)
    this.open.add(id)
    out.push({ type: "TOOL_CALL_START", toolCallId: id, toolCallName: name, parentMessageId: this.assistantId() })
  }

  /** Closes the open text and reasoning messages and tool calls. */
  private closeContent(out: Array<Event>): void {
    this.closeText(out)
    this.closeReasoning(out)
    for (const id of this.open) out.push({ type: "TOOL_CALL_END", toolCallId: id })
    this.open.clear()
  }

  /** Closes whatever is open (messages, tool calls, the step). */
  private closeAll(out: Array<Event>): void {
    this.closeContent(out)
    if (this.step !== undefined) out.push({ type: "STEP_FINISHED", stepName: this.step })
    this.step = undefined
    this.assistant = undefined
  }

  /** The AG-UI events of one chat event (none for the final ones: see `paused`, `completed`). */
  of(event: ChatEvent.ChatEvent): ReadonlyArray<Event> {
    const out: Array<Event> = []
    switch (event._tag) {
      case "TextDelta": {
        if (event.text === "") break
        this.inStep(out)
        this.closeReasoning(out)
        if (this.text === undefined) {
          this.text = this.assistantId()
          out.push({ type: "TEXT_MESSAGE_START", messageId: this.text, role: "assistant" })
        }
        out.push({ type: "TEXT_MESSAGE_CONTENT", messageId: this.text, delta: event.text })
        break
      }
      case "ReasoningDelta": {
        if (event.text === "") break
        this.inStep(out)
        this.closeText(out)
        if (this.reasoning === undefined) {
          this.reasoning = this.nextId("reasoning")
          out.push(
            { type: "REASONING_START", messageId: this.reasoning },
            { type: "REASONING_MESSAGE_START", messageId: this.reasoning, role: "reasoning" }
          )
        }
        out.push({ type: "REASONING_MESSAGE_CONTENT", messageId: this.reasoning, delta: event.text })
        break
      }
      case "ToolCallDelta": {
        this.inStep(out)
        this.startCall(out, event.id, event.name)
        if (event.argumentsDelta !== "") out.push({ type: "TOOL_CALL_ARGS", toolCallId: event.id, delta: event.argumentsDelta })
        break
      }
      case "ToolCall": {
        // A call whose arguments did not stream (a provider that sends them whole) gets them here.
        const call = event.call
        if (!this.open.has(call.id)) {
          this.inStep(out)
          this.startCall(out, call.id, call.name)
          if (call.arguments !== "") out.push({ type: "TOOL_CALL_ARGS", toolCallId: call.id, delta: call.arguments })
        }
        out.push({ type: "TOOL_CALL_END", toolCallId: call.id })
        this.open.delete(call.id)
        break
      }
      case "StepFinished": {
        this.inStep(out)
        this.closeContent(out)
        this.usage = Usage.add(this.usage ?? Usage.empty, event.usage)
        out.push({
          type: "STEP_FINISHED",
          stepName: this.step!,
          metadata: { [AgUiProtocol.metadataKey]: { finishReason: event.finishReason, usage: usageOf(event.usage)[0] } }
        })
        this.step = undefined
        this.assistant = undefined
        break
      }
      case "ToolResult": {
        this.closeAll(out)
        out.push(this.result(event.call))
        break
      }
      default:
        break
    }
    return out
  }

  /** The `TOOL_CALL_RESULT` of a resolved call. */
  private result(call: Messages.ToolCallPart): Event {
    this.reported.add(call.id)
    return {
      type: "TOOL_CALL_RESULT",
      messageId: this.nextId("result"),
      toolCallId: call.id,
      role: "tool",
      content: Messages.projectToolCall(call).result?.text ?? "",
      metadata: resultMetadata(call)
    }
  }

  /**
   * A `MESSAGES_SNAPSHOT` of the client's own messages (as it sent them) with the arguments of the
   * `edited` calls (call id -> the arguments that run, as JSON text) replaced: AG-UI has no event that
   * replaces a finished call's arguments, and without it the client's copy keeps the model's.
   * None when no message of the client carries one of those calls.
   */
  edited(messages: ReadonlyArray<AgUiProtocol.InputMessage>, edited: ReadonlyMap<string, string>): ReadonlyArray<Event> {
    let changed = false
    const patched = messages.map((message) => {
      const calls = message.role === "assistant" && Array.isArray(message.toolCalls) ? message.toolCalls : undefined
      if (calls === undefined) return message
      const toolCalls = calls.map((call: unknown) => {
        if (typeof call !== "object" || call === null) return call
        const { function: fn, id } = call as { readonly id?: unknown; readonly function?: unknown }
        const args = typeof id === "string" ? edited.get(id) : undefined
        if (args === undefined || typeof fn !== "object" || fn === null) return call
        changed = true
        return { ...call, function: { ...fn, arguments: args } }
      })
      return { ...message, toolCalls }
    })
    return changed ? [{ type: "MESSAGES_SNAPSHOT", messages: patched }] : []
  }

  /** The `TOOL_CALL_RESULT`s of calls resolved before the turn ran (cancelled by a steering message). */
  settled(calls: ReadonlyArray<Messages.ToolCallPart>): ReadonlyArray<Event> {
    const out: Array<Event> = []
    this.closeAll(out)
    for (const call of calls) out.push(this.result(call))
    return out
  }

  /**
   * The `TOOL_CALL_RESULT`s of calls that were unresolved in `before` (what the turn started from) and
   * are resolved in `after` (where it ended) but were not reported: the turn announces none for a
   * call whose result came in the step that also delivered a held user message.
   */
  unreported(before: Messages.Messages, after: Messages.Messages): ReadonlyArray<Event> {
    const open = new Set(Messages.toolCalls(before).filter((call) => !Messages.isResolved(call)).map((call) => call.id))
    const missing = Messages.toolCalls(after).filter((call) => open.has(call.id) && Messages.isResolved(call) && !this.reported.has(call.id))
    return missing.length === 0 ? [] : this.settled(missing)
  }

  /** `RUN_FINISHED` with `fields` (its outcome), after closing what is open, with the usage of this run's own model calls. */
  private finish(fields: Record<string, unknown>): ReadonlyArray<Event> {
    const out: Array<Event> = []
    this.closeAll(out)
    out.push({
      type: "RUN_FINISHED",
      threadId: this.threadId,
      runId: this.runId,
      ...fields,
      ...(this.usage === undefined ? {} : { usage: usageOf(this.usage) })
    })
    return out
  }

  /** Ends the run paused: `RUN_FINISHED` with an interrupt outcome. */
  paused(interrupts: ReadonlyArray<unknown>): ReadonlyArray<Event> {
    return this.finish({ outcome: { type: "interrupt", interrupts } })
  }

  /** `MESSAGES_SNAPSHOT`: the thread's messages as stored (see `snapshotOf`), for a client that connects. */
  snapshot(messages: ReadonlyArray<unknown>): Event {
    return { type: "MESSAGES_SNAPSHOT", messages }
  }

  /**
   * Ends a run that only reported the thread: `RUN_FINISHED` with the pending interrupts as its
   * interrupt outcome, or a success outcome (with the last answer's text as `result`, when there is one).
   */
  connected(interrupts: ReadonlyArray<unknown>, result: string | undefined): ReadonlyArray<Event> {
    return interrupts.length > 0
      ? this.paused(interrupts)
      : this.finish({ ...(result === undefined ? {} : { result }), outcome: { type: "success" } })
  }

  /** Ends the run complete: `RUN_FINISHED` with a success outcome and the answer's text as `result`. */
  completed(text: string): ReadonlyArray<Event> {
    return this.finish({ result: text, outcome: { type: "success" } })
  }

  /** Ends the run failed: `RUN_ERROR` with the refusal's code. */
  failed(error: AgUiError.Refused): ReadonlyArray<Event> {
    return [runError(error)]
  }
}

/** A `RUN_ERROR` event for a refusal (also the JSON body of a refusal answered with a status). */
export const runError = (error: AgUiError.Refused): Event => {
  const details = {
    ...(error.problems === undefined ? {} : { problems: error.problems }),
    ...(error.retryable ? { retryable: true, retryAfter: error.retryAfter } : {})
  }
  return {
    type: "RUN_ERROR",
    message: error.message,
    code: error.code,
    ...(Object.keys(details).length === 0 ? {} : { metadata: { [AgUiProtocol.metadataKey]: details } })
  }
}
