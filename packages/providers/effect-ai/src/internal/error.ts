/**
 * `@effect/ai`'s `AiError` as chat-ts's typed model errors: transport
 * failures, 429, 5xx are retryable; 400, 401/403, context length, malformed
 * input and output are not.
 *
 * @internal
 */
import type * as AiError from "@effect/ai/AiError"
import { ChatError } from "@chat-ts/core"

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

/** Maps an `AiError` to the chat-ts model error. */
export const fromAiError = (error: AiError.AiError, now: number): ChatError.ModelError => {
  switch (error._tag) {
    case "HttpRequestError":
      return error.reason === "Transport"
        ? new ChatError.NetworkError({ message: redact(error.message) })
        : new ChatError.InvalidRequest({ message: redact(error.message) })
    case "HttpResponseError": {
      if (error.reason !== "StatusCode") {
        // An event stream whose body could not be read to its end: the connection broke off.
        const streaming = (error.response.headers["content-type"] ?? "").includes("text/event-stream")
        return streaming && error.reason === "Decode"
          ? new ChatError.NetworkError({ message: `The model's stream broke off: ${redact(error.message)}` })
          : new ChatError.MalformedResponse({ message: redact(error.message) })
      }
      const body = errorBody(error.body)
      return fromStatus(error.response.status, {
        code: body.code,
        message: body.message ?? error.message,
        retryAfterMillis: retryAfter(error.response.headers, now)
      })
    }
    case "MalformedInput":
      return new ChatError.InvalidRequest({ message: redact(error.message) })
    case "MalformedOutput":
      return new ChatError.MalformedResponse({ message: redact(error.message) })
    case "UnknownError":
      return new ChatError.ServerError({ message: redact(error.message) })
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
