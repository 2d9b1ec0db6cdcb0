/**
 * Chat events to UI message chunks: one mapper per streamed turn, keeping
 * which text or reasoning block is open, whose tool input started, and
 * whether a step is open (a step holds a model call and the tool results of
 * its calls, as the AI SDK's steps do).
 *
 * @internal
 */
import type { ChatEvent } from "@chat-ts/core"
import * as DecisionPolicy from "@chat-ts/core/DecisionPolicy"
import * as Messages from "@chat-ts/core/Messages"
import * as PauseReason from "@chat-ts/core/PauseReason"
import type * as UiMessageChunk from "../UiMessageChunk.js"
import * as UiRequest from "../UiRequest.js"

type Chunk = UiMessageChunk.UiMessageChunk

const statusName = (status: Messages.ToolCallStatus): UiMessageChunk.CallData["status"] => {
  switch (status._tag) {
    case "Proposed":
    case "AwaitingApproval":
      return "awaiting-approval"
    case "Scheduled":
      return "scheduled"
    case "Approved":
      return "approved"
    case "Running":
      return "running"
    case "Completed":
      return "completed"
    case "Failed":
      return "failed"
    case "Rejected":
      return "rejected"
    case "Expired":
      return "expired"
    case "Cancelled":
      return "cancelled"
  }
}

/**
 * Who asked for a call that waits (every sender of the user messages it answers, each id once), and whether one of
 * those messages has no sender; nothing for a call that no longer waits, or without the messages.
 */
const requestersOf = (
  call: Messages.ToolCallPart,
  messages: Messages.Messages | undefined
): { readonly requesters?: ReadonlyArray<string>; readonly requesterUnknown?: boolean } => {
  if (messages === undefined || (call.status._tag !== "AwaitingApproval" && call.status._tag !== "Scheduled")) return {}
  const asked = DecisionPolicy.requestersOf(messages, call.id)
  const ids = [...new Set(asked.flatMap((person) => person === undefined ? [] : [person.id]))]
  return { ...(ids.length === 0 ? {} : { requesters: ids }), ...(asked.some((person) => person === undefined) ? { requesterUnknown: true } : {}) }
}

/** What chat-ts says about a call, for its `data-chat-ts-call` part; `messages` (the conversation) name who asked for a call that waits. */
export const callData = (call: Messages.ToolCallPart, parameters: unknown, messages?: Messages.Messages): UiMessageChunk.CallData => {
  const status = call.status
  const decision = "decision" in status ? status.decision : undefined
  return {
    callId: call.id,
    tool: call.name,
    status: statusName(status),
    arguments: Messages.effectiveArguments(call),
    edited: "editedArguments" in status && status.editedArguments !== undefined,
    ...(status._tag === "AwaitingApproval" && status.expiresAt !== undefined ? { deadline: status.expiresAt } : {}),
    ...(status._tag === "Scheduled" ? { scheduledAt: status.at } : {}),
    ...(decision === undefined ? {} : { decidedBy: decision.by, decidedAt: decision.at }),
    ...((status._tag === "Rejected" || status._tag === "Cancelled") && status.reason !== undefined ? { reason: status.reason } : {}),
    ...(status._tag === "AwaitingApproval" && parameters !== undefined ? { parameters } : {}),
    ...("policy" in status && status.policy !== undefined ? { policy: status.policy } : {}),
    ...requestersOf(call, messages),
    ...votesOf(status),
    ...(status._tag === "AwaitingApproval" && status.review !== undefined ? { review: status.review } : {}),
    ...(status._tag === "Expired" && status.approvedLate === true ? { approvedLate: true } : {}),
    ...(status._tag === "Cancelled" ? { cancelledBy: status.by } : {})
  }
}

/** The quorum's votes: so far while a call waits, all of them once it was approved. */
const votesOf = (status: Messages.ToolCallStatus): { readonly votes?: ReadonlyArray<UiMessageChunk.CallVote> } => {
  const votes = status._tag === "AwaitingApproval" || status._tag === "Scheduled"
    ? status.votes
    : "decision" in status
    ? status.decision?.votes
    : undefined
  return votes === undefined || votes.length === 0
    ? {}
    : { votes: votes.map((vote) => vote.roles === undefined ? { by: vote.by, at: vote.at } : { by: vote.by, at: vote.at, roles: vote.roles }) }
}

const dataPart = (call: Messages.ToolCallPart, parameters: unknown, messages?: Messages.Messages): Chunk => ({
  type: "data-chat-ts-call",
  id: call.id,
  data: callData(call, parameters, messages)
})

const errorText = (value: unknown): string => typeof value === "string" ? value : JSON.stringify(value)

/** The chunks of a call's answer. */
const resultChunks = (call: Messages.ToolCallPart): ReadonlyArray<Chunk> => {
  const status = call.status
  switch (status._tag) {
    case "Completed":
      return [{ type: "tool-output-available", toolCallId: call.id, output: status.result }]
    case "Failed":
      return [{ type: "tool-output-error", toolCallId: call.id, errorText: errorText(status.error) }]
    case "Rejected":
      // A person's rejection answers the approval request; a policy's has no request to answer.
      return status.by === "user"
        ? [{ type: "tool-output-denied", toolCallId: call.id }]
        : [{ type: "tool-output-error", toolCallId: call.id, errorText: Messages.rejectionText(status) }]
    case "Expired":
      // Nobody decided in time: not a person's no, so an error with what the model is told.
      return [{ type: "tool-output-error", toolCallId: call.id, errorText: Messages.expiryText(status) }]
    case "Cancelled":
      // Withdrawn before it ran (a new message, the requester, an operator): an error with what the model is told.
      return [{ type: "tool-output-error", toolCallId: call.id, errorText: Messages.cancellationText(status) }]
    default:
      return []
  }
}

/** A mapper of one streamed turn. */
export interface Mapper {
  /** The chunks of one event (none for the final events' `finish`, which the caller writes). */
  readonly map: (event: ChatEvent.ChatEvent) => ReadonlyArray<Chunk>
  /** Closes what is open (a block, a step). */
  readonly close: () => ReadonlyArray<Chunk>
  /** The `data-chat-ts-call` part of a call, as it stands. */
  readonly data: (call: Messages.ToolCallPart) => Chunk
}

/** Makes the mapper of a turn of `conversationId`; `parameters` gives a tool's JSON Schema. */
export const make = (conversationId: string, parameters: (tool: string) => unknown): Mapper => {
  let step: "none" | "open" | "ending" = "none"
  let block: { readonly kind: "text" | "reasoning"; readonly id: string } | undefined
  let blocks = 0
  const started = new Set<string>()

  const endBlock = (out: Array<Chunk>) => {
    if (block !== undefined) out.push({ type: `${block.kind}-end`, id: block.id })
    block = undefined
  }
  const endStep = (out: Array<Chunk>) => {
    endBlock(out)
    if (step !== "none") out.push({ type: "finish-step" })
    step = "none"
  }
  /** Model output: a new step starts when the last one ended (its results are in). */
  const modelOutput = (out: Array<Chunk>) => {
    if (step === "ending") endStep(out)
    if (step === "none") out.push({ type: "start-step" })
    step = "open"
  }
  const delta = (out: Array<Chunk>, kind: "text" | "reasoning", text: string) => {
    modelOutput(out)
    if (block?.kind !== kind) {
      endBlock(out)
      block = { kind, id: `${kind}-${++blocks}` }
      out.push({ type: `${kind}-start`, id: block.id })
    }
    out.push({ type: `${kind}-delta`, id: block.id, delta: text })
  }
  const pending = (messages: Messages.Messages, reason: PauseReason.PauseReason, out: Array<Chunk>) => {
    for (const id of PauseReason.toolIds(reason)) {
      const call = Messages.findTool(messages, id)
      if (call === undefined) continue
      if (call.status._tag === "AwaitingApproval") {
        out.push({ type: "tool-approval-request", approvalId: UiRequest.approvalId(conversationId, id), toolCallId: id })
      }
      out.push(dataPart(call, parameters(call.name), messages))
    }
  }

  const map = (event: ChatEvent.ChatEvent): ReadonlyArray<Chunk> => {
    const out: Array<Chunk> = []
    switch (event._tag) {
      case "TextDelta":
        delta(out, "text", event.text)
        break
      case "ReasoningDelta":
        delta(out, "reasoning", event.text)
        break
      case "ToolCallDelta":
        modelOutput(out)
        endBlock(out)
        if (!started.has(event.id)) {
          started.add(event.id)
          out.push({ type: "tool-input-start", toolCallId: event.id, toolName: event.name })
        }
        if (event.argumentsDelta !== "") out.push({ type: "tool-input-delta", toolCallId: event.id, inputTextDelta: event.argumentsDelta })
        break
      case "ToolCall":
        modelOutput(out)
        endBlock(out)
        out.push({ type: "tool-input-available", toolCallId: event.call.id, toolName: event.call.name, input: Messages.parsedArguments(event.call) })
        break
      case "ToolResult":
        endBlock(out)
        // Results of calls decided before this request open a step of their own.
        if (step === "none") (out.push({ type: "start-step" }), step = "ending")
        out.push(...resultChunks(event.call), dataPart(event.call, undefined))
        break
      case "StepFinished":
        endBlock(out)
        if (step === "open") step = "ending"
        break
      case "Paused":
        endBlock(out)
        pending(event.messages, event.reason, out)
        endStep(out)
        break
      case "Completed":
        endStep(out)
        break
      case "Waiting":
        break
    }
    return out
  }
  return { map, close: () => { const out: Array<Chunk> = []; endStep(out); return out }, data: (call) => dataPart(call, undefined) }
}
