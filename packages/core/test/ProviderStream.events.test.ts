import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Result, Stream } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { Chat, ChatError, LanguageModel, Messages, ProviderCall, ProviderStream } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { checkProperty, fileHandlers, files, recorder } from "./support/Chat.helpers.js"

type Part = LanguageModel.StreamPart

const toError: ProviderCall.ToError = (error) => new ChatError.NetworkError({ message: String(error) })

/**
 * A decoder of numbered events: "n" gives n text deltas ("0" gives none), "x" fails, "boom" throws;
 * at the end it says how many events it saw (or fails when `broken`).
 */
class Numbers implements ProviderStream.EventDecoder<string> {
  seen = 0
  constructor(readonly broken: boolean = false) {}
  push(event: string): ReadonlyArray<Part> | Result.Result<ReadonlyArray<Part>, ChatError.ModelError> {
    this.seen++
    if (event === "x") return Result.fail(new ChatError.ServerError({ message: "bad event", status: 500 }))
    if (event === "boom") throw new Error("boom")
    return Array.from({ length: Number(event) }, (_, i): Part => ({ _tag: "TextDelta", text: `${event}.${i}` }))
  }
  end() {
    return this.broken
      ? Result.fail(new ChatError.NetworkError({ message: `cut after ${this.seen}` }))
      : Result.succeed<ReadonlyArray<Part>>([{ _tag: "TextDelta", text: `end after ${this.seen}` }])
  }
}

/** An SDK-like iterable of `events` that counts the reads made of it. */
const counted = (events: ReadonlyArray<string>) => {
  const state = { reads: 0 }
  const iterable: AsyncIterable<string> = {
    [Symbol.asyncIterator]: () => {
      let i = 0
      return {
        next: () => {
          state.reads++
          return Promise.resolve(i < events.length ? { done: false, value: events[i++]! } : { done: true, value: undefined })
        }
      }
    }
  }
  return { iterable, state }
}

/** The SDK's stream opened as `ProviderCall.openStream` gives it: read by `decodeEvents` without a Stream stage. */
const sdk = (iterable: AsyncIterable<string>) => Effect.sync(() => ProviderCall.iterate(iterable, toError))

const texts = (parts: ReadonlyArray<Part>) => parts.map((p) => (p._tag === "TextDelta" ? p.text : p._tag))

/** What a stream gives: its parts, then its error's tag and message, if any. */
const outcome = (stream: Stream.Stream<Part, ChatError.ModelError>) =>
  Effect.gen(function*() {
    const parts: Array<string> = []
    const exit = yield* Effect.exit(Stream.runForEach(stream, (part) => Effect.sync(() => parts.push(...texts([part])))))
    return { parts, exit: exit._tag === "Success" ? "done" : JSON.stringify(exit.cause) }
  })

describe("ProviderStream.decodeEvents", () => {
  it.effect("the SDK's iterator and any other stream of events give the same parts and failures as decodeStream", () =>
    checkProperty(
      fc.tuple(fc.array(fc.constantFrom<string>("0", "1", "2", "3", "x", "boom"), { maxLength: 8 }), fc.boolean()),
      ([events, broken]) =>
        Effect.gen(function*() {
          const viaStages = ProviderStream.decodeStream(
            Effect.succeed(Stream.fromIterable(events)),
            false,
            () => new Numbers(broken),
            (stream, decoder) => Stream.flattenIterable(Stream.mapEffect(stream, (event): Effect.Effect<ReadonlyArray<Part>, ChatError.ModelError> => {
              const decoded = decoder.push(event)
              return Array.isArray(decoded) ? Effect.succeed(decoded) : Effect.fromResult(decoded as Result.Result<ReadonlyArray<Part>, ChatError.ModelError>)
            }))
          )
          const expected = yield* outcome(viaStages)
          // Straight on the SDK's iterator (the fast path), and through another stream's pull (the general one).
          expect(yield* outcome(ProviderStream.decodeEvents(sdk(counted(events).iterable), false, () => new Numbers(broken)))).toEqual(expected)
          expect(yield* outcome(ProviderStream.decodeEvents(Effect.succeed(Stream.fromIterable(events)), false, () => new Numbers(broken))))
            .toEqual(expected)
        }),
      { numRuns: 100 }
    ))

  it.effect("reads the SDK's iterator only as the consumer pulls (events with no parts are read through)", () =>
    Effect.gen(function*() {
      const source = counted(["1", "0", "0", "2", "1"])
      const stream = ProviderStream.decodeEvents(sdk(source.iterable), false, () => new Numbers())
      expect(texts(yield* Stream.runCollect(Stream.take(stream, 1)))).toEqual(["1.0"])
      expect(source.state.reads).toBe(1)
      const again = counted(["1", "0", "0", "2", "1"])
      expect(texts(yield* Stream.runCollect(Stream.take(ProviderStream.decodeEvents(sdk(again.iterable), false, () => new Numbers()), 2))))
        .toEqual(["1.0", "2.0"])
      // The second pull read through the two empty events to the one with parts, and no further.
      expect(again.state.reads).toBe(4)
    }))

  /** An iterable whose events the test releases one by one. */
  const gated = () => {
    const waiting: Array<(result: IteratorResult<string>) => void> = []
    const iterable: AsyncIterable<string> = {
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<string>>((resolve) => waiting.push(resolve)) })
    }
    return { iterable, release: (event: string) => waiting.shift()!({ done: false, value: event }), pending: () => waiting.length }
  }

  const until = (ready: () => boolean) =>
    Effect.gen(function*() {
      for (let i = 0; i < 1000 && !ready(); i++) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect(ready()).toBe(true)
    })

  it.effect("fails with the idleTimeout's NetworkError when one wait passes the limit, not while events keep coming", () =>
    Effect.gen(function*() {
      const source = gated()
      const seen: Array<string> = []
      const stream = ProviderStream.decodeEvents(sdk(source.iterable), false, () => new Numbers(), { idleTimeout: "10 seconds" })
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runForEach(stream, (part) => Effect.sync(() => seen.push(...texts([part]))))))
      for (let i = 1; i <= 3; i++) {
        yield* until(() => source.pending() === 1)
        yield* TestClock.adjust("9 seconds")
        source.release("1")
        yield* until(() => seen.length === i)
      }
      yield* until(() => source.pending() === 1)
      yield* TestClock.adjust("9 seconds")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toContain("idleTimeout")
    }))

  it.effect("fails with the totalTimeout's NetworkError once the stream ran that long, even while events flow", () =>
    Effect.gen(function*() {
      const source = gated()
      const seen: Array<string> = []
      const stream = ProviderStream.decodeEvents(sdk(source.iterable), false, () => new Numbers(), { totalTimeout: "5 seconds" })
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runForEach(stream, (part) => Effect.sync(() => seen.push(...texts([part]))))))
      for (let i = 1; i <= 4; i++) {
        yield* until(() => source.pending() === 1)
        yield* TestClock.adjust("1 second")
        source.release("1")
        yield* until(() => seen.length === i)
      }
      yield* until(() => source.pending() === 1)
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      expect(error.message).toContain("totalTimeout")
      expect(seen).toHaveLength(4)
    }))
})

describe("chat.stream over a decodeEvents provider (each pull reads the SDK's iterator in place)", () => {
  /** A model streaming `parts` as SDK events of `size` parts each, through `decodeEvents`, or as a plain stream. */
  const modelOf = (parts: ReadonlyArray<Part>, size: number, viaSource: boolean): LanguageModel.Service => {
    const events: Array<ReadonlyArray<Part>> = []
    for (let i = 0; i < parts.length; i += size) events.push(parts.slice(i, i + size))
    return LanguageModel.make({
      stream: () =>
        viaSource
          ? ProviderStream.decodeEvents(sdkOf(events), false, () => ({ push: (event: ReadonlyArray<Part>) => event, end: () => Result.succeed([]) }))
          : Stream.fromIterable(parts)
    })
  }
  const sdkOf = <A>(events: ReadonlyArray<A>) =>
    Effect.sync(() =>
      ProviderCall.iterate(
        (async function*() {
          yield* events
        })(),
        toError
      )
    )

  const scripts: ReadonlyArray<{ readonly name: string; readonly response: MockLanguageModel.ScriptedResponse }> = [
    { name: "text", response: MockLanguageModel.text("Hello there, how are you today?") },
    {
      name: "reasoning, text and two calls",
      response: MockLanguageModel.toolCalls([
        { id: "c1", name: "list_files", arguments: { folder: "logs" } },
        { id: "c2", name: "delete_files", arguments: { paths: ["a.log"] } }
      ], { reasoning: "Look first.", text: "Let me check." })
    }
  ]
  for (const { name, response } of scripts) {
    for (const size of [1, 3]) {
      it.effect(`${name}, ${size} part(s) per event: the same events (and pause) as from a plain stream`, () =>
        Effect.gen(function*() {
          const parts = MockLanguageModel.toStreamParts(
            // The parts the scripted model would stream, as the provider would decode them.
            yield* MockLanguageModel.make([response]).generate({ messages: Messages.fromUser("Hi."), tools: [], options: {} })
          )
          const run = (viaSource: boolean) =>
            Effect.gen(function*() {
              const chat = yield* Chat.make({ tools: files }).pipe(
                Effect.provide(Layer.merge(LanguageModel.layer(modelOf(parts, size, viaSource)), fileHandlers(recorder())))
              )
              return yield* Stream.runCollect(Stream.take(chat.stream(Messages.fromUser("Hi.")), 200))
            })
          const plain = yield* run(false)
          expect(plain.some((event) => event._tag === "TextDelta")).toBe(true)
          expect(yield* run(true)).toEqual(plain)
        }))
    }
  }
})
