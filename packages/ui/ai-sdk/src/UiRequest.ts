/**
 * The request `useChat` sends (its stock `DefaultChatTransport`): the chat id,
 * the client's copy of the messages, the trigger. Only the last message is
 * read, and only for what the client asks now: a new user message (its id and
 * text), or the approval responses `addToolApprovalResponse` wrote into the
 * tool parts of the last assistant message. The rest of the client's history
 * is never read: the store holds the conversation.
 *
 * Approval ids name their conversation: `<base64url(conversation id)>.<call id>`,
 * so an approval carried to another chat is recognised and refused.
 *
 * @since 0.2.0
 */
import * as Messages from "@chat-ts/core/Messages"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as UiError from "./UiError.js"

/** One approval response of the client. */
export interface ApprovalResponse {
  readonly approvalId: string
  readonly toolCallId: string
  readonly approved: boolean
  readonly reason?: string
}

/** What a request asks. */
export type Input =
  | {
    readonly _tag: "Message"
    readonly chatId: string
    readonly messageId: string
    readonly text: string
    /**
     * `regenerate()` (trigger `regenerate-message`): a message the store holds already answered
     * again (see `UiChat`); one it does not hold is sent as new.
     */
    readonly regenerate?: boolean
  }
  | {
    readonly _tag: "Decisions"
    readonly chatId: string
    readonly responses: ReadonlyArray<ApprovalResponse>
    /** Edited arguments by approval id (own keys only). */
    readonly edits: ReadonlyMap<string, unknown>
  }

/** The longest chat id, message id, or user message accepted. */
export const limits = { id: 200, text: 100_000, messages: 10_000, parts: 1_000 } as const

const Id = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(limits.id))

const Envelope = Schema.Struct({
  id: Id,
  messages: Schema.Array(Schema.Struct({
    id: Schema.String.check(Schema.isMaxLength(limits.id)),
    role: Schema.Literals(["system", "user", "assistant"]),
    parts: Schema.Array(Schema.Unknown).check(Schema.isMaxLength(limits.parts))
  })).check(Schema.isMinLength(1), Schema.isMaxLength(limits.messages)),
  trigger: Schema.optional(Schema.Literals(["submit-message", "regenerate-message"])),
  chatTs: Schema.optional(Schema.Struct({ edits: Schema.optional(Schema.Unknown) }))
})

const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

const RespondedPart = Schema.Struct({
  type: Schema.String,
  toolCallId: Id,
  state: Schema.Literal("approval-responded"),
  approval: Schema.Struct({ id: Id, approved: Schema.Boolean, reason: Schema.optional(Schema.String.check(Schema.isMaxLength(10_000))) })
})

const decodeEnvelope = Schema.decodeUnknownResult(Envelope)
const decodeText = Schema.decodeUnknownOption(TextPart)
const decodeResponded = Schema.decodeUnknownOption(RespondedPart)

const bad = (message: string) => Result.fail(new UiError.BadRequest({ message }))

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Reads a request body (JSON text; a key given twice or a `"__proto__"` key is refused). */
export const parse = (body: string): Result.Result<Input, UiError.BadRequest> => {
  const json = Messages.parseJson(body)
  if (Result.isFailure(json)) return bad(`the body is not JSON a chat can read: ${json.failure}`)
  const envelope = decodeEnvelope(json.success)
  if (Result.isFailure(envelope)) return bad(`not a useChat request: ${envelope.failure.message}`)
  const { chatTs, id, messages, trigger } = envelope.success
  const last = messages[messages.length - 1]!
  if (last.role === "user") {
    const text = last.parts.flatMap((part) => Option.toArray(decodeText(part))).map((part) => part.text).join("")
    if (last.id === "") return bad("the user message has no id")
    if (text.trim() === "") return bad("the user message has no text")
    if (text.length > limits.text) return bad(`the user message is longer than ${limits.text} characters`)
    return Result.succeed({ _tag: "Message", chatId: id, messageId: last.id, text, ...(trigger === "regenerate-message" ? { regenerate: true } : {}) })
  }
  if (trigger === "regenerate-message") return bad("regenerate-message must end with the user message whose answer is regenerated")
  if (last.role !== "assistant") return bad("the last message is neither the user's nor the assistant's")
  const responses = last.parts.flatMap((part) => Option.toArray(decodeResponded(part))).map((part): ApprovalResponse => ({
    approvalId: part.approval.id,
    toolCallId: part.toolCallId,
    approved: part.approval.approved,
    ...(part.approval.reason === undefined ? {} : { reason: part.approval.reason })
  }))
  const edits = chatTs?.edits
  if (edits !== undefined && !isPlainObject(edits)) return bad("chatTs.edits must be an object of edited arguments by approval id")
  return Result.succeed({ _tag: "Decisions", chatId: id, responses, edits: new Map(Object.entries(edits ?? {})) })
}

/** The approval id of call `callId` of conversation `conversationId`. */
export const approvalId = (conversationId: string, callId: string): string =>
  `${Buffer.from(conversationId, "utf8").toString("base64url")}.${callId}`

/** The conversation and call an approval id names, if it is one. */
export const parseApprovalId = (id: string): { readonly conversationId: string; readonly callId: string } | undefined => {
  const dot = id.indexOf(".")
  if (dot <= 0 || dot === id.length - 1) return undefined
  const encoded = id.slice(0, dot)
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined
  const conversationId = Buffer.from(encoded, "base64url").toString("utf8")
  return approvalId(conversationId, id.slice(dot + 1)) === id ? { conversationId, callId: id.slice(dot + 1) } : undefined
}
