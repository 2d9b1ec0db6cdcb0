/**
 * What `TestClock.sleeps()` told in Effect 3, observed from outside: the
 * test's `TestClock` wrapped so that every sleep on it is counted while it
 * waits. A test waits (in real time) until the code under test sleeps on the
 * clock, then moves the clock on; or checks that nothing sleeps on it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { TestClock } from "effect/testing"

/** The fibers sleeping on the probed clock. */
export interface SleepProbe {
  /** How many sleeps are pending now. */
  readonly pending: () => number
  /** Waits, in real time, until at least one sleep is pending; dies after 10 seconds of real time without one. */
  readonly untilSomeoneSleeps: Effect.Effect<void>
}

/** How long `untilSomeoneSleeps` waits, in real time, before it gives up. */
const patienceMillis = 10_000

/** A few real milliseconds: the HTTP exchange runs in real time, the TestClock only drives Effect's timers. */
export const realSleep = (millis: number): Effect.Effect<void> =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/** Runs `f` with the test's clock wrapped by a probe counting the sleeps pending on it. */
export const withSleepProbe = <A, E, R>(f: (probe: SleepProbe) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  TestClock.testClockWith((clock) => {
    let pending = 0
    const probed: TestClock.TestClock = {
      ...clock,
      sleep: (duration) =>
        Effect.acquireUseRelease(
          Effect.sync(() => pending++),
          () => clock.sleep(duration),
          () => Effect.sync(() => pending--)
        )
    }
    const waitUntil = (deadline: number): Effect.Effect<void> =>
      Effect.suspend(() =>
        pending > 0
          ? Effect.void
          : Date.now() > deadline
          ? Effect.die(new Error(`SleepProbe: nothing slept on the clock within ${patienceMillis} ms (real time)`))
          : Effect.andThen(realSleep(2), waitUntil(deadline))
      )
    const untilSomeoneSleeps: Effect.Effect<void> = Effect.suspend(() => waitUntil(Date.now() + patienceMillis))
    return Effect.provideService(f({ pending: () => pending, untilSomeoneSleeps }), Clock.Clock, probed)
  })
