/**
 * Helpers shared by the Chat Completions and Responses mappings.
 *
 * @internal
 */
import { ChatError, type LanguageModel, type Messages } from "@chat-ts/core"
import * as Either from "effect/Either"
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
export const systemText = (message: Messages.Message): Either.Either<string, ChatError.InvalidRequest> =>
  message.parts.every((part) => part._tag === "Text")
    ? Either.right(textOf(message))
    : Either.left(unsupported("A system message may only hold text parts."))

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

/** A usage without the optional counts the provider did not report. */
export const usage = (counts: {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly reasoningTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
}): LanguageModel.Response["usage"] => ({
  inputTokens: counts.inputTokens,
  outputTokens: counts.outputTokens,
  ...(counts.reasoningTokens === undefined ? {} : { reasoningTokens: counts.reasoningTokens }),
  ...(counts.cachedInputTokens === undefined ? {} : { cachedInputTokens: counts.cachedInputTokens })
})

/** Copies `value` under `key` when it is defined (for exact optional properties). */
export const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** Runs `f` over items, stopping at the first failure. */
export const traverse = <A, B, E>(
  items: ReadonlyArray<A>,
  f: (item: A) => Either.Either<B, E>
): Either.Either<Array<B>, E> => {
  const out: Array<B> = []
  for (const item of items) {
    const result = f(item)
    if (Either.isLeft(result)) return Either.left(result.left)
    out.push(result.right)
  }
  return Either.right(out)
}
