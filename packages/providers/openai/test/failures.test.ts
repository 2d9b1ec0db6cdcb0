/**
 * Failure handling on real servers (issue 12, items 8 and 9): streams that
 * stall after their headers, and HTML pages answered with status 200. Real
 * SDK, replay server; delays run on the TestClock.
 */
import { type LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { chatModel, request, responsesModel } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"
import { realSleep, type SleepProbe, withSleepProbe } from "./support/SleepProbe.js"

const ask = request([Messages.user("What is the capital of France?")])

/** A maintenance page as proxies and gateways serve it, with status 200 (synthetic). */
const htmlPage = ReplayServer.json("<!DOCTYPE html><html><head><title>Maintenance</title></head><body>Back soon.</body></html>", {
  headers: { "content-type": "text/html; charset=utf-8" }
})

describe("HTML with status 200", () => {
  it.effect("is a MalformedResponse on both APIs, sent once even with a retry policy", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(htmlPage, htmlPage)
      const responses = yield* responsesModel(server, { retry: Schedule.recurs(4) })
      const viaResponses = yield* Effect.flip(responses.generate(ask))
      expect(viaResponses._tag).toBe("MalformedResponse")
      expect(server.requests).toHaveLength(1)
      const chat = yield* chatModel(server, { retry: Schedule.recurs(4) })
      const viaChat = yield* Effect.flip(chat.generate(ask))
      expect(viaChat._tag).toBe("MalformedResponse")
      expect(server.requests).toHaveLength(2)
    }))
})

/** A few real milliseconds (the HTTP exchange runs in real time; the TestClock only drives Effect's timers). */
const realPause = realSleep(5)

/** Waits (in real time) until `check` holds. */
const eventually = (check: Effect.Effect<boolean>): Effect.Effect<void> =>
  Effect.flatMap(check, (ok) => ok ? Effect.void : Effect.andThen(realPause, eventually(check)))

/** Waits until some fiber sleeps on the TestClock, then moves the clock on. */
const adjustOnceWaiting = (probe: SleepProbe, duration: Duration.Input) =>
  Effect.andThen(probe.untilSomeoneSleeps, TestClock.adjust(duration))

describe("timeouts", () => {
  it.effect("a stream that stalls after its headers and one chunk fails after idleTimeout; it is not retried", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const sse = ReplayServer.fixture("chat-completions/stream-text.sse")
      server.enqueue(ReplayServer.hang({ sse: true, body: ReplayServer.firstEvents(sse, 2) }))
      const model = yield* chatModel(server, { idleTimeout: "30 seconds", retry: Schedule.recurs(3) })
      const seen: Array<LanguageModel.StreamPart> = []
      const fiber = yield* Effect.forkChild(Stream.runForEach(model.stream(ask), (part) => Effect.sync(() => seen.push(part))))
      yield* eventually(Effect.sync(() => seen.length > 0))
      yield* adjustOnceWaiting(probe, "30 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toContain("idleTimeout")
      expect(seen.map((part) => part._tag)).toEqual(["TextDelta"])
      yield* server.waitForClientCloses(1)
      expect(server.requests).toHaveLength(1)
    })))

  it.effect("a Responses stream that stalls before its first event fails the same way", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.hang({ sse: true }))
      const model = yield* responsesModel(server, { idleTimeout: "1 minute" })
      const fiber = yield* Effect.forkChild(Stream.runDrain(model.stream(ask)))
      yield* server.waitForRequests(1)
      yield* adjustOnceWaiting(probe, "1 minute")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error.message).toContain("idleTimeout")
      yield* server.waitForClientCloses(1)
    })))

  it.effect("totalTimeout bounds a whole call, a body that never ends included", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.hang())
      const model = yield* chatModel(server, { totalTimeout: "2 minutes" })
      const fiber = yield* Effect.forkChild(model.generate(ask))
      yield* server.waitForRequests(1)
      yield* adjustOnceWaiting(probe, "2 minutes")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toContain("totalTimeout")
      yield* server.waitForClientCloses(1)
    })))

  it.effect("with idleTimeout: false a stalled stream keeps waiting", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.hang({ sse: true }))
      const model = yield* chatModel(server, { idleTimeout: false })
      const fiber = yield* Effect.forkChild(Stream.runDrain(model.stream(ask)))
      yield* server.waitForRequests(1)
      for (let i = 0; i < 21; i++) yield* realPause
      // Nothing waits on the clock: no idle timer was started.
      expect(probe.pending()).toBe(0)
      yield* TestClock.adjust("1 hour")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* Fiber.interrupt(fiber)
      yield* server.waitForClientCloses(1)
    })))
})

describe("HTML with status 200, streamed", () => {
  it.effect("is a MalformedResponse on both APIs when a stream was asked for, not retried", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(htmlPage, htmlPage)
      const responses = yield* responsesModel(server, { retry: Schedule.recurs(4) })
      const viaResponses = yield* Effect.flip(Stream.runDrain(responses.stream(ask)))
      const chat = yield* chatModel(server, { retry: Schedule.recurs(4) })
      const viaChat = yield* Effect.flip(Stream.runDrain(chat.stream(ask)))
      expect([viaResponses._tag, viaChat._tag]).toEqual(["MalformedResponse", "MalformedResponse"])
      expect(server.requests).toHaveLength(2)
    }))
})
