/**
 * A stored conversation as AG-UI messages, for the `MESSAGES_SNAPSHOT` of a
 * client connecting to a thread (a page reloaded mid-pause): user messages
 * (with the AG-UI id they were sent with), the model's reasoning and answers
 * with their tool calls (the arguments each runs with), and a tool message
 * per resolved call (what the model was told, and how it ended in
 * `metadata["chat-ts"]`, as on `TOOL_CALL_RESULT`: a call a steering message
 * cancelled reads `Cancelled` by `user-message`, with the reason). Messages
 * held on a paused response (the `"queue"` rule) follow it. System messages
 * are not sent.
 *
 * @internal
 */
import * as Messages from "@chat-ts/core/Messages"
import * as AgUiProtocol from "../AgUiProtocol.js"
import { messageIdOf } from "./decisions.js"
import { resultMetadata } from "./events.js"

type Snapshotted = Record<string, unknown> & { readonly id: string; readonly role: string }

/** The AG-UI ids of the messages held on a response (as `decisions.ts` records them). */
const heldIds = (message: Messages.Message): ReadonlyArray<string> => {
  const entry = message.providerMetadata?.[AgUiProtocol.metadataKey]
  const ids = typeof entry === "object" && entry !== null ? (entry as { readonly heldMessageIds?: unknown }).heldMessageIds : undefined
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : []
}

const textOf = (parts: ReadonlyArray<Messages.Part>, tag: "Text" | "Reasoning"): string =>
  parts.flatMap((part) => part._tag === tag ? [part.text] : []).join("")

/** The messages of `messages` (thread `threadId`) as AG-UI messages, in order. */
export const snapshotOf = (threadId: string, messages: Messages.Messages): ReadonlyArray<Snapshotted> => {
  const out: Array<Snapshotted> = []
  messages.forEach((message, index) => {
    if (message.role === "system") return
    if (message.role === "user") {
      out.push({ id: messageIdOf(message) ?? `${threadId}:${index}`, role: "user", content: Messages.textOf(message) })
      return
    }
    const reasoning = textOf(message.parts, "Reasoning")
    if (reasoning !== "") out.push({ id: `${threadId}:${index}:reasoning`, role: "reasoning", content: reasoning })
    const text = textOf(message.parts, "Text")
    const calls = Messages.toolCallsOf(message)
    out.push({
      id: `${threadId}:${index}`,
      role: "assistant",
      ...(text === "" ? {} : { content: text }),
      ...(calls.length === 0
        ? {}
        : { toolCalls: calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: Messages.effectiveArguments(call) } })) })
    })
    for (const call of calls) {
      if (!Messages.isResolved(call)) continue
      out.push({
        id: `${threadId}:${call.id}:result`,
        role: "tool",
        toolCallId: call.id,
        content: Messages.projectToolCall(call).result?.text ?? "",
        metadata: resultMetadata(call)
      })
    }
    const held = heldIds(message)
    message.queued?.forEach((queued, n) => {
      const content = queued.parts.flatMap((part) => part._tag === "Text" ? [part.text] : []).join("")
      const own = messageIdOf({ role: "user", parts: [], ...(queued.providerMetadata === undefined ? {} : { providerMetadata: queued.providerMetadata }) })
      out.push({ id: own ?? held[n] ?? `${threadId}:${index}:held:${n}`, role: "user", content })
    })
  })
  return out
}
