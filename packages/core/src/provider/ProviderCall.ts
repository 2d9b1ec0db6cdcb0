/**
 * Calling a vendor SDK from Effect, for provider authors: one promise call
 * with the fiber's `AbortSignal` (interrupting the fiber aborts the request),
 * and an SDK's async iterable of events as a `Stream`, every failure mapped to
 * a typed `ChatError.ModelError`. Every SDK-based provider needs exactly this,
 * so it lives here once, with the shape its client service shares
 * (`Client`, built by `makeClient`).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as ChatError from "../data/ChatError.js"
import { MalformedResponse } from "../data/ChatError.js"
import * as SdkSource from "./internal/sdkSource.js"

/**
 * Maps whatever an SDK threw to a model error; `now` is the current time (for `retry-after` dates).
 *
 * @category errors
 * @since 0.1.0
 */
export type ToError = (error: unknown, now: number) => ChatError.ModelError

/**
 * Fails with the mapped error, reading `now` from Effect's `Clock`.
 *
 * @category utils
 * @since 0.1.0
 */
export const fail = (toError: ToError) => (error: unknown): Effect.Effect<never, ChatError.ModelError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(toError(error, now)))

/**
 * Runs one promise call with the fiber's `AbortSignal`; a rejection becomes the mapped error.
 *
 * @category utils
 * @since 0.1.0
 */
export const request = <A>(
  call: (signal: AbortSignal) => PromiseLike<A>,
  toError: ToError
): Effect.Effect<A, ChatError.ModelError> =>
  Effect.tryPromise({ try: (signal) => call(signal), catch: (error) => error }).pipe(Effect.catch(fail(toError)))

/**
 * An `AbortController` aborted when the scope closes (one per attempt): that
 * ends the HTTP request whether it is still opening or half read.
 *
 * @category utils
 * @since 0.1.0
 */
export const scopedAbortController: Effect.Effect<AbortController, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => new AbortController()),
  (controller) => Effect.sync(() => controller.abort())
)

const idleAware: unique symbol = Symbol.for("@chat-ts/core/ProviderCall/idleAware")

/** A stream of `iterate`: it can watch itself for an idle network at no cost per event (see `idleTimeout`). */
interface IdleAware<A> extends Stream.Stream<A, ChatError.ModelError> {
  readonly [idleAware]: (millis: number, onIdle: () => ChatError.ModelError) => Stream.Stream<A, ChatError.ModelError>
}

const isIdleAware = <A>(stream: Stream.Stream<A, ChatError.ModelError>): stream is IdleAware<A> =>
  typeof (stream as Partial<IdleAware<A>>)[idleAware] === "function"

/**
 * Reads `iterator` one event per pull: one `Effect.callback` on the SDK's own
 * promise, nothing read ahead of the consumer. With `idle`, a pull that waits
 * `idle.millis` (on the `Clock`) fails with `idle.onIdle()`: the wait is
 * watched by one fiber for the whole stream, which wakes once per
 * `idle.millis`, instead of a timer and two fibers raced on every event.
 */
const read = <A>(
  iterator: AsyncIterator<A>,
  toError: ToError,
  idle: { readonly millis: number; readonly onIdle: () => ChatError.ModelError } | undefined
): Stream.Stream<A, ChatError.ModelError> =>
  Stream.unwrap(Effect.gen(function*() {
    const clock = yield* Clock.Clock
    /** When the pending pull started waiting, while one waits. */
    let since: number | undefined
    /** Fails the pending pull with the idle error. */
    let stop: (() => void) | undefined
    if (idle !== undefined) {
      yield* Effect.forkScoped(Effect.gen(function*() {
        let wait = idle.millis
        while (true) {
          yield* Effect.sleep(wait)
          const now = clock.currentTimeMillisUnsafe()
          if (since !== undefined && now - since >= idle.millis) return stop?.()
          wait = since === undefined ? idle.millis : since + idle.millis - now
        }
      }))
    }
    const pull = Effect.callback<readonly [A], ChatError.ModelError | Cause.Done>((resume) => {
      let settled = false
      const settle = (effect: Effect.Effect<readonly [A], ChatError.ModelError | Cause.Done>) => {
        if (settled) return
        settled = true
        since = undefined
        stop = undefined
        resume(effect)
      }
      if (idle !== undefined) {
        since = clock.currentTimeMillisUnsafe()
        stop = () => settle(Effect.fail(idle.onIdle()))
      }
      iterator.next().then(
        (result) => settle(result.done === true ? Cause.done() : Effect.succeed([result.value] as const)),
        (error) => settle(fail(toError)(error))
      )
    })
    return Stream.fromPull(Effect.succeed(pull))
  }))

/**
 * The events of an SDK's async iterable as a stream; a failure while reading becomes the mapped error.
 *
 * @category utils
 * @since 0.1.0
 */
export const iterate = <A>(iterable: AsyncIterable<A>, toError: ToError): Stream.Stream<A, ChatError.ModelError> => {
  const iterator = iterable[Symbol.asyncIterator]()
  const aware: IdleAware<A> = Object.assign(read(iterator, toError, undefined), {
    [idleAware]: (millis: number, onIdle: () => ChatError.ModelError) => read(iterator, toError, { millis, onIdle })
  })
  // `ProviderStream.decodeEvents` reads the iterator itself, without a Stream stage per event.
  return SdkSource.withRaw(aware, { iterator, toError })
}

/**
 * Fails `events` with `onIdle()` when a pull waits longer than `duration`
 * for its next event. A stream of `iterate` watches itself (one fiber per
 * stream); any other stream gets a timer per pull. Either way nothing is
 * read ahead of the consumer.
 *
 * @category utils
 * @since 0.1.0
 */
export const idleTimeout = <A>(
  events: Stream.Stream<A, ChatError.ModelError>,
  duration: Duration.Input,
  onIdle: () => ChatError.ModelError
): Stream.Stream<A, ChatError.ModelError> =>
  isIdleAware(events)
    ? events[idleAware](Duration.toMillis(duration), onIdle)
    : Stream.transformPull(events, (pull) =>
      Effect.succeed(Effect.timeoutOrElse(pull, { duration, orElse: () => Effect.fail(onIdle()) })))

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
 *
 * @category utils
 * @since 0.1.0
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

/**
 * What every provider's client service carries: the SDK and Effect-shaped calls on it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Client<Sdk> {
  /** The SDK client, for calls the provider does not wrap (retries off). */
  readonly sdk: Sdk
  /** The base URL requests go to. */
  readonly baseURL: string
  /** Removes the API key (and key-shaped text) from a text. */
  readonly redact: (text: string) => string
  /**
   * Runs one SDK call with the fiber's `AbortSignal` (pass it to the SDK):
   * interrupting the fiber aborts the request. Failures are typed.
   */
  readonly request: <A>(f: (client: Sdk, signal: AbortSignal) => PromiseLike<A>) => Effect.Effect<A, ChatError.ModelError>
  /**
   * Opens an SDK stream (waits for the HTTP response to start) and returns its
   * events; the request is aborted when the scope closes. Failures while
   * opening fail the returned effect (so they can be retried); failures
   * mid-way (a cut connection, an `error` event) fail the stream.
   */
  readonly openStream: <A>(
    f: (client: Sdk, signal: AbortSignal) => PromiseLike<AsyncIterable<A>>
  ) => Effect.Effect<Stream.Stream<A, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>
}

/**
 * What `makeClient` needs: the SDK, where it sends requests, and how its failures read.
 *
 * @category models
 * @since 0.3.0
 */
export interface ClientOptions<Sdk> {
  readonly sdk: Sdk
  readonly baseURL: string
  readonly redact: (text: string) => string
  readonly toError: ToError
  /** Who answered, in the error for an HTML page instead of events (e.g. `"Anthropic's server"`). */
  readonly server: string
}

/**
 * The `Client` part of a provider's client service, on `request` and `openStream` above.
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeClient = <Sdk>(options: ClientOptions<Sdk>): Client<Sdk> => ({
  sdk: options.sdk,
  baseURL: options.baseURL,
  redact: options.redact,
  request: (f) => request((signal) => f(options.sdk, signal), options.toError),
  openStream: (f) => openStream((signal) => f(options.sdk, signal), options.toError, options.server)
})
