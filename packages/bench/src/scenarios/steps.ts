/**
 * Scenario 7: the cost of a step against the Effect floor and as the turn
 * grows. The same loop as scenario 1 (a no-op tool N times, then an answer),
 * for chat-ts only and at N up to 1,000, beside a plain Effect program doing
 * a step's work with nothing else (one model call, one tool call, two pushes:
 * `peers/floor.ts`). Two measures: interpreter instructions (deterministic:
 * counted by a supervisor, see `instructions.ts`) and CPU time per step.
 * Every chat-ts turn is checked to complete with all its messages.
 */
import * as Checks from "../checks.js"
import { countInstructions } from "../instructions.js"
import { type Budget, timeTasks, type Timing } from "../harness.js"
import * as chatts from "../peers/chatts.js"
import { floorTurn } from "../peers/floor.js"
import * as Effect from "effect/Effect"

export interface Config {
  readonly steps: ReadonlyArray<number>
  readonly budget: Budget
  /** The cost of each check of a step (`checks.ts`); not measured without. */
  readonly checks?: Checks.Config
}

export interface Row {
  readonly steps: number
  readonly modelCalls: number
  /** Interpreter instructions of one whole turn, and per model call. */
  readonly instructions: number
  readonly instructionsPerStep: number
  readonly floorInstructionsPerStep: number
  readonly perStep: Timing
  readonly floorPerStep: Timing
}

export interface Result {
  readonly rows: ReadonlyArray<Row>
  /** What each check of a step costs (see `checks.ts`). */
  readonly checks?: ReadonlyArray<Checks.Row>
}

const perStep = (timing: Timing, calls: number): Timing => ({
  ...timing,
  medianUs: timing.medianUs / calls,
  p95Us: timing.p95Us / calls,
  meanUs: timing.meanUs / calls,
  minUs: timing.minUs / calls,
  maxUs: timing.maxUs / calls,
  wallMedianUs: timing.wallMedianUs / calls,
  wallP95Us: timing.wallP95Us / calls
})

const round = (n: number) => Math.round(n * 10) / 10

export const run = async (config: Config): Promise<Result> => {
  const rows: Array<Row> = []
  for (const steps of config.steps) {
    const turn = await chatts.loopTurnEffect(steps)
    const floor = floorTurn(steps)
    // The first run of a chat warms what is built lazily (the built-in tracer, Schema parsers): count the second.
    await Effect.runPromise(turn)
    const counted = await countInstructions(turn)
    const floorCounted = await countInstructions(floor)
    if (floorCounted.value !== 2 * steps + 2) throw new Error("floor: the turn did not complete")
    const scale = Math.max(1, Math.floor(steps / 10))
    const budget: Budget = { ...config.budget, iterations: Math.max(2, Math.floor(config.budget.iterations / scale)) }
    const timings = await timeTasks([
      { name: "chat-ts", fn: () => Effect.runPromise(turn) },
      { name: "floor", fn: () => Effect.runPromise(floor) }
    ], budget)
    rows.push({
      steps,
      modelCalls: steps + 1,
      instructions: counted.instructions,
      instructionsPerStep: round(counted.instructions / (steps + 1)),
      floorInstructionsPerStep: round(floorCounted.instructions / (steps + 1)),
      perStep: perStep(timings["chat-ts"]!, steps + 1),
      floorPerStep: perStep(timings["floor"]!, steps + 1)
    })
  }
  return config.checks === undefined ? { rows } : { rows, checks: await Checks.measure(config.checks) }
}
