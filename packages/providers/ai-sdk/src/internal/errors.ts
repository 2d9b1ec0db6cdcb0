/**
 * The one mapping from what an AI SDK model throws (or puts in an `error`
 * stream part) to core's typed `ChatError.ModelError`s. The AI SDK's errors
 * are recognised by their markers (`APICallError.isInstance`…), so a model
 * built on another copy of `@ai-sdk/provider` (AI SDK 6's) maps the same.
 *
 * @internal
 */
import {
  APICallError,
  EmptyResponseBodyError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  JSONParseError,
  LoadAPIKeyError,
  LoadSettingError,
  NoContentGeneratedError,
  TypeValidationError,
  UnsupportedFunctionalityError
} from "@ai-sdk/provider"
import * as ChatError from "@chat-ts/core/ChatError"
import * as ProviderError from "@chat-ts/core/ProviderError"

/** A redactor removing the given secrets and key-shaped text a server may echo back. */
export const makeRedactor = (secrets: ReadonlyArray<string>): ProviderError.Redactor =>
  ProviderError.makeRedactor(secrets, [
    [/(API key provided:\s*)\S+/gi, `$1${ProviderError.placeholder}`],
    [/\b(sk|gsk|csk|xai)[-_][A-Za-z0-9_\-*.]{4,}/g, ProviderError.placeholder]
  ])

const contextLength = /context[ _-]?length|context window|too many (input )?tokens|maximum context|prompt is too long/i

/** The vendor's own message inside an error body (`{ error: { message } }`, `{ message }`), when it has one. */
const bodyMessage = (data: unknown, body: string | undefined): string | undefined => {
  const pick = (u: unknown): string | undefined => {
    if (typeof u !== "object" || u === null) return undefined
    const message: unknown = Reflect.get(u, "message")
    if (typeof message === "string") return message
    const error: unknown = Reflect.get(u, "error")
    return typeof error === "string" ? error : pick(error)
  }
  const fromData = pick(data)
  if (fromData !== undefined) return fromData
  if (body === undefined || body === "") return undefined
  try {
    return pick(JSON.parse(body))
  } catch {
    return undefined
  }
}

const fromApiCall = (error: APICallError, now: number, redact: ProviderError.Redactor): ChatError.ModelError => {
  const status = error.statusCode
  const vendor = bodyMessage(error.data, error.responseBody)
  const message = redact(vendor === undefined || vendor === error.message ? error.message : `${error.message}: ${vendor}`)
  if (status === undefined) {
    return new ChatError.NetworkError({ message: `Could not reach the model server: ${message}` })
  }
  if (status >= 200 && status < 300 && isNetworkFailure(error.cause)) {
    // The answer started, then the connection broke while it was read.
    return new ChatError.NetworkError({ message: `The connection to the model server broke while reading its answer: ${message}` })
  }
  if (status >= 200 && status < 300) {
    return new ChatError.MalformedResponse({ message: `The model server's answer (HTTP ${status}) could not be read: ${message}` })
  }
  if (status === 401 || status === 403) {
    return new ChatError.AuthenticationError({ message: `The provider refused the credentials (HTTP ${status}): ${message}`, status })
  }
  if (status === 429) {
    const wait = ProviderError.retryAfterMillis(new Headers(error.responseHeaders ?? {}), now)
    return new ChatError.RateLimited({
      message: `The provider refused the request (HTTP 429, rate limit or quota): ${message}`,
      ...(wait === undefined ? {} : { retryAfterMillis: wait })
    })
  }
  if (status === 408) return new ChatError.NetworkError({ message: `The provider timed out reading the request (HTTP 408): ${message}` })
  if ((status === 409 || status >= 500) && error.isRetryable === false) {
    // A status the provider made up for an answer it could not use (OpenAI Responses: a 200 with no
    // output is "500, not retryable"): the provider's verdict stands, nothing is retried.
    return new ChatError.MalformedResponse({ message: `The provider could not use the model server's answer (HTTP ${status}, not retryable): ${message}` })
  }
  if (status === 409 || status >= 500) {
    return new ChatError.ServerError({ message: `The provider failed (HTTP ${status}): ${message}`, status })
  }
  if (status === 413 || contextLength.test(message)) {
    return new ChatError.ContextLengthExceeded({ message: `The conversation does not fit the model's context window (HTTP ${status}): ${message}` })
  }
  return new ChatError.InvalidRequest({ message, status })
}

const networkCodes = /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|UND_ERR_\w+)$/

const codeOf = (u: unknown): string | undefined => {
  if (typeof u !== "object" || u === null) return undefined
  const code: unknown = Reflect.get(u, "code")
  return typeof code === "string" ? code : undefined
}

/** What `fetch` throws when a body stops mid-way ("terminated") or a socket fails. */
const isNetworkFailure = (error: unknown): error is Error =>
  error instanceof TypeError || (error instanceof Error && networkCodes.test(codeOf(error.cause) ?? codeOf(error) ?? ""))

const isAbort = (error: unknown): boolean =>
  error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")

/** Maps anything an AI SDK model threw (or streamed as an `error` part) to a model error. */
export const toModelError = (redact: ProviderError.Redactor) => (error: unknown, now: number): ChatError.ModelError => {
  if (ProviderError.isModelError(error)) return error
  if (APICallError.isInstance(error)) return fromApiCall(error, now, redact)
  if (isAbort(error)) return new ChatError.NetworkError({ message: "The request was aborted." })
  if (
    JSONParseError.isInstance(error) || TypeValidationError.isInstance(error) || InvalidResponseDataError.isInstance(error) ||
    EmptyResponseBodyError.isInstance(error) || NoContentGeneratedError.isInstance(error)
  ) {
    return new ChatError.MalformedResponse({ message: redact(`The model server's answer could not be read: ${error.message}`) })
  }
  if (LoadAPIKeyError.isInstance(error) || LoadSettingError.isInstance(error)) {
    return new ChatError.AuthenticationError({ message: redact(`The model's credentials or settings are missing: ${error.message}`) })
  }
  if (InvalidPromptError.isInstance(error) || InvalidArgumentError.isInstance(error) || UnsupportedFunctionalityError.isInstance(error)) {
    return new ChatError.InvalidRequest({ message: redact(error.message) })
  }
  if (isNetworkFailure(error)) {
    // What `fetch` throws when a body stops mid-way ("terminated") or a socket fails.
    const cause: unknown = error.cause
    const detail = cause instanceof Error ? ` (${cause.message})` : ""
    return new ChatError.NetworkError({ message: redact(`The connection to the model server broke: ${error.message}${detail}`) })
  }
  if (error instanceof Error) {
    // Any other throw of the provider (a part of the conversation it cannot send, say): not worth a retry.
    return new ChatError.InvalidRequest({ message: redact(`The AI SDK model refused the request: ${error.message}`) })
  }
  if (typeof error === "object" && error !== null) {
    // An `error` stream part holding the vendor's own error object (`{ type, message }`).
    const message = bodyMessage(error, undefined) ?? JSON.stringify(error)
    return new ChatError.ServerError({ message: redact(`The model failed while answering: ${message}`) })
  }
  return new ChatError.NetworkError({ message: redact(`The request to the model server failed: ${String(error)}`) })
}
