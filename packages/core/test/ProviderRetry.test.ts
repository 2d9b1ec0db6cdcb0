import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { ChatError, ProviderRetry } from "../src/index.js"

const serverError = () => new ChatError.ServerError({ message: "boom", status: 503 })
const rateLimited = (retryAfterMillis?: number) =>
  new ChatError.RateLimited({ message: "slow down", ...(retryAfterMillis === undefined ? {} : { retryAfterMillis }) })

/** A call failing with the errors in order, then answering "ok"; `attempts()` counts the calls. */
const scripted = (errors: ReadonlyArray<ChatError.ModelError>) => {
  let attempts = 0
  const call = Effect.suspend(() => {
    const error = errors[attempts]
    attempts++
    return error === undefined ? Effect.succeed("ok") : Effect.fail(error)
  })
  return { call, attempts: () => attempts }
}

describe("ProviderRetry.withRetry", () => {
  it.effect("retries retryable failures on the schedule's delays, then answers", () =>
    Effect.gen(function*() {
      const s = scripted([serverError(), serverError()])
      const policy = ProviderRetry.honourRetryAfter(Schedule.spaced("1 second"))
      const fiber = yield* Effect.forkChild(ProviderRetry.withRetry(s.call, policy))
      yield* TestClock.adjust("999 millis")
      expect(s.attempts()).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(s.attempts()).toBe(2)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toBe("ok")
      expect(s.attempts()).toBe(3)
    }))

  it.effect("never retries an error that is not retryable", () =>
    Effect.gen(function*() {
      const s = scripted([new ChatError.InvalidRequest({ message: "bad", status: 400 })])
      const error = yield* Effect.flip(ProviderRetry.withRetry(s.call, ProviderRetry.schedule({ base: "1 millis" })))
      expect(error._tag).toBe("InvalidRequest")
      expect(s.attempts()).toBe(1)
    }))

  it.effect("`false` disables retries", () =>
    Effect.gen(function*() {
      const s = scripted([serverError()])
      expect((yield* Effect.flip(ProviderRetry.withRetry(s.call, false)))._tag).toBe("ServerError")
      expect(s.attempts()).toBe(1)
    }))

  it.effect("undefined means the default policy: 3 retries, then the last error", () =>
    Effect.gen(function*() {
      const s = scripted([serverError(), serverError(), serverError(), serverError(), serverError()])
      const fiber = yield* Effect.forkChild(Effect.flip(ProviderRetry.withRetry(s.call, undefined)))
      yield* TestClock.adjust("1 minute")
      expect((yield* Fiber.join(fiber))._tag).toBe("ServerError")
      expect(s.attempts()).toBe(4)
    }))
})

describe("ProviderRetry.schedule", () => {
  it.effect("stops after `retries` retries", () =>
    Effect.gen(function*() {
      const s = scripted(Array.from({ length: 10 }, serverError))
      const fiber = yield* Effect.forkChild(Effect.flip(ProviderRetry.withRetry(s.call, ProviderRetry.schedule({ retries: 2, base: "10 millis" }))))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      expect(s.attempts()).toBe(3)
    }))

  it.effect("waits at least the rate limit's retry-after, whatever its own backoff", () =>
    Effect.gen(function*() {
      const s = scripted([rateLimited(10_000)])
      const policy = ProviderRetry.schedule({ base: "1 millis", maxDelay: "1 millis" })
      const fiber = yield* Effect.forkChild(ProviderRetry.withRetry(s.call, policy))
      yield* TestClock.adjust("9999 millis")
      expect(s.attempts()).toBe(1)
      yield* TestClock.adjust("2 millis")
      expect(yield* Fiber.join(fiber)).toBe("ok")
      expect(s.attempts()).toBe(2)
    }))

  it.effect("surfaces a rate limit that asks for longer than maxRetryAfter instead of waiting", () =>
    Effect.gen(function*() {
      const s = scripted([rateLimited(120_000)])
      const error = yield* Effect.flip(ProviderRetry.withRetry(s.call, ProviderRetry.schedule({ maxRetryAfter: "1 minute" })))
      expect(error).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 120_000 })
      expect(s.attempts()).toBe(1)
    }))
})

describe("ProviderRetry.requestedDelay", () => {
  it("is the rate limit's retry-after, never negative, and zero for other errors", () => {
    expect(Duration.toMillis(ProviderRetry.requestedDelay(rateLimited(1500)))).toBe(1500)
    expect(Duration.toMillis(ProviderRetry.requestedDelay(rateLimited(-5)))).toBe(0)
    expect(Duration.toMillis(ProviderRetry.requestedDelay(rateLimited()))).toBe(0)
    expect(Duration.toMillis(ProviderRetry.requestedDelay(serverError()))).toBe(0)
  })
})
