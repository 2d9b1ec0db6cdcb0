/**
 * The stored conversation as `useChat`'s initial messages: what a page loads
 * when it starts (after a reload, in a second tab) so that it shows the
 * conversation as the store holds it, calls that wait included, instead of an
 * empty chat whose next message would steer them away unseen.
 *
 * Each user message is one UI message (its id is the one the client sent, when
 * the endpoint kept it); the model's responses between two user messages are
 * one assistant UI message (a `step-start` per model response), as `useChat`
 * builds them from the stream. A call is a tool part in the state the stream
 * would have left it in (`approval-requested` with its approval id while it
 * waits for a person, `output-available`, `output-denied` for a person's no,
 * `output-error` with what the model is told for a failure, a policy's
 * rejection, an expiry or a cancellation, `input-available` while scheduled,
 * approved or running), followed by its `data-chat-ts-call` part (who decided,
 * the deadline, the JSON Schema an edit must fit, `status: "cancelled"` with
 * the reason when steering withdrew it). System messages are not shown;
 * files are not carried (their text is).
 *
 * @since 0.2.0
 */
import * as Messages from "@chat-ts/core/Messages"
import * as Chunks from "./internal/chunks.js"
import type * as UiMessageChunk from "./UiMessageChunk.js"
import * as UiRequest from "./UiRequest.js"

/** What the endpoint answers to a page loading a conversation (`GET /api/chat?id=…`). */
export interface History {
  /** The conversation (the chat id). */
  readonly conversationId: string
  /** The stored version (0: nothing stored yet). */
  readonly version: number
  /** `useChat`'s initial messages: `useChat({ id, messages })`. */
  readonly messages: ReadonlyArray<UiMessageChunk.UiMessage>
  /**
   * A turn looks under way (`isRunning`): the last stored message is the user's (no answer stored
   * yet) or a call is `Running`. A page shows that the answer is still being written and loads
   * again a little later (bounded: a turn that failed before answering leaves the same state).
   */
  readonly running: boolean
}

/**
 * Whether the stored conversation looks mid-turn: its last message (system messages aside) is the
 * user's, or a call is `Running`. The store keeps no sign of a held lease, so a turn that failed
 * before answering reads the same: a page loads again a few times, then stops.
 */
export const isRunning = (messages: Messages.Messages): boolean =>
  messages.filter((message) => message.role !== "system").at(-1)?.role === "user" ||
  Messages.toolCalls(messages).some((call) => call.status._tag === "Running")

/** The key under a user message's `providerMetadata` that keeps the client's message id (as `UiChat.metadataKey`). */
const metadataKey = "@chat-ts/ai-sdk-ui"

type Part = UiMessageChunk.UiMessage["parts"][number]

const keptId = (providerMetadata: Messages.Message["providerMetadata"]): string | undefined => {
  const kept = providerMetadata?.[metadataKey]
  const id = typeof kept === "object" && kept !== null && "messageId" in kept ? kept.messageId : undefined
  return typeof id === "string" && id !== "" ? id : undefined
}

const errorText = (value: unknown): string => typeof value === "string" ? value : JSON.stringify(value)

/** A call's tool part, in the state the UI message stream leaves it in. */
const toolPart = (conversationId: string, call: Messages.ToolCallPart): Part => {
  const status = call.status
  const base = { type: `tool-${call.name}`, toolCallId: call.id, input: Messages.parsedArguments(call) }
  const approvalId = UiRequest.approvalId(conversationId, call.id)
  const decided = Messages.decisionOf(call).decision !== undefined
  switch (status._tag) {
    case "AwaitingApproval":
      return { ...base, state: "approval-requested", approval: { id: approvalId } }
    case "Completed":
      return { ...base, state: "output-available", output: status.result, ...(decided ? { approval: { id: approvalId, approved: true } } : {}) }
    case "Failed":
      return { ...base, state: "output-error", errorText: errorText(status.error), ...(decided ? { approval: { id: approvalId, approved: true } } : {}) }
    case "Rejected":
      return status.by === "user"
        ? { ...base, state: "output-denied", approval: { id: approvalId, approved: false, ...(status.reason === undefined ? {} : { reason: status.reason }) } }
        : { ...base, state: "output-error", errorText: Messages.rejectionText(status) }
    case "Expired":
      return { ...base, state: "output-error", errorText: Messages.expiryText(status) }
    case "Cancelled":
      return { ...base, state: "output-error", errorText: Messages.cancellationText(status) }
    case "Proposed":
    case "Scheduled":
    case "Approved":
    case "Running":
      return { ...base, state: "input-available" }
  }
}

/** The parts of one stored model response: a step, its reasoning, text and calls (each with its data part). */
const responseParts = (
  conversationId: string,
  message: Messages.Message,
  parameters: (tool: string) => unknown,
  messages: Messages.Messages
): ReadonlyArray<Part> => {
  const out: Array<Part> = [{ type: "step-start" }]
  for (const part of message.parts) {
    switch (part._tag) {
      case "Text":
        if (part.text !== "") out.push({ type: "text", text: part.text, state: "done" })
        break
      case "Reasoning":
        if (part.text !== "") out.push({ type: "reasoning", text: part.text, state: "done" })
        break
      case "ToolCall":
        out.push(toolPart(conversationId, part), { type: "data-chat-ts-call", id: part.id, data: Chunks.callData(part, parameters(part.name), messages) })
        break
      case "File":
        break
    }
  }
  return out
}

/** A user's message as a UI message. */
const userMessage = (id: string, text: string): UiMessageChunk.UiMessage => ({ id, role: "user", parts: [{ type: "text", text }] })

/**
 * The UI messages of a stored conversation, for `useChat({ messages })`; `parameters` gives a tool's
 * JSON Schema (shown with a call that waits for approval, for an edit).
 */
export const toUiMessages = (
  conversationId: string,
  messages: Messages.Messages,
  parameters: (tool: string) => unknown = () => undefined
): ReadonlyArray<UiMessageChunk.UiMessage> => {
  const out: Array<UiMessageChunk.UiMessage> = []
  let assistant: { id: string; parts: Array<Part> } | undefined
  const close = () => {
    if (assistant !== undefined) out.push({ id: assistant.id, role: "assistant", metadata: { conversationId }, parts: assistant.parts })
    assistant = undefined
  }
  messages.forEach((message, index) => {
    if (message.role === "system") return
    if (message.role === "user") {
      close()
      out.push(userMessage(keptId(message.providerMetadata) ?? `${conversationId}:${index}`, Messages.textOf(message)))
      return
    }
    assistant ??= { id: `${conversationId}:${index}`, parts: [] }
    assistant.parts.push(...responseParts(conversationId, message, parameters, messages))
    // Messages sent while its calls wait, held on the response until they are resolved: shown after it.
    message.queued?.forEach((held, n) => {
      close()
      const text = held.parts.flatMap((part) => part._tag === "Text" ? [part.text] : []).join("")
      out.push(userMessage(keptId(held.providerMetadata) ?? `${conversationId}:${index}:held:${n}`, text))
    })
  })
  close()
  return out
}
