/**
 * Calling a vendor SDK from Effect, for provider authors: one promise call
 * with the fiber's `AbortSignal` (interrupting the fiber aborts the request),
 * and an SDK's async iterable of events as a `Stream`, every failure mapped to
 * a typed `ChatError.ModelError`. Every SDK-based provider needs exactly this,
 * so it lives here once.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as ChatError from "./ChatError.js"
import { MalformedResponse } from "./ChatError.js"

/** Maps whatever an SDK threw to a model error; `now` is the current time (for `retry-after` dates). */
export type ToError = (error: unknown, now: number) => ChatError.ModelError

/** Fails with the mapped error, reading `now` from Effect's `Clock`. */
export const fail = (toError: ToError) => (error: unknown): Effect.Effect<never, ChatError.ModelError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(toError(error, now)))

/** Runs one promise call with the fiber's `AbortSignal`; a rejection becomes the mapped error. */
export const request = <A>(
  call: (signal: AbortSignal) => PromiseLike<A>,
  toError: ToError
): Effect.Effect<A, ChatError.ModelError> =>
  Effect.tryPromise({ try: (signal) => call(signal), catch: (error) => error }).pipe(Effect.catchAll(fail(toError)))

/**
 * An `AbortController` aborted when the scope closes (one per attempt): that
 * ends the HTTP request whether it is still opening or half read.
 */
export const scopedAbortController: Effect.Effect<AbortController, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => new AbortController()),
  (controller) => Effect.sync(() => controller.abort())
)

/** The events of an SDK's async iterable as a stream; a failure while reading becomes the mapped error. */
export const iterate = <A>(iterable: AsyncIterable<A>, toError: ToError): Stream.Stream<A, ChatError.ModelError> => {
  const iterator = iterable[Symbol.asyncIterator]()
  return Stream.repeatEffectOption(
    Effect.tryPromise({ try: () => iterator.next(), catch: (error) => error }).pipe(
      Effect.catchAll(fail(toError)),
      Effect.mapError(Option.some),
      Effect.flatMap((result) => (result.done === true ? Effect.fail(Option.none()) : Effect.succeed(result.value)))
    )
  )
}

/** An SDK promise that can also give the HTTP response (`APIPromise.withResponse` of the openai and Anthropic SDKs). */
const hasResponse = <A>(
  p: PromiseLike<A>
): p is PromiseLike<A> & { readonly withResponse: () => Promise<{ readonly data: A; readonly response: globalThis.Response }> } =>
  typeof (p as { readonly withResponse?: unknown }).withResponse === "function"

/**
 * Opens an SDK stream (waits for the HTTP response to start) and returns its
 * events; the request is aborted when the scope closes or the fiber is
 * interrupted. Failures while opening fail the returned effect (so they can be
 * retried); failures mid-way fail the stream. An HTML page instead of events
 * (a proxy's or gateway's) is a `MalformedResponse` naming `server`.
 */
export const openStream = <A>(
  open: (signal: AbortSignal) => PromiseLike<AsyncIterable<A>>,
  toError: ToError,
  server: string
): Effect.Effect<Stream.Stream<A, ChatError.ModelError>, ChatError.ModelError, Scope.Scope> =>
  Effect.gen(function*() {
    const controller = yield* scopedAbortController
    const iterable = yield* request(async (signal) => {
      signal.addEventListener("abort", () => controller.abort(), { once: true })
      const opened = open(controller.signal)
      if (!hasResponse(opened)) return opened
      const { data, response } = await opened.withResponse()
      // A page instead of events: not a network failure, not worth a retry.
      if ((response.headers.get("content-type") ?? "").toLowerCase().includes("text/html")) {
        throw new MalformedResponse({
          message: `${server} answered a stream with an HTML page (HTTP ${response.status}), not events.`
        })
      }
      return data
    }, toError)
    return iterate(iterable, toError)
  })
