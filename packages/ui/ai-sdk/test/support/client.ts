/**
 * The client side of the protocol tests, with the AI SDK's own code: requests
 * shaped as `useChat`'s `DefaultChatTransport` sends them, the response read
 * with `parseJsonEventStream` and the SDK's `uiMessageChunkSchema` (every
 * chunk we write must pass it), and the assistant message built from it by
 * `readUIMessageStream`, as `useChat` builds it.
 */
import { UiChat, UiHttp, type UiMessageChunk } from "@chat-ts/ai-sdk-ui"
import type { Approver } from "@chat-ts/inbox"
import { parseJsonEventStream, readUIMessageStream, type UIMessage, type UIMessageChunk, uiMessageChunkSchema } from "ai"
import { Effect } from "effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

/** What a post gave: the status, headers, the refusal body or the chunks and the message they build. */
export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly error?: { readonly _tag: string; readonly message: string; readonly reason?: string; readonly problems?: ReadonlyArray<string> }
  readonly chunks: ReadonlyArray<UiMessageChunk.UiMessageChunk>
  readonly message?: UIMessage
}

/** Our chunks are the SDK's chunks (checked by the compiler). */
export const asSdkChunk = (chunk: UiMessageChunk.UiMessageChunk): UIMessageChunk => chunk

const read = async (response: Response, previous: UIMessage | undefined): Promise<Omit<Answer, "status" | "headers">> => {
  if (response.headers.get("content-type") !== "text/event-stream") return { error: (await response.json()) as NonNullable<Answer["error"]>, chunks: [] }
  const [forChunks, forMessage] = response.body!.tee()
  const chunks: Array<UiMessageChunk.UiMessageChunk> = []
  const parsed = parseJsonEventStream({ stream: forChunks, schema: uiMessageChunkSchema })
  for await (const result of parsed) {
    if (!result.success) throw new Error(`a chunk the AI SDK refuses: ${String(result.error)}`)
    chunks.push(result.value as UiMessageChunk.UiMessageChunk)
  }
  // An error chunk ends useChat's message with its error: there is no message to build.
  if (chunks.some((chunk) => chunk.type === "error")) return (await forMessage.cancel(), { chunks })
  const stream = parseJsonEventStream({ stream: forMessage, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<{ success: boolean; value?: UIMessageChunk }, UIMessageChunk>({
      transform: (result, controller) => {
        if (result.success) controller.enqueue(result.value!)
      }
    })
  )
  let message: UIMessage | undefined
  for await (const state of readUIMessageStream({ stream, ...(previous === undefined ? {} : { message: structuredClone(previous) }), terminateOnError: true })) message = state
  return { chunks, ...(message === undefined ? {} : { message: structuredClone(message) }) }
}

/** Posts a body to the endpoint (in process, the handler of `UiHttp`), bounded to 10 seconds. */
export const post = (
  body: unknown,
  options: { readonly user?: string | undefined; readonly headers?: Record<string, string>; readonly previous?: UIMessage } = {}
): Effect.Effect<Answer, never, UiChat.UiChat | Approver.Approver> =>
  Effect.gen(function*() {
    const request = new Request("http://127.0.0.1/api/chat", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(options.user === undefined ? { "x-test-user": "alice" } : options.user === "" ? {} : { "x-test-user": options.user }),
        ...options.headers
      },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
    const context = yield* Effect.context<UiChat.UiChat | Approver.Approver>()
    const response = HttpServerResponse.toWeb(yield* UiHttp.handle(HttpServerRequest.fromWeb(request)), { context })
    // As useChat does: a resume continues the last assistant message.
    const last = typeof body === "object" && body !== null && "messages" in body && Array.isArray(body.messages) ? body.messages.at(-1) : undefined
    const previous = options.previous ?? (last?.role === "assistant" ? last as UIMessage : undefined)
    const answer = yield* Effect.promise(() => read(response, previous)).pipe(Effect.timeout("10 seconds"), Effect.orDie)
    return { status: response.status, headers: response.headers, ...answer }
  })

let counter = 0

/** `useChat`'s request with a new user message. */
export const say = (chatId: string, text: string, history: ReadonlyArray<UIMessage> = [], messageId = `user-${++counter}`) => ({
  id: chatId,
  trigger: "submit-message",
  messages: [...history, { id: messageId, role: "user", parts: [{ type: "text", text }] }]
})

/** What `addToolApprovalResponse` does to the message: the approval-requested part of `approvalId` becomes approval-responded. */
export const respond = (message: UIMessage, approvalId: string, approved: boolean, reason?: string): UIMessage => ({
  ...message,
  parts: message.parts.map((part) =>
    "approval" in part && part.state === "approval-requested" && part.approval.id === approvalId
      ? { ...part, state: "approval-responded", approval: { ...part.approval, approved, ...(reason === undefined ? {} : { reason }) } } as unknown as typeof part
      : part
  )
})

/** `useChat`'s request after approval responses (the last message is the assistant's). */
export const resume = (chatId: string, message: UIMessage, extra: Record<string, unknown> = {}) => ({
  id: chatId,
  trigger: "submit-message",
  messageId: message.id,
  messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "…" }] }, message],
  ...extra
})

/** The approval requests of an answer, by tool call id. */
export const approvals = (answer: Answer): ReadonlyMap<string, string> =>
  new Map(answer.chunks.flatMap((chunk) => chunk.type === "tool-approval-request" ? [[chunk.toolCallId, chunk.approvalId] as const] : []))

/** The chunk types of an answer, in order. */
export const types = (answer: Answer): ReadonlyArray<string> => answer.chunks.map((chunk) => chunk.type)
