/**
 * A `PartSource` straight on an SDK's async iterator: each read is one
 * `iterator.next()` (again while an event decodes to no parts), its events
 * decoded with a plain function; no fiber and no `Stream` stage per event.
 * One fiber per stream watches it: a read waiting longer than the idle
 * timeout, or the stream running past its deadline, fails the read.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as ChatError from "../../data/ChatError.js"
import type * as LanguageModel from "../../model/LanguageModel.js"
import type { Parts, PartSource, Reader } from "../../model/PartSource.js"

/** Maps whatever an SDK threw to a model error (as `ProviderCall.ToError`). */
type ToError = (error: unknown, now: number) => ChatError.ModelError

/** The SDK iterator behind a stream of `ProviderCall.iterate`, and how its failures map. */
export interface Raw<A> {
  readonly iterator: AsyncIterator<A>
  readonly toError: ToError
}

const rawKey: unique symbol = Symbol.for("@chat-ts/core/ProviderCall/raw")

/** `stream`, remembering the iterator it reads. */
export const withRaw = <S extends object, A>(stream: S, raw: Raw<A>): S => Object.assign(stream, { [rawKey]: raw })

/** The iterator a stream of `ProviderCall.iterate` reads, if `stream` is one. */
export const rawOf = <A>(stream: Stream.Stream<A, ChatError.ModelError>): Raw<A> | undefined =>
  (stream as { readonly [rawKey]?: Raw<A> })[rawKey]

/** A decoded event: its parts, or a typed failure. */
export type Decoded = ReadonlyArray<LanguageModel.StreamPart> | Result.Result<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError>

/** How a stream is watched: the longest wait for one event, and when the whole stream must be over (on the `Clock`). */
export interface Watch {
  readonly idleMillis: number | undefined
  readonly onIdle: () => ChatError.ModelError
  readonly deadline: number | undefined
  readonly onDeadline: () => ChatError.ModelError
}

const isParts = (decoded: Decoded): decoded is ReadonlyArray<LanguageModel.StreamPart> => Array.isArray(decoded)

class SdkSource<A> implements PartSource {
  /** The read waiting for its parts, while one waits. */
  reader: Reader | undefined
  /** When the pending `iterator.next()` was called, while one is pending. */
  since: number | undefined
  ended = false
  failure: ChatError.ModelError | undefined

  constructor(
    readonly raw: Raw<A>,
    readonly decode: (event: A) => Decoded,
    readonly end: () => Result.Result<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError>,
    readonly clock: Clock.Clock
  ) {}

  read(reader: Reader): void {
    if (this.failure !== undefined) return reader.onFailure(Cause.fail(this.failure))
    if (this.ended) return reader.onEnd()
    this.reader = reader
    this.pull()
  }

  private pull(): void {
    this.since = this.clock.currentTimeMillisUnsafe()
    this.raw.iterator.next().then(this.onResult, this.onRejected)
  }

  private readonly onResult = (result: IteratorResult<A>): void => {
    const reader = this.reader
    if (reader === undefined) return
    if (result.done === true) return this.finish(reader)
    let decoded: Decoded
    try {
      decoded = this.decode(result.value)
    } catch (defect) {
      return this.settle(reader).onFailure(Cause.die(defect))
    }
    if (isParts(decoded)) return this.deliver(reader, decoded)
    if (Result.isFailure(decoded)) return this.fail(decoded.failure)
    this.deliver(reader, decoded.success)
  }

  private deliver(reader: Reader, parts: ReadonlyArray<LanguageModel.StreamPart>): void {
    // An event with nothing to say (a role, an empty delta): read the next one for the same read.
    if (parts.length === 0) return this.pull()
    this.settle(reader).onParts(parts as Parts)
  }

  private readonly onRejected = (error: unknown): void => {
    if (this.reader !== undefined) this.fail(this.raw.toError(error, this.clock.currentTimeMillisUnsafe()))
  }

  private finish(reader: Reader): void {
    this.ended = true
    const last = this.end()
    if (Result.isFailure(last)) return this.fail(last.failure)
    const parts = last.success
    this.settle(reader)
    if (parts.length > 0) reader.onParts(parts as Parts)
    else reader.onEnd()
  }

  private settle(reader: Reader): Reader {
    this.reader = undefined
    this.since = undefined
    return reader
  }

  /** Fails the stream: the pending read now, any later read at once. */
  fail(error: ChatError.ModelError): void {
    if (this.failure !== undefined) return
    this.failure = error
    const reader = this.reader
    if (reader !== undefined) this.settle(reader).onFailure(Cause.fail(error))
  }
}

/** Sleeps until the source waited too long for an event, or ran past its deadline, and fails it. */
const watchdog = <A>(source: SdkSource<A>, watch: Watch): Effect.Effect<void> =>
  Effect.gen(function*() {
    const { deadline, idleMillis } = watch
    while (!source.ended && source.failure === undefined) {
      const now = source.clock.currentTimeMillisUnsafe()
      if (deadline !== undefined && now >= deadline) return source.fail(watch.onDeadline())
      const since = source.since
      if (idleMillis !== undefined && since !== undefined && now - since >= idleMillis) return source.fail(watch.onIdle())
      const idleWait = idleMillis === undefined ? Infinity : since === undefined ? idleMillis : since + idleMillis - now
      yield* Effect.sleep(Math.max(1, Math.min(idleWait, deadline === undefined ? Infinity : deadline - now)))
    }
  })

/** Opens a source on `raw`, decoding each event with `decode` and ending with `end`; its watchdog lives in the scope. */
export const open = <A>(
  raw: Raw<A>,
  decode: (event: A) => Decoded,
  end: () => Result.Result<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError>,
  watch: Watch
): Effect.Effect<PartSource, never, Scope.Scope> =>
  Effect.gen(function*() {
    const source = new SdkSource(raw, decode, end, yield* Clock.Clock)
    if (watch.idleMillis !== undefined || watch.deadline !== undefined) yield* Effect.forkScoped(watchdog(source, watch))
    return source
  })
