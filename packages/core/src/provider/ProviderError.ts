/**
 * Error plumbing of a provider, for provider authors: what every provider
 * needs to turn a vendor's failure into a typed `ChatError.ModelError` safely
 * (a redactor so an API key never reaches an error, the `retry-after` headers
 * read into millis, and a check for errors that are already typed). The
 * status-to-error mapping itself stays in each provider: vendors disagree on
 * bodies and codes.
 *
 * @since 0.1.0
 */
import type * as ChatError from "../data/ChatError.js"

/**
 * Removes secrets from a text.
 *
 * @category models
 * @since 0.1.0
 */
export type Redactor = (text: string) => string

/**
 * What replaces a secret in a redacted text.
 *
 * @category constants
 * @since 0.1.0
 */
export const placeholder = "[redacted]"

/**
 * A pattern of secret-shaped text and its replacement (may use `$1`… groups), as for `String.replace`.
 *
 * @category models
 * @since 0.1.0
 */
export type RedactRule = readonly [pattern: RegExp, replacement: string]

/**
 * A redactor that removes every given secret (empty ones are ignored) and then
 * applies `rules`, which catch key-shaped text a server may echo back.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeRedactor = (secrets: ReadonlyArray<string>, rules: ReadonlyArray<RedactRule> = []): Redactor => {
  const kept = secrets.filter((secret) => secret.length > 0)
  return (text) => {
    let out = text
    for (const secret of kept) out = out.split(secret).join(placeholder)
    for (const [pattern, replacement] of rules) out = out.replace(pattern, replacement)
    return out
  }
}

/**
 * What an error mapping needs besides the error: the redactor and the current time (for `retry-after` dates).
 *
 * @category models
 * @since 0.1.0
 */
export interface MappingContext {
  readonly redact: Redactor
  readonly now: number
}

const modelErrorTags: ReadonlySet<string> = new Set([
  "RateLimited",
  "ServerError",
  "NetworkError",
  "AuthenticationError",
  "InvalidRequest",
  "ContextLengthExceeded",
  "MalformedResponse"
])

/**
 * Whether a value is already one of the core's model errors (so a mapping passes it through).
 *
 * @category guards
 * @since 0.1.0
 */
export const isModelError = (u: unknown): u is ChatError.ModelError =>
  u instanceof Error && "_tag" in u && typeof u._tag === "string" && modelErrorTags.has(u._tag)

/**
 * Millis asked by the standard `retry-after` header (seconds or an HTTP date, relative to `now`), or `undefined`.
 *
 * @category utils
 * @since 0.1.0
 */
export const retryAfterHeaderMillis = (headers: Headers | undefined, now: number): number | undefined => {
  const after = headers?.get("retry-after")
  if (after === null || after === undefined) return undefined
  const trimmed = after.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number.parseFloat(trimmed) * 1000
  // An HTTP-date names its day and month ("Wed, 21 Oct 2015 07:28:00 GMT"); without a letter it is
  // not one ("-1", "1e3"), and `Date.parse` would read a number as a year long past: ignored instead.
  if (!/[a-z]/i.test(trimmed)) return undefined
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/**
 * Millis the server asked to wait: `retry-after-ms` (OpenAI, Anthropic) when valid, else `retry-after`.
 *
 * @category utils
 * @since 0.1.0
 */
export const retryAfterMillis = (headers: Headers | undefined, now: number): number | undefined => {
  const millis = headers?.get("retry-after-ms")
  if (millis !== null && millis !== undefined) {
    const value = Number.parseFloat(millis)
    if (Number.isFinite(value) && value >= 0) return value
  }
  return retryAfterHeaderMillis(headers, now)
}
