/**
 * Counting the Effect interpreter's instructions: a `Supervisor` with
 * `OpSupervision` on sees every instruction the run loop executes, in every
 * fiber the program forks. The count is a property of the code, not of the
 * machine or its load: the same program always executes the same instructions.
 */
import * as Effect from "effect/Effect"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"
import * as Supervisor from "effect/Supervisor"

class Counter extends Supervisor.AbstractSupervisor<number> {
  count = 0
  get value() {
    return Effect.sync(() => this.count)
  }
  override onEffect(): void {
    this.count++
  }
}

/** Runs `effect` once and returns its result with the interpreter instructions it took. */
export const countInstructions = async <A, E>(effect: Effect.Effect<A, E>): Promise<{ readonly value: A; readonly instructions: number }> => {
  const counter = new Counter()
  const value = await Effect.runPromise(
    effect.pipe(
      Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)),
      Effect.supervised(counter)
    )
  )
  return { value, instructions: counter.count }
}
