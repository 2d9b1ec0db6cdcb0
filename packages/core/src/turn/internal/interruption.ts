/**
 * Input while the model answers (`Turn.Event.InputArrived`): the pieces of the
 * rule that need no step. What the interrupted answer becomes, how a burst of
 * input enters the messages, and how many restarts the turn already made, read
 * from the messages themselves (so a resumed turn counts the same).
 *
 * The mark: the first user message of each burst carries
 * `providerMetadata["chat-ts/input"]` (`{ interrupted }`, and the interrupted
 * call's `usage` when its answer was dropped). A user message without it is a
 * turn's origin; the marks after it with `interrupted: true` are its restarts.
 * Only the reducer writes the mark: it is taken off whatever input claims one.
 *
 * @internal
 */
import type * as S from "../../internal/schema.js"
import * as Usage from "../../data/Usage.js"

/** The key of the mark in a user message's `providerMetadata`. */
export const markKey = "chat-ts/input"

/** What the mark holds. */
export interface Mark {
  /** The input ended a model call that was streaming. */
  readonly interrupted: boolean
  /** That call's usage, when its answer was dropped (kept answers hold their own). */
  readonly usage?: Usage.Usage | undefined
}

/** The mark on a message, if it is a user message that carries a well-formed one. */
export const markOf = (message: S.Message): Mark | undefined => {
  if (message.role !== "user") return undefined
  const mark = message.providerMetadata?.[markKey]
  if (typeof mark !== "object" || mark === null || Array.isArray(mark)) return undefined
  const interrupted = (mark as { readonly interrupted?: unknown }).interrupted
  if (typeof interrupted !== "boolean") return undefined
  const usage = (mark as { readonly usage?: unknown }).usage
  return isUsage(usage) ? { interrupted, usage } : { interrupted }
}

const isUsage = (value: unknown): value is Usage.Usage =>
  typeof value === "object" && value !== null &&
  typeof (value as { inputTokens?: unknown }).inputTokens === "number" &&
  typeof (value as { outputTokens?: unknown }).outputTokens === "number"

/** Why `message` cannot be input to a streaming turn, if it cannot: only user messages of text and files can. */
export const inputProblem = (message: unknown): string | undefined => {
  if (typeof message !== "object" || message === null || !Array.isArray((message as S.Message).parts)) {
    return "it is not a message with parts"
  }
  const m = message as S.Message
  if (m.role !== "user") return `it is a ${String(m.role)} message, not a user message`
  if (m.parts.length === 0) return "it has no parts"
  const other = m.parts.find((part) => typeof part !== "object" || part === null || (part._tag !== "Text" && part._tag !== "File"))
  return other === undefined ? undefined : `it holds a ${String(other?._tag)} part; only text and files can be input`
}

/** `message` without the mark (only the reducer writes it). */
const unmarked = (message: S.Message): S.Message => {
  const metadata = message.providerMetadata
  if (metadata === undefined || !(markKey in metadata)) return message
  const { [markKey]: _, ...rest } = metadata
  const { providerMetadata: __, ...base } = message
  return Object.keys(rest).length === 0 ? base : { ...base, providerMetadata: rest }
}

/** Whether two input messages may be merged into one: the same sender, and no metadata of their own. */
const mergeable = (a: S.Message, b: S.Message): boolean =>
  a.providerMetadata === undefined && b.providerMetadata === undefined &&
  JSON.stringify(a.sender ?? null) === JSON.stringify(b.sender ?? null)

/**
 * A burst of input as the user messages it becomes, in order: consecutive messages of one sender
 * (without metadata of their own) merged into one, the first one marked with `mark`.
 */
export const burst = (input: ReadonlyArray<S.Message>, mark: Mark): Array<S.Message> => {
  const out: Array<S.Message> = []
  for (const given of input) {
    const message: S.Message = {
      role: "user",
      parts: given.parts,
      ...(given.sender === undefined ? {} : { sender: given.sender }),
      ...(given.providerMetadata === undefined ? {} : { providerMetadata: given.providerMetadata })
    }
    const clean = unmarked(message)
    const last = out[out.length - 1]
    if (last !== undefined && mergeable(last, clean)) out[out.length - 1] = { ...last, parts: [...last.parts, ...clean.parts] }
    else out.push(clean)
  }
  const first = out[0]!
  const value = mark.usage === undefined ? { interrupted: mark.interrupted } : { interrupted: mark.interrupted, usage: mark.usage }
  out[0] = { ...first, providerMetadata: { ...first.providerMetadata, [markKey]: value } }
  return out
}

/**
 * The interrupted answer as it is kept: an assistant message with what the model said so far, its
 * calls (whole or begun) failed with `error` (none ever runs), no claimed grants or policies, no mark;
 * `undefined` when it said nothing.
 */
export const keptAnswer = (answer: S.Message, error: string): S.Message | undefined => {
  if (!Array.isArray(answer.parts) || answer.parts.length === 0) return undefined
  const parts = answer.parts.map((part): S.Part => {
    if (part._tag !== "ToolCall") return part
    const { decidedUnder: _, ...call } = part
    return { ...call, status: { _tag: "Failed", error } }
  })
  return {
    role: "assistant",
    parts,
    finishReason: "other",
    ...(answer.usage === undefined ? {} : { usage: answer.usage }),
    ...(answer.providerMetadata === undefined ? {} : { providerMetadata: answer.providerMetadata })
  }
}

/** Index of the last user message at or before `from` (`-1`: none). */
const lastUserAtOrBefore = (messages: ReadonlyArray<S.Message>, from: number): number => {
  let i = from
  while (i >= 0 && messages[i]!.role !== "user") i--
  return i
}

/**
 * Where the turn that `turnStart` (just after the last user message) belongs to began: just after
 * its origin, the last user message without a mark. Input delivered during the turn does not start a new one.
 */
export const originOf = (messages: ReadonlyArray<S.Message>, turnStart: number): number => {
  let i = lastUserAtOrBefore(messages, turnStart - 1)
  while (i >= 0 && markOf(messages[i]!) !== undefined) i = lastUserAtOrBefore(messages, i - 1)
  return i + 1
}

/** How many model calls input interrupted in the turn that `turnStart` belongs to. */
export const restartsOf = (messages: ReadonlyArray<S.Message>, turnStart: number): number => {
  let restarts = 0
  for (let i = originOf(messages, turnStart); i < messages.length; i++) {
    if (markOf(messages[i]!)?.interrupted === true) restarts++
  }
  return restarts
}

/** The usage recorded on the marks from `from` on: the calls whose answers were dropped. */
export const droppedUsage = (messages: ReadonlyArray<S.Message>, from: number, upTo: number): Usage.Usage | undefined => {
  let usage: Usage.Usage | undefined
  for (let i = from; i < upTo; i++) {
    const mark = messages[i]!.role === "user" ? markOf(messages[i]!) : undefined
    if (mark?.usage !== undefined) usage = Usage.add(usage ?? Usage.empty, mark.usage)
  }
  return usage
}
