/**
 * The one mapping from what the `@google/genai` SDK throws (and what the
 * Gemini API puts in a failed response or stream) to the core's typed
 * `ChatError.ModelError`s.
 *
 * Every message passes through a redactor first, so an API key never appears
 * in an error, even when the server echoes it back.
 *
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as ProviderError from "@chat-ts/core/ProviderError"
import { ApiError } from "@google/genai"

/** Removes secrets from a text. */
export type Redactor = ProviderError.Redactor

/** A redactor that removes the given secrets and anything shaped like a Google API key (`AIza…`). */
export const makeRedactor = (secrets: ReadonlyArray<string>): Redactor =>
  ProviderError.makeRedactor(secrets, [
    [/AIza[0-9A-Za-z_-]{10,}/g, ProviderError.placeholder],
    [/([?&]key=)[^&\s"]+/g, `$1${ProviderError.placeholder}`]
  ])

/** What the mapping needs besides the error: the redactor and the current time (for `retry-after` dates). */
export type Context = ProviderError.MappingContext

/**
 * A non-2xx HTTP answer, thrown by the client's `fetch` wrapper before the SDK
 * reads it, so that its headers (`retry-after`) are kept.
 */
export class HttpFailure extends Error {
  constructor(readonly status: number, readonly headers: Headers, readonly body: string) {
    super(`HTTP ${status}`)
    this.name = "HttpFailure"
  }
}

/** Whether a value is already one of the core's model errors. */
export const isModelError = ProviderError.isModelError

const field = (u: unknown, key: string): unknown =>
  typeof u === "object" && u !== null ? Reflect.get(u, key) : undefined

/** The fields of a Google API error (`{ error: { code, message, status, details } }`). */
export interface ApiErrorBody {
  readonly message?: string | undefined
  /** The gRPC status name, e.g. `RESOURCE_EXHAUSTED`. */
  readonly status?: string | undefined
  /** `RetryInfo.retryDelay` of the details, in millis. */
  readonly retryDelayMillis?: number | undefined
  /** `ErrorInfo.reason` of the details, e.g. `API_KEY_INVALID`. */
  readonly reason?: string | undefined
}

const durationMillis = (u: unknown): number | undefined => {
  if (typeof u !== "string") return undefined
  const match = /^(\d{1,9}(?:\.\d{1,9})?)s$/.exec(u.trim())
  return match === null ? undefined : Number.parseFloat(match[1]!) * 1000
}

/** Reads a Google API error body, whatever its exact shape (an array of one error too). */
export const readErrorBody = (u: unknown): ApiErrorBody => {
  const root = Array.isArray(u) ? u[0] : u
  const error = field(root, "error")
  const holder = typeof error === "object" && error !== null ? error : root
  const message = field(holder, "message")
  const status = field(holder, "status")
  const details = field(holder, "details")
  let retryDelayMillis: number | undefined
  let reason: string | undefined
  if (Array.isArray(details)) {
    for (const detail of details) {
      const delay = durationMillis(field(detail, "retryDelay"))
      if (delay !== undefined) retryDelayMillis = delay
      const named = field(detail, "reason")
      if (typeof named === "string") reason = named
    }
  }
  return {
    message: typeof message === "string" ? message : undefined,
    status: typeof status === "string" ? status : undefined,
    retryDelayMillis,
    reason
  }
}

/** Parses a JSON text, or `undefined`. */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Milliseconds asked by `retry-after` (seconds or an HTTP date); Gemini sends no `retry-after-ms`. */
export const retryAfterMillis = ProviderError.retryAfterHeaderMillis

/** Maps an API error by its HTTP status and body. */
export const fromApi = (
  status: number,
  body: ApiErrorBody,
  headers: Headers | undefined,
  context: Context
): ChatError.ModelError => {
  const apiMessage = context.redact(body.message ?? `HTTP ${status}`)
  const code = body.status === undefined ? undefined : context.redact(body.status)
  if (status === 400 && /token count|exceeds the maximum number of tokens|context window|too long/i.test(apiMessage)) {
    return new ChatError.ContextLengthExceeded({ message: `The conversation does not fit the model's context window: ${apiMessage}` })
  }
  // Gemini answers a wrong key with a 400 whose detail says API_KEY_INVALID.
  if (status === 401 || status === 403 || body.reason === "API_KEY_INVALID") {
    return new ChatError.AuthenticationError({ message: `Gemini refused the credentials (HTTP ${status}): ${apiMessage}`, status })
  }
  if (status === 429) {
    const wait = retryAfterMillis(headers, context.now) ?? body.retryDelayMillis
    return new ChatError.RateLimited({
      message: `Gemini refused the request (HTTP 429, rate limit or quota): ${apiMessage}`,
      ...(wait === undefined ? {} : { retryAfterMillis: wait }),
      ...(code === undefined ? {} : { code })
    })
  }
  if (status === 408) {
    return new ChatError.NetworkError({ message: `Gemini timed out reading the request (HTTP 408): ${apiMessage}` })
  }
  if (status >= 500) {
    return new ChatError.ServerError({ message: `Gemini failed (HTTP ${status}): ${apiMessage}`, status })
  }
  return new ChatError.InvalidRequest({ message: apiMessage, status, ...(code === undefined ? {} : { code }) })
}

const causeText = (error: Error): string => {
  const cause: unknown = error.cause
  if (cause instanceof Error) {
    const code = field(cause, "code")
    return typeof code === "string" ? `${cause.message} [${code}]` : cause.message
  }
  return ""
}

/** The JSON an SDK `ApiError` message carries (`{…}`, or `got status: X. {…}` inside a stream). */
const apiErrorJson = (message: string): unknown => {
  const start = message.indexOf("{")
  return start === -1 ? undefined : parseJson(message.slice(start))
}

/** Maps anything the SDK (or a broken connection) throws to a model error. */
export const fromUnknown = (error: unknown, context: Context): ChatError.ModelError => {
  const redact = context.redact
  if (isModelError(error)) return error
  if (error instanceof HttpFailure) {
    const body = readErrorBody(parseJson(error.body))
    const page = body.message === undefined && /<html/i.test(error.body)
    return fromApi(error.status, page ? { message: `HTTP ${error.status} (an HTML page)` } : {
      ...body,
      message: body.message ?? (error.body.trim() === "" ? undefined : error.body.slice(0, 500))
    }, error.headers, context)
  }
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) {
    return new ChatError.NetworkError({ message: "The request to Gemini was aborted or timed out." })
  }
  if (error instanceof ApiError) {
    return fromApi(error.status, readErrorBody(apiErrorJson(error.message)), undefined, context)
  }
  if (error instanceof SyntaxError) {
    return new ChatError.MalformedResponse({ message: redact(`Gemini sent a body that is not valid JSON: ${error.message}`) })
  }
  if (error instanceof Error && error.message.startsWith("Incomplete JSON segment")) {
    return new ChatError.NetworkError({ message: "Gemini's stream broke off in the middle of an event." })
  }
  if (error instanceof Error && error.message.startsWith("exception parsing stream chunk")) {
    return new ChatError.MalformedResponse({ message: redact(`Gemini's stream could not be read: ${error.message.slice(0, 300)}`) })
  }
  if (error instanceof Error) {
    const detail = causeText(error)
    return new ChatError.NetworkError({
      message: redact(`The connection to Gemini broke: ${error.message}${detail === "" ? "" : ` (${detail})`}`)
    })
  }
  return new ChatError.NetworkError({ message: redact(`The request to Gemini failed: ${String(error)}`) })
}
