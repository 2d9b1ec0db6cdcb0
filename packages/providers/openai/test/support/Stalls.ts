/**
 * Watching a call wait on a server that sends its headers and then stalls,
 * for the timeout tests of every provider package: the call's timers run on
 * the probed TestClock, the HTTP exchange in real time (every real wait is
 * bounded: the replay server's and the probe's give up after 10 seconds).
 */
import type { ChatError } from "@chat-ts/core"
import type { ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { realSleep, type SleepProbe } from "./SleepProbe.js"

/** One millisecond short of `duration`. */
export const justShortOf = (duration: Duration.Input): Duration.Duration => Duration.millis(Duration.toMillis(duration) - 1)

/**
 * Runs `call` against a server that stalls after its headers, moves the
 * TestClock to one millisecond short of `bound` (the call still waits), then
 * to `bound`: the call must fail. Returns its error once the client closed the
 * request.
 */
export const failsExactlyAt = (
  probe: SleepProbe,
  server: ReplayServer.ReplayServer,
  call: Effect.Effect<unknown, ChatError.ModelError>,
  bound: Duration.Input
): Effect.Effect<ChatError.ModelError> =>
  Effect.gen(function*() {
    const failure = Effect.flip(call).pipe(Effect.catch(() => Effect.die(new Error("the call succeeded"))))
    const fiber = yield* Effect.forkChild(failure)
    yield* server.waitForRequests(1)
    yield* probe.untilSomeoneSleeps
    yield* TestClock.adjust(justShortOf(bound))
    yield* realSleep(20)
    expect(fiber.pollUnsafe()).toBeUndefined()
    yield* TestClock.adjust(Duration.millis(1))
    const error = yield* Fiber.join(fiber)
    yield* server.waitForClientCloses(1)
    return error
  })

/**
 * Runs `call` against a server that stalls after its headers: after a little
 * real time nothing sleeps on the clock (no timer was started) and a day on
 * the clock changes nothing; then the call is interrupted and its request closed.
 */
export const waitsUnbounded = (
  probe: SleepProbe,
  server: ReplayServer.ReplayServer,
  call: Effect.Effect<unknown, ChatError.ModelError>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(call)
    yield* server.waitForRequests(1)
    yield* realSleep(100)
    expect(probe.pending()).toBe(0)
    yield* TestClock.adjust("1 day")
    expect(fiber.pollUnsafe()).toBeUndefined()
    yield* Fiber.interrupt(fiber)
    yield* server.waitForClientCloses(1)
  })
