import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Result, Stream } from "effect"
import { TestClock } from "effect/testing"
import { ChatError, type LanguageModel, ProviderStream } from "../src/index.js"

type Part = LanguageModel.StreamPart

/** A decoder that counts the events it saw and says at the end how many. */
class Counter implements ProviderStream.Ending {
  seen = 0
  constructor(readonly broken: boolean = false) {}
  end() {
    return this.broken
      ? Result.fail(new ChatError.NetworkError({ message: `cut after ${this.seen}` }))
      : Result.succeed<ReadonlyArray<Part>>([{ _tag: "TextDelta", text: `end after ${this.seen}` }])
  }
}

const decode = (events: Stream.Stream<string, ChatError.ModelError>, decoder: Counter) =>
  Stream.map(events, (text): Part => {
    decoder.seen++
    return { _tag: "TextDelta", text }
  })

const texts = (parts: ReadonlyArray<Part>) => parts.map((p) => (p._tag === "TextDelta" ? p.text : p._tag))

describe("ProviderStream.decodeStream", () => {
  it.effect("decodes the events with a fresh decoder per stream, then appends what the decoder says at the end", () =>
    Effect.gen(function*() {
      const stream = ProviderStream.decodeStream(Effect.succeed(Stream.make("a", "b")), false, () => new Counter(), decode)
      expect(texts(yield* Stream.runCollect(stream))).toEqual(["a", "b", "end after 2"])
      expect(texts(yield* Stream.runCollect(stream))).toEqual(["a", "b", "end after 2"])
    }))

  it.effect("fails with the decoder's error when the stream broke off", () =>
    Effect.gen(function*() {
      const stream = ProviderStream.decodeStream(Effect.succeed(Stream.make("a")), false, () => new Counter(true), decode)
      const error = yield* Effect.flip(Stream.runCollect(stream))
      expect(error).toMatchObject({ _tag: "NetworkError", message: "cut after 1" })
    }))

  it.effect("retries the opening but never a stream that has started", () =>
    Effect.gen(function*() {
      let opens = 0
      const open = Effect.suspend(() => {
        opens++
        return opens === 1
          ? Effect.fail(new ChatError.ServerError({ message: "503", status: 503 }))
          : Effect.succeed(Stream.concat(Stream.make("a"), Stream.fail(new ChatError.ServerError({ message: "mid", status: 500 }))))
      })
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runCollect(ProviderStream.decodeStream(open, undefined, () => new Counter(), decode))))
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "ServerError", message: "mid" })
      expect(opens).toBe(2)
    }))

  it.effect("fails with a NetworkError when the stream sends nothing for idleTimeout", () =>
    Effect.gen(function*() {
      const stream = ProviderStream.decodeStream(
        Effect.succeed(Stream.concat(Stream.make("a"), Stream.never)),
        false,
        () => new Counter(),
        decode,
        { idleTimeout: "10 seconds" }
      )
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runCollect(stream)))
      yield* TestClock.adjust("10 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toContain("idleTimeout")
    }))

  it.effect("fails with a NetworkError when the whole stream runs past totalTimeout, even while events flow", () =>
    Effect.gen(function*() {
      const ticking = Stream.fromEffectRepeat(Effect.as(Effect.sleep("1 second"), "tick"))
      const stream = ProviderStream.decodeStream(Effect.succeed(ticking), false, () => new Counter(), decode, {
        totalTimeout: "5 seconds"
      })
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runCollect(stream)))
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toContain("totalTimeout")
    }))
})

describe("ProviderStream.withTotalTimeout", () => {
  it.effect("fails a call that runs past totalTimeout with a NetworkError, and leaves it alone without one", () =>
    Effect.gen(function*() {
      const slow = Effect.as(Effect.sleep("1 minute"), "late")
      const fiber = yield* Effect.forkChild(Effect.flip(ProviderStream.withTotalTimeout(slow, { totalTimeout: "1 second" })))
      const free = yield* Effect.forkChild(ProviderStream.withTotalTimeout(slow, {}))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(fiber)).message).toContain("totalTimeout")
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.join(free)).toBe("late")
    }))
})
