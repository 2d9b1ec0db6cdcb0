/**
 * The one mapping from what `@anthropic-ai/sdk` throws (and what the API puts
 * in an `error` event of a stream) to the core's typed `ChatError.ModelError`s.
 *
 * Anthropic's error body is `{ "type": "error", "error": { "type", "message" } }`.
 * A 529 (`overloaded_error`, also sent with a 429 by newer deployments) is a
 * retryable `RateLimited` with code `overloaded_error`, so that `retry-after`
 * is honoured like a rate limit's. Every message passes through a redactor
 * first, so an API key never appears in an error.
 *
 * @internal
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, AnthropicError } from "@anthropic-ai/sdk"
import * as ChatError from "@chat-ts/core/ChatError"
import * as ProviderError from "@chat-ts/core/ProviderError"

/** Removes secrets from a text. */
export type Redactor = ProviderError.Redactor

/** A redactor removing the given secrets and anything shaped like an Anthropic key (`sk-ant-…`). */
export const makeRedactor = (secrets: ReadonlyArray<string>): Redactor =>
  ProviderError.makeRedactor(secrets, [[/\bsk-ant-[A-Za-z0-9_\-*.]{4,}/g, ProviderError.placeholder]])

/** What the mapping needs besides the error: the redactor and the current time (for `retry-after` dates). */
export type Context = ProviderError.MappingContext

/** Whether a value is already one of the core's model errors. */
export const isModelError = ProviderError.isModelError

/** How long the server asked us to wait: `retry-after-ms`, else `retry-after` (seconds or an HTTP date). */
export const retryAfterMillis = ProviderError.retryAfterMillis

const stringField = (u: unknown, key: string): string | undefined => {
  if (typeof u !== "object" || u === null) return undefined
  const value: unknown = Reflect.get(u, key)
  return typeof value === "string" ? value : undefined
}

/** The `{ type, message }` of an Anthropic error body (`{ type: "error", error: {…} }`), or of the inner object. */
export interface ApiErrorBody {
  readonly type?: string | undefined
  readonly message?: string | undefined
}

/** Reads an error body, whatever its exact shape. */
export const readErrorBody = (u: unknown): ApiErrorBody => {
  const inner: unknown = typeof u === "object" && u !== null ? Reflect.get(u, "error") : undefined
  const holder = typeof inner === "object" && inner !== null ? inner : u
  return { type: stringField(holder, "type"), message: stringField(holder, "message") }
}

const tooLong = /prompt is too long|context window|too many tokens|exceeds? the (?:maximum|context)/i

/**
 * Maps an API error by its status and body. A missing status means the error
 * came as an `error` event of a stream that had already started; it is then
 * classified by its type.
 */
export const fromApi = (
  status: number | undefined,
  body: ApiErrorBody,
  headers: Headers | undefined,
  context: Context
): ChatError.ModelError => {
  const redact = context.redact
  const type = body.type
  const apiMessage = redact(body.message ?? (status === undefined ? "unknown error" : `HTTP ${status}`))
  const code = type === undefined ? undefined : redact(type)
  const withCode = code === undefined ? {} : { code }
  const http = status === undefined ? "" : ` (HTTP ${status})`
  if (status === 529 || type === "overloaded_error") {
    const wait = retryAfterMillis(headers, context.now)
    return new ChatError.RateLimited({
      message: `Anthropic is overloaded${http}: ${apiMessage}`,
      code: "overloaded_error",
      ...(wait === undefined ? {} : { retryAfterMillis: wait })
    })
  }
  if (status === 429 || (status === undefined && type === "rate_limit_error")) {
    const wait = retryAfterMillis(headers, context.now)
    return new ChatError.RateLimited({
      message: `Anthropic refused the request (rate limit)${http}: ${apiMessage}`,
      ...(wait === undefined ? {} : { retryAfterMillis: wait }),
      ...withCode
    })
  }
  if (status === 401 || status === 403 || type === "authentication_error" || type === "permission_error") {
    return new ChatError.AuthenticationError({
      message: `Anthropic refused the credentials${http}: ${apiMessage}`,
      ...(status === undefined ? {} : { status })
    })
  }
  if ((status === 400 || type === "invalid_request_error") && tooLong.test(body.message ?? "")) {
    return new ChatError.ContextLengthExceeded({ message: `The conversation does not fit the model's context window: ${apiMessage}` })
  }
  if (status === 408 || type === "timeout_error") {
    return new ChatError.NetworkError({ message: `Anthropic timed out${http}: ${apiMessage}` })
  }
  if (status === undefined) {
    if (type === "invalid_request_error" || type === "request_too_large" || type === "not_found_error") {
      return new ChatError.InvalidRequest({ message: apiMessage, ...withCode })
    }
    return new ChatError.ServerError({ message: `The model failed while answering: ${apiMessage}${code === undefined ? "" : ` (${code})`}` })
  }
  if (status === 409 || status >= 500) {
    return new ChatError.ServerError({ message: `Anthropic failed (HTTP ${status}): ${apiMessage}`, status })
  }
  return new ChatError.InvalidRequest({ message: apiMessage, status, ...withCode })
}

const causeText = (error: Error): string => {
  const cause: unknown = error.cause
  if (cause instanceof Error) {
    const code = stringField(cause, "code")
    return code === undefined ? cause.message : `${cause.message} [${code}]`
  }
  return ""
}

const isAbort = (error: unknown): boolean =>
  error instanceof Error && (error.name === "AbortError" || error instanceof APIUserAbortError)

/** Maps anything the SDK (or a broken connection) throws to a model error. */
export const fromUnknown = (error: unknown, context: Context): ChatError.ModelError => {
  const redact = context.redact
  if (isModelError(error)) return error
  if (isAbort(error)) return new ChatError.NetworkError({ message: "The request was aborted." })
  if (error instanceof APIConnectionTimeoutError) {
    return new ChatError.NetworkError({ message: "The request to Anthropic timed out." })
  }
  if (error instanceof APIConnectionError) {
    const detail = causeText(error)
    return new ChatError.NetworkError({
      message: redact(`Could not reach Anthropic: ${error.message}${detail === "" ? "" : ` ${detail}`}`)
    })
  }
  if (error instanceof APIError) {
    const body = readErrorBody(error.error)
    return fromApi(error.status, { type: body.type ?? error.type ?? undefined, message: body.message ?? error.message }, error.headers, context)
  }
  if (error instanceof SyntaxError) {
    return new ChatError.MalformedResponse({ message: redact(`Anthropic sent a body that is not valid JSON: ${error.message}`) })
  }
  if (error instanceof AnthropicError) {
    return new ChatError.MalformedResponse({ message: redact(`Anthropic's answer could not be read: ${error.message}`) })
  }
  if (error instanceof Error) {
    const detail = causeText(error)
    return new ChatError.NetworkError({
      message: redact(`The connection to Anthropic broke: ${error.message}${detail === "" ? "" : ` (${detail})`}`)
    })
  }
  return new ChatError.NetworkError({ message: redact(`The request to Anthropic failed: ${String(error)}`) })
}
