/**
 * Scenario 1: loop overhead per step. A turn where a scripted model asks for
 * one no-op tool N times, then answers (N + 1 model calls). The models do no
 * work (precomputed responses), so the time is the library's own: building
 * requests, parsing and validating calls, running handlers, growing the
 * history. Reported per step, a step being one model call with what follows it.
 */
import { type Budget, allocatedPerRun, type Timing, timeTasks } from "../harness.js"
import * as agents from "../peers/agents.js"
import * as aisdk from "../peers/aisdk.js"
import * as bare from "../peers/bare.js"
import * as chatts from "../peers/chatts.js"
import * as effectai from "../peers/effectai.js"

export interface Config {
  readonly steps: ReadonlyArray<number>
  readonly budget: Budget
  /** Turns run to measure allocations. */
  readonly allocTurns: number
}

export interface Row {
  readonly library: string
  /** Tool steps N; the turn makes N + 1 model calls. */
  readonly steps: number
  readonly modelCalls: number
  readonly perTurn: Timing
  /** `perTurn` divided by the number of model calls. */
  readonly perStep: Timing
  readonly allocatedBytesPerStep: number
}

export interface Result {
  readonly rows: ReadonlyArray<Row>
}

export const libraries = ["chat-ts", "ai", "@openai/agents", "effect/ai", "openai (hand loop)"] as const

const makeTurn = (library: (typeof libraries)[number], steps: number): Promise<() => Promise<void>> => {
  switch (library) {
    case "chat-ts":
      return chatts.loopChat(steps)
    case "ai":
      return Promise.resolve(aisdk.loopTurn(steps))
    case "@openai/agents":
      return Promise.resolve(agents.loopTurn(steps))
    case "effect/ai":
      return effectai.loopTurn(steps)
    case "openai (hand loop)":
      return Promise.resolve(bare.loopTurn(steps))
  }
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

export const run = async (config: Config): Promise<Result> => {
  const rows: Array<Row> = []
  for (const steps of config.steps) {
    const turns = await Promise.all(libraries.map(async (library) => ({ library, fn: await makeTurn(library, steps) })))
    // Fewer samples (and warm-up turns) for long turns keep the scenario's time bounded: at N=1,000
    // a peer's turn takes about a second (their cost per step grows with the history).
    const scale = Math.max(1, Math.floor(steps / 10))
    const budget: Budget = {
      ...config.budget,
      iterations: Math.max(2, Math.floor(config.budget.iterations / scale)),
      warmupIterations: Math.max(1, Math.floor(config.budget.warmupIterations / scale))
    }
    const timings = await timeTasks(turns.map((t) => ({ name: t.library, fn: t.fn })), budget)
    for (const turn of turns) {
      const allocTurns = Math.max(1, Math.floor(config.allocTurns / scale))
      const allocated = await allocatedPerRun(turn.fn, allocTurns)
      const timing = timings[turn.library]!
      rows.push({
        library: turn.library,
        steps,
        modelCalls: steps + 1,
        perTurn: timing,
        perStep: perStep(timing, steps + 1),
        allocatedBytesPerStep: Math.round(allocated / (steps + 1))
      })
    }
  }
  return { rows }
}
