/**
 * `effect/ai`'s `AiError` as chat-ts's typed model errors: transport
 * failures, 429, 5xx are retryable; 400, 401/403, context length, malformed
 * input and output are not. An error that carries the provider's HTTP
 * response is read from its status, headers and body (as chat-ts's own
 * providers read them); one without is read from its reason.
 *
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as AiError from "effect/ai/AiError"
import * as Duration from "effect/Duration"

/** The `error` object of a provider's JSON error body, when the body is one. */
const errorBody = (body: string | undefined): { readonly code?: string; readonly message?: string; readonly type?: string } => {
  if (body === undefined) return {}
  try {
    const parsed: unknown = JSON.parse(body)
    const error = typeof parsed === "object" && parsed !== null && "error" in parsed ? parsed.error : parsed
    if (typeof error !== "object" || error === null) return {}
    const field = (key: string) => {
      const value = (error as Record<string, unknown>)[key]
      return typeof value === "string" ? value : undefined
    }
    const code = field("code")
    const message = field("message")
    const type = field("type")
    return { ...(code === undefined ? {} : { code }), ...(message === undefined ? {} : { message }), ...(type === undefined ? {} : { type }) }
  } catch {
    return {}
  }
}

/** API keys a provider may echo in its messages (OpenAI, Anthropic, Google, xAI…): never copied into an error. */
const keyLike = /\b(?:sk-[A-Za-z0-9_-]{6,}|AIza[0-9A-Za-z_-]{20,}|xai-[A-Za-z0-9_-]{10,}|gsk_[A-Za-z0-9]{10,})/g

/** The text with anything shaped like an API key replaced by `[redacted]`. */
export const redact = (text: string): string => text.replace(keyLike, "[redacted]")

const contextLength = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long/i

/** `retry-after` (seconds or an HTTP date) or `retry-after-ms`, in milliseconds. */
const retryAfter = (headers: Readonly<Record<string, string>>, now: number): number | undefined => {
  const ms = Number(headers["retry-after-ms"])
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms >= 0) return ms
  const raw = headers["retry-after"]
  if (raw === undefined) return undefined
  const seconds = Number(raw)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(raw)
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined
}

/** The typed error of an HTTP status with its body's code and message. */
export const fromStatus = (
  status: number,
  details: { readonly code?: string | undefined; readonly message: string; readonly retryAfterMillis?: number | undefined }
): ChatError.ModelError => {
  const code = details.code
  const message = redact(details.message)
  const codeField = code === undefined ? {} : { code }
  if (status === 429) {
    return new ChatError.RateLimited({
      message,
      ...codeField,
      ...(details.retryAfterMillis === undefined ? {} : { retryAfterMillis: details.retryAfterMillis })
    })
  }
  if (status === 401 || status === 403) return new ChatError.AuthenticationError({ message, status })
  if (code === "context_length_exceeded" || (status < 500 && contextLength.test(message))) {
    return new ChatError.ContextLengthExceeded({ message })
  }
  if (status >= 500 || status === 408 || status === 409) return new ChatError.ServerError({ message, status })
  return new ChatError.InvalidRequest({ message, status, ...codeField })
}

/** A header of an `effect/ai` error's HTTP context (a `Redacted` one is never read). */
const plainHeaders = (headers: { readonly [key: string]: unknown } | undefined): Readonly<Record<string, string>> =>
  Object.fromEntries(Object.entries(headers ?? {}).flatMap(([key, value]) => typeof value === "string" ? [[key.toLowerCase(), value]] : []))

/** The message of a reason, without its provider's suggestions (the first paragraph). */
const messageOf = (reason: AiError.AiErrorReason): string => redact(reason.message.split("\n\n")[0] ?? reason.message)

/** The error of a reason that came with an HTTP response: read the way the provider's status and body say. */
const fromHttp = (
  reason: AiError.AiErrorReason,
  http: typeof AiError.HttpContext.Type,
  now: number
): ChatError.ModelError | undefined => {
  const response = http.response
  if (response === undefined) return undefined
  const headers = plainHeaders(response.headers)
  const body = errorBody(http.body)
  const description = "description" in reason && typeof reason.description === "string" ? reason.description : undefined
  const retryAfterMillis = retryAfter(headers, now) ??
    (reason._tag === "RateLimitError" && reason.retryAfter !== undefined ? Duration.toMillis(reason.retryAfter) : undefined)
  const code = body.code ?? (reason._tag === "QuotaExhaustedError" ? "insufficient_quota" : undefined)
  return fromStatus(response.status, { code, message: body.message ?? description ?? messageOf(reason), retryAfterMillis })
}

/** Maps an `effect/ai` `AiError` (or its reason) to the chat-ts model error. */
export const fromAiError = (error: AiError.AiError | AiError.AiErrorReason, now: number): ChatError.ModelError => {
  const reason = AiError.isAiError(error) ? error.reason : error
  const http = "http" in reason ? reason.http : undefined
  const fromResponse = http === undefined ? undefined : fromHttp(reason, http, now)
  if (fromResponse !== undefined) return fromResponse
  const message = messageOf(reason)
  switch (reason._tag) {
    case "NetworkError":
      return reason.reason === "TransportError"
        ? new ChatError.NetworkError({ message })
        : new ChatError.InvalidRequest({ message })
    case "RateLimitError":
      return new ChatError.RateLimited({
        message,
        ...(reason.retryAfter === undefined ? {} : { retryAfterMillis: Duration.toMillis(reason.retryAfter) })
      })
    case "QuotaExhaustedError":
      return new ChatError.RateLimited({ message, code: "insufficient_quota" })
    case "AuthenticationError":
      return new ChatError.AuthenticationError({ message, status: reason.kind === "InsufficientPermissions" ? 403 : 401 })
    case "InvalidRequestError":
      return contextLength.test(message) ? new ChatError.ContextLengthExceeded({ message }) : new ChatError.InvalidRequest({ message })
    case "InternalProviderError":
      return new ChatError.ServerError({ message })
    case "InvalidResponseError":
    case "InvalidOutputError":
    case "StructuredOutputError":
    case "ToolNotFoundError":
    case "ToolParameterValidationError":
      return new ChatError.MalformedResponse({ message })
    case "ContentPolicyError":
    case "UnsupportedSchemaError":
    case "InvalidUserInputError":
    case "ToolkitRequiredError":
    case "ToolConfigurationError":
    case "InvalidToolResultError":
    case "ToolResultEncodingError":
      return new ChatError.InvalidRequest({ message })
    case "UnknownError":
      return new ChatError.ServerError({ message })
  }
}

/** The typed error of an `error` part inside a stream (a provider's in-stream error event). */
export const fromErrorPart = (error: unknown): ChatError.ModelError => {
  const body = typeof error === "object" && error !== null ? error as Record<string, unknown> : {}
  const nested = typeof body["error"] === "object" && body["error"] !== null ? body["error"] as Record<string, unknown> : body
  const code = typeof nested["code"] === "string" ? nested["code"] : undefined
  const message = typeof nested["message"] === "string" ? redact(nested["message"]) : "The model's stream reported an error."
  if (code === "insufficient_quota" || code === "rate_limit_exceeded") return fromStatus(429, { code, message })
  if (code === "context_length_exceeded") return new ChatError.ContextLengthExceeded({ message })
  if (code === "invalid_prompt" || code === "invalid_request_error") return new ChatError.InvalidRequest({ message, code })
  return new ChatError.ServerError({ message: code === undefined ? message : `${code}: ${message}` })
}
