/**
 * Helpers shared by the Chat Completions and Responses mappings.
 *
 * @internal
 */
import type { LanguageModel, Messages } from "@chat-ts/core"
import * as ChatError from "@chat-ts/core/ChatError"
import * as Result from "effect/Result"
import { randomUUID } from "node:crypto"

/** The key of this package's entry in `providerMetadata`. */
export const metadataKey = "openai"

/** A `data:` URL for base64 bytes, or the URL itself. */
export const fileUrl = (file: Messages.FilePart): string =>
  file.data._tag === "Base64" ? `data:${file.mediaType};base64,${file.data.base64}` : file.data.url

/** Whether a file is an image. */
export const isImage = (file: Messages.FilePart): boolean => file.mediaType.toLowerCase().startsWith("image/")

/** A fresh tool call id, for servers that send a call without one. */
export const newCallId = (): string => `call_${randomUUID().replace(/-/g, "")}`

/** The call id the server sent, or a fresh one when it is missing, `null` or empty (llama.cpp). */
export const callIdOf = (id: unknown): string => typeof id === "string" && id !== "" ? id : newCallId()

/** Tool call arguments as text: a string as sent; a JSON value (llama.cpp, TGI send objects) as its JSON text. */
export const argumentsText = (args: unknown): string =>
  typeof args === "string" ? args : args === undefined || args === null ? "" : JSON.stringify(args)

/** The text parts of a message, concatenated (as `Messages.textOf`). */
export const textOf = (message: Messages.Message): string => {
  let out = ""
  for (const part of message.parts) if (part._tag === "Text") out += part.text
  return out
}

/** An `InvalidRequest` raised before sending: the request cannot be expressed on this API. */
export const unsupported = (message: string): ChatError.InvalidRequest => new ChatError.InvalidRequest({ message })

/** Fails when a system message holds anything but text. */
export const systemText = (message: Messages.Message): Result.Result<string, ChatError.InvalidRequest> =>
  message.parts.every((part) => part._tag === "Text")
    ? Result.succeed(textOf(message))
    : Result.fail(unsupported("A system message may only hold text parts."))

/** A string field of an unknown value (for fields the SDK types do not declare). */
export const stringField = (u: unknown, key: string): string | undefined => {
  if (typeof u !== "object" || u === null) return undefined
  const value: unknown = Reflect.get(u, key)
  return typeof value === "string" ? value : undefined
}

/** The string `providerMetadata.openai[key]` of a message or part, if any. */
export const metadataString = (
  metadata: { readonly [key: string]: unknown } | undefined,
  key: string
): string | undefined => stringField(metadata?.[metadataKey], key)

/** The largest token count taken as sent; anything above is no count at all. */
const maxCount = Number.MAX_SAFE_INTEGER

/**
 * A token count as servers send it, validated: a whole number from 0 up, or
 * a string of digits (`"07"` → 7); anything else (`null`, `NaN`, negative,
 * fractional, other strings) is no count.
 */
export const tokenCount = (u: unknown): number | undefined => {
  const n = typeof u === "string" && /^\d{1,15}$/.test(u.trim()) ? Number(u.trim()) : u
  return typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= maxCount ? n : undefined
}

/** A usage from the counts as sent: validated (see `tokenCount`), 0 for a missing input or output count, optional ones left out. */
export const usage = (counts: {
  readonly inputTokens: unknown
  readonly outputTokens: unknown
  readonly reasoningTokens?: unknown
  readonly cachedInputTokens?: unknown
}): LanguageModel.Response["usage"] => {
  const reasoningTokens = tokenCount(counts.reasoningTokens)
  const cachedInputTokens = tokenCount(counts.cachedInputTokens)
  return {
    inputTokens: tokenCount(counts.inputTokens) ?? 0,
    outputTokens: tokenCount(counts.outputTokens) ?? 0,
    ...(reasoningTokens === undefined ? {} : { reasoningTokens }),
    ...(cachedInputTokens === undefined ? {} : { cachedInputTokens })
  }
}

/** Copies `value` under `key` when it is defined (for exact optional properties). */
export const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** Runs `f` over items, stopping at the first failure. */
export const traverse = <A, B, E>(
  items: ReadonlyArray<A>,
  f: (item: A) => Result.Result<B, E>
): Result.Result<Array<B>, E> => {
  const out: Array<B> = []
  for (const item of items) {
    const result = f(item)
    if (Result.isFailure(result)) return Result.fail(result.failure)
    out.push(result.success)
  }
  return Result.succeed(out)
}
