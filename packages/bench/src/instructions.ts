/**
 * Counting the Effect interpreter's instructions. Effect 4's fiber counts the
 * operations its run loop executes (`currentOpCount`: every primitive it
 * evaluates and every continuation it calls inline), starting from zero on each
 * entry into the loop. Wrapping the fibers' `runLoop` adds each run's count to a
 * total, in every fiber the program forks. The count is a property of the code,
 * not of the machine or its load: the same program always executes the same
 * instructions. (Effect 3's `Supervisor` with `OpSupervision`, used before, is
 * gone in Effect 4; the fiber's counter is internal, so this reads it through
 * the prototype of a live fiber, for the benchmarks only.)
 */
import * as Effect from "effect/Effect"

interface CountingFiber {
  currentOpCount: number
  runLoop: (this: CountingFiber, effect: unknown) => unknown
}

let total = 0
let installed = false

/** Wraps the fiber prototype's run loop once, so every run adds its operation count to `total`. */
const install = (): void => {
  if (installed) return
  const fiber = Effect.runSync(Effect.withFiber((fiber) => Effect.succeed(fiber))) as unknown as CountingFiber
  const proto = Object.getPrototypeOf(fiber) as CountingFiber
  const runLoop = proto.runLoop
  if (typeof runLoop !== "function" || typeof fiber.currentOpCount !== "number") {
    throw new Error("this effect's fibers have no runLoop/currentOpCount to count instructions with")
  }
  proto.runLoop = function(this: CountingFiber, effect: unknown) {
    try {
      return runLoop.call(this, effect)
    } finally {
      total += this.currentOpCount
    }
  }
  installed = true
}

/** Runs `effect` once and returns its result with the interpreter instructions it took. */
export const countInstructions = async <A, E>(effect: Effect.Effect<A, E>): Promise<{ readonly value: A; readonly instructions: number }> => {
  install()
  const before = total
  const value = await Effect.runPromise(effect)
  return { value, instructions: total - before }
}
