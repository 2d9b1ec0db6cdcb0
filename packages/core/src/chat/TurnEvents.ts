/**
 * A streamed turn's events as a plain `AsyncIterable` (`chat.events`), for
 * code outside Effect: `for await (const event of chat.events(messages))`.
 * The events are those of `chat.stream`, with its guarantees:
 *
 * - backpressure: nothing is read from the model ahead of the consumer, and
 *   the turn waits when the consumer lags 64 events behind;
 * - interruption: leaving the loop (`break`, `return`, a throw) or aborting
 *   `signal` interrupts the turn, which records its running calls as
 *   interrupted and closes the model's HTTP stream; the loop ends once that
 *   is done (an abort then throws the signal's reason);
 * - the end: the last event is `Paused` or `Completed` with the turn's
 *   messages (also kept as `final`); a failed turn throws its typed
 *   `ChatError` (carrying the latest messages).
 *
 * While the model streams, the consumer's `next()` reads the provider's
 * stream itself (for providers built on `ProviderStream.decodeEvents`, the
 * SDK's own iterator) and the turn's fiber waits once per response: there is
 * no hop between fibers, and no Effect, per event (packages/bench, scenario 3).
 *
 * @since 0.3.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Stream from "effect/Stream"
import type { ChatEvent, Final } from "./ChatEvent.js"
import { isFinal } from "./ChatEvent.js"
import type * as ChatError from "../data/ChatError.js"
import * as PartSource from "../model/PartSource.js"
import * as LanguageModel from "../model/LanguageModel.js"

/**
 * A turn's events, read with `for await`; `final` is its last event once read.
 *
 * @category models
 * @since 0.3.0
 */
export interface TurnEvents extends AsyncIterableIterator<ChatEvent, void, undefined> {
  /** The last event (`Paused` or `Completed`, with the turn's messages), once the loop read it. */
  readonly final: Final | undefined
  /** Leaves the loop (what `break` calls): interrupts the turn, and answers once it ended. */
  return(): Promise<IteratorResult<ChatEvent, void>>
}

/**
 * Settings of `chat.events` besides the turn's own. `R`: the services the chat's strategies use.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options<R = never> {
  /** Aborting it interrupts the turn (as leaving the loop does); the loop then throws its reason. */
  readonly signal?: AbortSignal | undefined
  /** The services the turn runs with (those the strategies need, a tracer…); default: none. */
  readonly context?: Context.Context<R> | undefined
}

/**
 * How the turn announces an event.
 *
 * @category models
 * @since 0.3.0
 */
export type Emit = (event: ChatEvent) => Effect.Effect<void>

/**
 * How the turn has a model response's stream gathered (running `onPart` on each part).
 *
 * @category models
 * @since 0.3.0
 */
export type Collect = (
  parts: Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError>,
  onPart: (part: LanguageModel.StreamPart) => Effect.Effect<void>
) => Effect.Effect<LanguageModel.Response, ChatError.ModelError>

/**
 * Runs a streamed turn with these emits and this collect; it gives the turn's last event.
 *
 * @category models
 * @since 0.3.0
 */
export type RunTurn<E, R> = (emit: Emit, collect: Collect) => Effect.Effect<Final, E, R>

/** How many events are buffered ahead of a slow consumer before the turn waits (as `chat.stream`). */
const capacity = 64

/** A model response being read by the consumer: the turn waits on `resume`. */
class Handover implements PartSource.Reader {
  readonly acc = new LanguageModel.Accumulator()
  reading = false
  constructor(
    readonly owner: Iteration<unknown, unknown>,
    readonly source: PartSource.PartSource,
    readonly onPart: (part: LanguageModel.StreamPart) => Effect.Effect<void>,
    readonly resume: (effect: Effect.Effect<LanguageModel.Response, ChatError.ModelError>) => void
  ) {}

  readonly onParts = (parts: PartSource.Parts): void => {
    this.reading = false
    const owner = this.owner
    if (owner.handover !== this) return
    owner.inPart = true
    try {
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i]!
        this.acc.add(part)
        const effect = this.onPart(part)
        // A delta's emits are done when they return (`Effect.void`); anything else runs here.
        if (effect !== Effect.void) owner.runSync(effect)
      }
    } finally {
      owner.inPart = false
    }
    owner.pump()
  }

  readonly onEnd = (): void => this.settle(LanguageModel.finish(this.acc))

  readonly onFailure = (cause: Cause.Cause<ChatError.ModelError>): void => this.settle(Effect.failCause(cause))

  private settle(effect: Effect.Effect<LanguageModel.Response, ChatError.ModelError>): void {
    this.reading = false
    if (this.owner.handover !== this) return
    this.owner.handover = undefined
    this.resume(effect)
  }
}

class Iteration<E, R> implements TurnEvents {
  private readonly queue: Array<ChatEvent> = []
  private head = 0
  private fiber: Fiber.Fiber<Final, E> | undefined
  private exit: Exit.Exit<Final, E> | undefined
  /** Why the consumer stopped the turn, if it did. */
  private stopped: "return" | "abort" | undefined
  /** The loop is over: every later `next()` is done. */
  private over = false
  private waiting: { readonly resolve: (result: IteratorResult<ChatEvent, void>) => void; readonly reject: (error: unknown) => void } | undefined
  /** The turn, waiting for room in the queue. */
  private space: (() => void) | undefined
  private readonly context: Context.Context<R>
  /** The latest `next()`'s answer. */
  private last: Promise<unknown> = Promise.resolve()
  handover: Handover | undefined
  /** While the consumer hands a part of the model's stream to the turn (see `emit`). */
  inPart = false
  final: Final | undefined

  constructor(private readonly run: RunTurn<E, R>, private readonly options: Options<R>) {
    this.context = options.context ?? (Context.empty() as Context.Context<R>)
    options.signal?.addEventListener("abort", this.onAbort, { once: true })
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<ChatEvent, void>> {
    // A `next()` called before the last one answered waits its turn (`for await` never does this).
    if (this.waiting !== undefined) return this.last.then(() => this.next(), () => this.next())
    if (this.fiber === undefined && !this.over) this.start()
    const answer = new Promise<IteratorResult<ChatEvent, void>>((resolve, reject) => {
      this.waiting = { resolve, reject }
      this.pump()
    })
    this.last = answer
    return answer
  }

  /** Leaving the loop: interrupts the turn and ends once it ended (its running calls recorded as interrupted). */
  return(): Promise<IteratorResult<ChatEvent, void>> {
    if (this.exit !== undefined || this.fiber === undefined) {
      this.finish()
      return Promise.resolve({ done: true, value: undefined })
    }
    this.stopped ??= "return"
    const fiber = this.fiber
    return new Promise((resolve) => {
      fiber.addObserver(() => {
        // Events the turn queued before it stopped are not read any more.
        this.finish()
        resolve({ done: true, value: undefined })
      })
      fiber.interruptUnsafe()
    })
  }

  private start(): void {
    if (this.options.signal?.aborted === true) {
      this.stopped = "abort"
      return
    }
    const fiber = Effect.runForkWith(this.context)(this.run(this.emit, this.collect))
    this.fiber = fiber
    fiber.addObserver(this.onExit)
  }

  private readonly onExit = (exit: Exit.Exit<Final, E>): void => {
    this.exit = exit
    if (Exit.isSuccess(exit)) this.queue.push(exit.value)
    this.pump()
  }

  private readonly onAbort = (): void => {
    this.stopped ??= "abort"
    if (this.fiber !== undefined && this.exit === undefined) this.fiber.interruptUnsafe()
    else this.pump()
  }

  /**
   * Emits from the consumer's handling of a part are made at once (that is when they are called);
   * the turn's own are effects it runs in order, waiting while the consumer lags `capacity` behind.
   */
  private readonly emit: Emit = (event) => {
    if (this.inPart) {
      this.push(event)
      return Effect.void
    }
    return Effect.suspend(() => {
      this.push(event)
      if (this.queue.length - this.head < capacity) return Effect.void
      return Effect.callback<void>((resume) => {
        this.space = () => resume(Effect.void)
      })
    })
  }

  private push(event: ChatEvent): void {
    this.queue.push(event)
    if (this.waiting !== undefined) this.pump()
  }

  private readonly collect: Collect = (parts, onPart) =>
    Effect.scoped(Effect.flatMap(PartSource.sourceOf(parts), (source) =>
      Effect.callback<LanguageModel.Response, ChatError.ModelError>((resume) => {
        this.handover = new Handover(this as Iteration<unknown, unknown>, source, onPart, resume)
        this.pump()
        // Interrupted (the consumer left): the scope closes the model's stream; a late read is ignored.
        return Effect.sync(() => void (this.handover = undefined))
      })))

  /** Runs an effect of the turn's that a part's handling returned, with the turn's services. */
  runSync(effect: Effect.Effect<void>): void {
    Effect.runSyncWith(this.context)(effect)
  }

  /** Answers the pending `next()` if it can: a queued event, a read of the model's stream, or the end. */
  pump(): void {
    const waiting = this.waiting
    if (waiting === undefined) return
    if (this.over) {
      this.waiting = undefined
      return waiting.resolve({ done: true, value: undefined })
    }
    if (this.stopped === "abort") {
      if (this.exit === undefined && this.fiber !== undefined) return
      this.waiting = undefined
      this.finish()
      return waiting.reject(this.options.signal?.reason)
    }
    if (this.head < this.queue.length) {
      const event = this.queue[this.head++]!
      if (this.head === this.queue.length) {
        this.queue.length = 0
        this.head = 0
      }
      const space = this.space
      if (space !== undefined && this.queue.length - this.head < capacity) {
        this.space = undefined
        space()
      }
      this.waiting = undefined
      if (isFinal(event)) this.final = event
      return waiting.resolve({ done: false, value: event })
    }
    const handover = this.handover
    if (handover !== undefined) {
      if (!handover.reading) {
        handover.reading = true
        handover.source.read(handover)
      }
      return
    }
    const exit = this.exit
    if (exit === undefined) return
    this.waiting = undefined
    this.finish()
    if (Exit.isSuccess(exit) || this.stopped !== undefined) return waiting.resolve({ done: true, value: undefined })
    waiting.reject(Cause.squash(exit.cause))
  }

  private finish(): void {
    this.over = true
    this.options.signal?.removeEventListener("abort", this.onAbort)
  }
}

/**
 * The events of `run` as an `AsyncIterable` (for `Chat`: `chat.events` is
 * this over its streamed turn). The turn starts on the first `next()`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = <E, R>(run: RunTurn<E, R>, options: Options<R> = {}): TurnEvents => new Iteration(run, options)
