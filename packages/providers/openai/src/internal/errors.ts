/**
 * The one mapping from what the `openai` SDK throws (and what the API puts in
 * a failed response or stream) to the core's typed `ChatError.ModelError`s,
 * shared by every OpenAI layer.
 *
 * Every message passes through a redactor first, so an API key never appears
 * in an error, even when the server echoes it back.
 *
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as ProviderError from "@chat-ts/core/ProviderError"
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAIError
} from "openai"

/** Removes secrets from a text. */
export type Redactor = ProviderError.Redactor

/**
 * A redactor that removes the given secrets and anything shaped like an API
 * key that a server may echo back (`sk-…`, or the value after "API key provided:").
 */
export const makeRedactor = (secrets: ReadonlyArray<string>): Redactor =>
  ProviderError.makeRedactor(secrets, [
    [/(API key provided:\s*)\S+/gi, `$1${ProviderError.placeholder}`],
    [/\b(sk|gsk|csk)[-_][A-Za-z0-9_\-*.]{4,}/g, ProviderError.placeholder]
  ])

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

/** The fields of an error object of the API (`{ message, code, param, type }`). */
export interface ApiErrorBody {
  readonly message?: string | undefined
  readonly code?: string | undefined
  readonly param?: string | undefined
  readonly type?: string | undefined
}

/** Reads an API error object, whatever its exact shape. */
export const readErrorBody = (u: unknown): ApiErrorBody => ({
  message: stringField(u, "message"),
  code: stringField(u, "code"),
  param: stringField(u, "param"),
  type: stringField(u, "type")
})

const withParts = (text: string, body: ApiErrorBody): string => {
  const details = [body.code, body.param === undefined ? undefined : `param ${body.param}`].filter(
    (s): s is string => s !== undefined
  )
  return details.length === 0 ? text : `${text} (${details.join(", ")})`
}

/**
 * Maps an API error by its status and body. A missing status means the error
 * came inside a stream that had already started (an `error` event or a failed
 * response); it is then classified by its code and type.
 */
export const fromApi = (
  status: number | undefined,
  body: ApiErrorBody,
  headers: Headers | undefined,
  context: Context
): ChatError.ModelError => {
  const redact = context.redact
  const apiMessage = redact(body.message ?? (status === undefined ? "unknown error" : `HTTP ${status}`))
  const code = body.code === undefined ? undefined : redact(body.code)
  const param = body.param === undefined ? undefined : redact(body.param)
  if (body.code === "context_length_exceeded") {
    return new ChatError.ContextLengthExceeded({ message: `The conversation does not fit the model's context window: ${apiMessage}` })
  }
  if (status === undefined) {
    const kind = `${body.code ?? ""} ${body.type ?? ""}`
    if (/rate_limit|insufficient_quota|quota/.test(kind)) {
      return new ChatError.RateLimited({
        message: withParts(`The provider refused the request (rate limit or quota): ${apiMessage}`, body),
        ...(code === undefined ? {} : { code })
      })
    }
    if (/invalid_request|invalid_prompt|invalid_image|unsupported|invalid_value/.test(kind)) {
      return new ChatError.InvalidRequest({
        message: apiMessage,
        ...(code === undefined ? {} : { code }),
        ...(param === undefined ? {} : { param })
      })
    }
    if (/authentication|invalid_api_key|permission/.test(kind)) {
      return new ChatError.AuthenticationError({ message: `The provider refused the credentials: ${apiMessage}` })
    }
    return new ChatError.ServerError({ message: withParts(`The model failed while answering: ${apiMessage}`, body) })
  }
  if (status === 401 || status === 403) {
    return new ChatError.AuthenticationError({
      message: `The provider refused the credentials (HTTP ${status}): ${apiMessage}`,
      status
    })
  }
  if (status === 429) {
    const wait = retryAfterMillis(headers, context.now)
    return new ChatError.RateLimited({
      message: withParts(`The provider refused the request (HTTP 429, rate limit or quota): ${apiMessage}`, body),
      ...(wait === undefined ? {} : { retryAfterMillis: wait }),
      ...(code === undefined ? {} : { code })
    })
  }
  if (status === 408) {
    return new ChatError.NetworkError({ message: `The provider timed out reading the request (HTTP 408): ${apiMessage}` })
  }
  if (status === 409 || status >= 500) {
    return new ChatError.ServerError({ message: `The provider failed (HTTP ${status}): ${apiMessage}`, status })
  }
  return new ChatError.InvalidRequest({
    message: apiMessage,
    status,
    ...(code === undefined ? {} : { code }),
    ...(param === undefined ? {} : { param })
  })
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
    return new ChatError.NetworkError({ message: "The request to the model server timed out." })
  }
  if (error instanceof APIConnectionError) {
    const detail = causeText(error)
    return new ChatError.NetworkError({
      message: redact(`Could not reach the model server: ${error.message}${detail === "" ? "" : ` ${detail}`}`)
    })
  }
  if (error instanceof APIError) {
    const body: ApiErrorBody = error.error === undefined
      ? { message: error.message }
      : { ...readErrorBody(error.error), ...(stringField(error.error, "message") === undefined ? { message: error.message } : {}) }
    return fromApi(error.status, body, error.headers, context)
  }
  if (error instanceof SyntaxError) {
    return new ChatError.MalformedResponse({ message: redact(`The model server sent a body that is not valid JSON: ${error.message}`) })
  }
  if (error instanceof OpenAIError) {
    return new ChatError.MalformedResponse({ message: redact(`The model server's answer could not be read: ${error.message}`) })
  }
  if (error instanceof Error) {
    const detail = causeText(error)
    return new ChatError.NetworkError({
      message: redact(`The connection to the model server broke: ${error.message}${detail === "" ? "" : ` (${detail})`}`)
    })
  }
  return new ChatError.NetworkError({ message: redact(`The request to the model server failed: ${String(error)}`) })
}

/** A response that does not have the expected shape. */
export const malformed = (message: string): ChatError.MalformedResponse => new ChatError.MalformedResponse({ message })
