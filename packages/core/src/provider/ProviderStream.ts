/**
 * The stream scaffold of a provider, for provider authors: open the vendor's
 * stream (retried only while it opens), decode its events with a fresh decoder
 * per stream, let the decoder say what the end of the stream means (the
 * finish, or an error when it broke off), and stop a stream that goes idle or
 * runs too long. Every streaming provider needs exactly this, so it lives here
 * once, with the two pieces every provider built on it: its layers' timeout
 * options resolved against its defaults (`timeouts`), and a whole
 * `LanguageModel` from its wire calls (`languageModel`).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ChatError from "../data/ChatError.js"
import * as PartSource from "../model/PartSource.js"
import * as SdkSource from "./internal/sdkSource.js"
import * as LanguageModel from "../model/LanguageModel.js"
import * as ProviderCall from "./ProviderCall.js"
import * as ProviderRetry from "./ProviderRetry.js"

/**
 * What a decoder must say once the events are over.
 *
 * @category models
 * @since 0.1.0
 */
export interface Ending {
  readonly end: () => Result.Result<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError>
}

/**
 * How long a call may wait: between two events of a stream (and for the first), and in all.
 *
 * @category models
 * @since 0.1.0
 */
export interface Timeouts {
  /** Default `defaultIdleTimeout`; `false`: wait forever. */
  readonly idleTimeout?: Duration.Input | false | undefined
  /** The longest a whole call may take, retries included (default: no limit). */
  readonly totalTimeout?: Duration.Input | undefined
}

/**
 * The default longest wait between two events of a stream.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultIdleTimeout: Duration.Input = "5 minutes"

/**
 * The timeout options of a provider's layers; `false` turns a bound off.
 *
 * @category models
 * @since 0.3.0
 */
export interface TimeoutOptions {
  /** The longest wait between two events of a stream, and for the first (`false`: wait forever). */
  readonly idleTimeout?: Duration.Input | false | undefined
  /** The longest a whole call may take, retries included (`false`: no limit). */
  readonly totalTimeout?: Duration.Input | false | undefined
}

/**
 * A provider's default bounds (what its `…Defaults` module says).
 *
 * @category models
 * @since 0.3.0
 */
export interface TimeoutDefaults {
  /** The bound of a non-streamed call when its options name none. */
  readonly totalTimeout: Duration.Input
  /** The idle bound of a stream when its options name none. */
  readonly idleTimeout: Duration.Input
}

/**
 * A layer's timeout options resolved for one kind of call (see `timeouts`).
 *
 * @category models
 * @since 0.3.0
 */
export interface TimeoutsOf {
  /** A non-streamed call's bound: `totalTimeout`, else the default; `false`: none. */
  readonly call: (options: TimeoutOptions) => Timeouts
  /** A stream's bounds: `idleTimeout` (else the default; `false`: none), and `totalTimeout` only when given. */
  readonly stream: (options: TimeoutOptions) => Timeouts
}

/**
 * The timeouts one call runs under, resolved against a provider's `defaults`:
 * a non-streamed call always has a total bound (unless told `false`); a stream
 * has an idle bound, and a total one only when asked.
 *
 * @category utils
 * @since 0.3.0
 */
export const timeouts = (defaults: TimeoutDefaults): TimeoutsOf => ({
  call: (options) => ({
    totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout ?? defaults.totalTimeout
  }),
  stream: (options) => ({
    idleTimeout: options.idleTimeout ?? defaults.idleTimeout,
    totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout
  })
})

const idleError = (d: Duration.Input) =>
  new ChatError.NetworkError({
    message: `The model's stream sent nothing for ${Duration.format(Duration.fromInputUnsafe(d))} (idleTimeout) and was stopped.`
  })

const totalError = (d: Duration.Input) =>
  new ChatError.NetworkError({
    message: `The model call took longer than ${Duration.format(Duration.fromInputUnsafe(d))} (totalTimeout) and was stopped.`
  })

/**
 * Fails `self` with a `NetworkError` when it takes longer than `totalTimeout`.
 *
 * @category combinators
 * @since 0.1.0
 */
export const withTotalTimeout = <A, R>(
  self: Effect.Effect<A, ChatError.ModelError, R>,
  timeouts: Timeouts
): Effect.Effect<A, ChatError.ModelError, R> => {
  const total = timeouts.totalTimeout
  return total === undefined ? self : Effect.timeoutOrElse(self, { duration: total, orElse: () => Effect.fail(totalError(total)) })
}

/**
 * Fails `stream` with a `NetworkError` once it has run for `total` (its
 * opening included), even while events flow. The deadline bounds each pull;
 * nothing is read ahead of the consumer.
 */
const withDeadline = <A>(
  stream: Stream.Stream<A, ChatError.ModelError>,
  total: Duration.Input
): Stream.Stream<A, ChatError.ModelError> =>
  Stream.unwrap(Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const deadline = clock.currentTimeMillisUnsafe() + Duration.toMillis(total)
    const bounded = <X, E, R>(effect: Effect.Effect<X, E, R>): Effect.Effect<X, E | ChatError.NetworkError, R> =>
      Effect.suspend(() => {
        const left = deadline - clock.currentTimeMillisUnsafe()
        return left > 0
          ? Effect.timeoutOrElse(effect, { duration: left, orElse: () => Effect.fail(totalError(total)) })
          : Effect.fail(totalError(total))
      })
    const pull = yield* bounded(Stream.toPull(stream))
    return Stream.fromPull(Effect.succeed(bounded(pull)))
  }))

/**
 * Opens `open`, then maps its events to stream parts with `decode` and a
 * decoder made per stream. A stream that sends nothing for `idleTimeout` or
 * runs past `totalTimeout` fails with a `NetworkError`; it is not retried once
 * open (its events may already be out).
 *
 * @category conversions
 * @since 0.1.0
 */
export const decodeStream = <Event, Decoder extends Ending>(
  open: Effect.Effect<Stream.Stream<Event, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>,
  policy: ProviderRetry.Policy | undefined,
  makeDecoder: () => Decoder,
  decode: (
    events: Stream.Stream<Event, ChatError.ModelError>,
    decoder: Decoder
  ) => Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError>,
  timeouts: Timeouts = {}
): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
  const idle = timeouts.idleTimeout ?? defaultIdleTimeout
  const total = timeouts.totalTimeout
  const stream = Stream.unwrap(
    Effect.map(ProviderRetry.withRetry(open, policy), (events) =>
      Stream.suspend(() => {
        const decoder = makeDecoder()
        const watched = idle === false ? events : ProviderCall.idleTimeout(events, idle, () => idleError(idle))
        return decode(watched, decoder).pipe(
          Stream.concat(Stream.fromIterableEffect(Effect.suspend(() => Effect.fromResult(decoder.end()))))
        )
      }))
  )
  return total === undefined ? stream : withDeadline(stream, total)
}

/**
 * A decoder that maps one event at a time to stream parts (or a typed failure), for `decodeEvents`.
 *
 * @category models
 * @since 0.3.0
 */
export interface EventDecoder<Event> extends Ending {
  readonly push: (
    event: Event
  ) => ReadonlyArray<LanguageModel.StreamPart> | Result.Result<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError>
}

const pushed = (decoded: SdkSource.Decoded): Effect.Effect<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError> =>
  Array.isArray(decoded) ? Effect.succeed(decoded) : Effect.fromResult(decoded as Result.Result<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError>)

/**
 * Like `decodeStream`, for a decoder that maps one event at a time (`push`):
 * the same opening, retries, decoding, ending and timeouts. On a stream of
 * `ProviderCall.openStream` each pull is one read of the SDK's iterator with
 * its events decoded in place (no `Stream` stage per event), and a consumer
 * outside Effect (`chat.events`) can read the SDK's iterator the same way,
 * without a fiber per event.
 *
 * @category conversions
 * @since 0.3.0
 */
export const decodeEvents = <Event>(
  open: Effect.Effect<Stream.Stream<Event, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>,
  policy: ProviderRetry.Policy | undefined,
  makeDecoder: () => EventDecoder<Event>,
  timeouts: Timeouts = {}
): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
  const idle = timeouts.idleTimeout ?? defaultIdleTimeout
  const total = timeouts.totalTimeout
  return PartSource.toStream(Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const start = clock.currentTimeMillisUnsafe()
    const events = yield* withTotalTimeout(ProviderRetry.withRetry(open, policy), timeouts)
    const decoder = makeDecoder()
    const raw = SdkSource.rawOf(events)
    const deadline = total === undefined ? undefined : start + Duration.toMillis(total)
    if (raw !== undefined) {
      return yield* SdkSource.open(raw, (event) => decoder.push(event), () => decoder.end(), {
        idleMillis: idle === false ? undefined : Duration.toMillis(idle),
        onIdle: () => idleError(idle === false ? 0 : idle),
        deadline,
        onDeadline: () => totalError(total!)
      })
    }
    // Events from elsewhere (a test's stream): through the stages of `decodeStream`, for what is left of the total.
    const left = deadline === undefined ? undefined : deadline - clock.currentTimeMillisUnsafe()
    if (left !== undefined && left <= 0) return yield* Effect.fail(totalError(total!))
    return yield* PartSource.sourceOf(decodeStream(
      Effect.succeed(events),
      false,
      () => decoder,
      (events, decoder) => Stream.flattenIterable(Stream.mapEffect(events, (event) => pushed(decoder.push(event)))),
      { idleTimeout: idle, ...(left === undefined ? {} : { totalTimeout: left }) }
    ))
  }))
}

/**
 * The wire calls of a provider's language model, for `languageModel`:
 * `Prepared` is the request as the vendor's body (with whatever decoding the
 * answer needs), `Answer` a non-streamed answer, `Event` one event of a stream.
 *
 * @category models
 * @since 0.3.0
 */
export interface Wire<Prepared, Answer, Event> {
  /** The request in the vendor's terms, or why it cannot be sent. */
  readonly toBody: (request: LanguageModel.Request) => Result.Result<Prepared, ChatError.ModelError>
  /** A warning logged once per call before it is sent (something of the request the vendor does not take), if any. */
  readonly warning?: ((prepared: Prepared) => string | undefined) | undefined
  /** One attempt of a non-streamed call. */
  readonly call: (prepared: Prepared) => Effect.Effect<Answer, ChatError.ModelError>
  /** A non-streamed answer as the core response. */
  readonly decode: (answer: Answer, prepared: Prepared) => Result.Result<LanguageModel.Response, ChatError.ModelError>
  /** One attempt to open a stream (see `ProviderCall.openStream`). */
  readonly open: (
    prepared: Prepared
  ) => Effect.Effect<Stream.Stream<Event, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>
  /** A fresh decoder for one stream. */
  readonly decoder: (prepared: Prepared) => EventDecoder<Event>
  /** The layer's options: its timeouts (resolved against `defaults`, see `timeouts`) and its retry policy (see `ProviderRetry`; a stream is retried only while it opens). */
  readonly options: TimeoutOptions & { readonly retry?: ProviderRetry.Policy | undefined }
  /** The provider's default bounds (its `…Defaults` module). */
  readonly defaults: TimeoutDefaults
}

/**
 * A `LanguageModel` from a provider's wire calls. `generate`: the body, the
 * call retried under `options.retry` and bounded in all by the call's
 * `totalTimeout`, then the answer decoded. `stream`: the body, then
 * `decodeEvents` with a decoder made per stream, under the stream's bounds. A
 * body that cannot be built fails the call before anything is sent.
 *
 * @category utils
 * @since 0.3.0
 */
export const languageModel = <Prepared, Answer, Event>(
  wire: Wire<Prepared, Answer, Event>
): LanguageModel.Service => {
  const bounds = timeouts(wire.defaults)
  const callTimeouts = bounds.call(wire.options)
  const streamTimeouts = bounds.stream(wire.options)
  const retry = wire.options.retry
  const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
    Effect.flatMap(Effect.fromResult(wire.toBody(request)), (prepared) => {
      const call = withTotalTimeout(ProviderRetry.withRetry(wire.call(prepared), retry), callTimeouts)
      const notice = wire.warning?.(prepared)
      return Effect.flatMap(
        notice === undefined ? call : Effect.andThen(Effect.logWarning(notice), call),
        (answer) => Effect.fromResult(wire.decode(answer, prepared))
      )
    })

  // The stream of `decodeEvents` itself (no `Stream.unwrap`), so that `chat.events` reads the SDK's iterator.
  const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
    const made = wire.toBody(request)
    if (Result.isFailure(made)) return Stream.fail(made.failure)
    const prepared = made.success
    const notice = wire.warning?.(prepared)
    const open = wire.open(prepared)
    // Warned once per call, not once per attempt.
    let warned = notice === undefined
    return decodeEvents(
      notice === undefined
        ? open
        : Effect.andThen(Effect.suspend(() => warned ? Effect.void : (warned = true, Effect.logWarning(notice))), open),
      retry,
      () => wire.decoder(prepared),
      streamTimeouts
    )
  }

  return LanguageModel.make({ generate, stream })
}
