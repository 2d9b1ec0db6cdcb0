/**
 * A refusal of the chat endpoint as the page shows it. `useChat`'s stock
 * transport gives the response's body as the error's message
 * (`{"_tag":"Conflict","reason":"Busy","message":"…","retryable":true,…}`);
 * this reads it back to its sentence, and says whether the same request may
 * simply be sent again (`retryable`, after `retryAfter` seconds: another tab's
 * request held the conversation) — what the page does with `sendMessage()`.
 */

/** What the page shows of a refusal, and whether it offers to send the request again. */
export interface Refusal {
  /** The endpoint's sentence (or the error's text when it is not a refusal). */
  readonly message: string
  /** The refusal's kind (`Conflict`, `Forbidden`…) and reason (`Busy`, `AlreadyDecided`…), when known. */
  readonly tag?: string
  readonly reason?: string
  /** The same request, sent again unchanged, may succeed. */
  readonly retryable: boolean
  /** Seconds to wait before sending it again. */
  readonly retryAfter: number
}

/** The refusal `error` (useChat's `error`) carries. */
export const readRefusal = (error: Error): Refusal => {
  let body: unknown
  try {
    body = JSON.parse(error.message)
  } catch {
    return { message: error.message, retryable: false, retryAfter: 0 }
  }
  if (typeof body !== "object" || body === null) return { message: error.message, retryable: false, retryAfter: 0 }
  const { _tag, message, reason, retryAfter, retryable } = body as Record<string, unknown>
  return {
    message: typeof message === "string" ? message : error.message,
    ...(typeof _tag === "string" ? { tag: _tag } : {}),
    ...(typeof reason === "string" ? { reason } : {}),
    retryable: retryable === true,
    retryAfter: typeof retryAfter === "number" && retryAfter >= 0 ? retryAfter : 1
  }
}
