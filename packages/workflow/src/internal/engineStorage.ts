/**
 * The workflow engine's storage failing, as core's typed `StoreError`: `effect/cluster`'s
 * engine dies with its `PersistenceError` when it cannot store a request (its database out
 * of reach); the client side turns that defect into a retryable `StoreError`.
 *
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"

/** Whether a defect is `effect/cluster`'s `PersistenceError` (its message storage failed). */
export const isPersistenceError = (defect: unknown): boolean =>
  typeof defect === "object" && defect !== null && "_tag" in defect && defect._tag === "PersistenceError" &&
  "~effect/cluster/ClusterError" in defect

/** Anything that looks like a URL (a connection string may carry a password): left out of messages. */
const urls = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi

/** The distinct messages along an error's chain of causes (at most 4 deep), with URLs masked. */
export const messagesOf = (error: unknown): string => {
  const seen: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const message = "message" in current && typeof current.message === "string" ? current.message.trim() : ""
    if (message !== "" && !seen.includes(message)) seen.push(message)
    current = "cause" in current ? current.cause : undefined
  }
  return (seen.length === 0 ? "no message" : seen.join(": ")).replace(urls, "<url>")
}

/** The `StoreError` (retryable) that stands for the engine's storage failing while doing `what`. */
export const storeError = (what: string, defect: unknown): ChatError.StoreError =>
  new ChatError.StoreError({ detail: `the workflow engine's storage failed to ${what}: ${messagesOf(defect)}`, retryable: true })

/** `self` with the engine's storage failing (its `PersistenceError` defect) as a typed `StoreError`; other defects stay. */
export const typed = (what: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | ChatError.StoreError, R> =>
  Effect.catchCause(self, (cause): Effect.Effect<never, E | ChatError.StoreError> => {
    const defect = Cause.findDefect(cause)
    return Result.isSuccess(defect) && isPersistenceError(defect.success) && !Cause.hasInterrupts(cause)
      ? Effect.fail(storeError(what, defect.success))
      : Effect.failCause(cause)
  })
