/**
 * The scenarios, their sizes for a full run and for the smoke run of the
 * tests, and the jobs (one child process each) a run is made of.
 */
import { type Budget, smokeBudget } from "../harness.js"
import type * as Cold from "./cold.js"
import type * as Faults from "./faults.js"
import type * as Fleet from "./fleet.js"
import type * as Json from "./json.js"
import type * as Loop from "./loop.js"
import type * as Many from "./many.js"
import type * as Memory from "./memory.js"
import type * as Pause from "./pause.js"
import type * as Provider from "./provider.js"
import type * as Reducer from "./reducer.js"
import type * as Steps from "./steps.js"
import type * as Store from "./store.js"
import type * as Streaming from "./streaming.js"

export type Mode = "full" | "smoke"

export const scenarioIds = ["loop", "pause", "streaming", "reducer", "many", "store", "steps", "cold", "json", "fleet", "memory", "provider", "faults"] as const
export type ScenarioId = (typeof scenarioIds)[number]

export const titles: Record<ScenarioId, string> = {
  loop: "1. Loop overhead per step",
  pause: "2. Pause → serialise → resume",
  streaming: "3. Streaming overhead",
  reducer: "4. Reducer throughput (Turn.step)",
  many: "5. Many conversations",
  store: "6. One approved call on a stored conversation (SQLite, PostgreSQL)",
  steps: "7. Per step: interpreter instructions, the Effect floor, growth to N=1,000",
  cold: "8. Cold start: import to first request, first 100 turns; the import cost of each entry point",
  json: "9. Messages.toJson / fromJson against JSON.stringify / JSON.parse",
  fleet: "10. A fleet: paused conversations resumed by worker processes",
  memory: "11. Memory: heap per 1,000 kept turns",
  provider: "12. The AI SDK bridge: overhead per model call against the AI SDK model's own doGenerate",
  faults: "13. The fleet under faults: the database restarted, cut off, full; a worker stalled; clocks off"
}

const budget = (warmupTime: number, warmupIterations: number, time: number, iterations: number): Budget => ({
  warmupTime,
  warmupIterations,
  time,
  iterations
})

export interface Configs {
  readonly loop: Loop.Config
  readonly pause: Pause.Config
  readonly streaming: Streaming.Config
  readonly reducer: Reducer.Config
  readonly many: Omit<Many.Config, "library">
  readonly store: Store.Config
  readonly steps: Steps.Config
  readonly cold: Cold.Config
  readonly json: Json.Config
  readonly memory: Memory.Config
  readonly fleet: Fleet.Config
  readonly provider: Provider.Config
  readonly faults: Faults.Config
}

export const configs: Record<Mode, Configs> = {
  full: {
    loop: { steps: [1, 10, 100, 1000], budget: budget(500, 20, 2000, 200), allocTurns: 200 },
    pause: { sizes: [10, 100, 1000, 10_000], budget: budget(200, 3, 1000, 50) },
    // Paced at 1 ms (the target's case), at 100 µs, and the burst (a labelled extra); about 4 minutes.
    streaming: {
      cases: [{ deltas: 1_000, intervalUs: 1000 }, { deltas: 5_000, intervalUs: 100 }, { deltas: 10_000, intervalUs: 0 }],
      warmupRounds: 2,
      rounds: 8,
      collect: true
    },
    reducer: {
      cases: [{ steps: 100, history: 0 }, { steps: 1000, history: 0 }, { steps: 100, history: 10_000 }],
      budget: budget(200, 5, 1000, 30)
    },
    many: { conversations: 10_000 },
    store: { sizes: [10, 1000, 10_000], samples: 15, warmup: 3 },
    steps: { steps: [1, 10, 100, 1000], budget: budget(500, 20, 2000, 200), checks: { rounds: 15, calls: 20_000 } },
    cold: { runs: 10, turns: 100, imports: { runs: 5 }, bundled: true },
    json: { sizes: [10, 100, 1000, 10_000], budget: budget(200, 5, 1000, 30) },
    // 8 cells, chat-ts and the floor in each: about 2 minutes on 2 idle cores, 5 when the disk is slow (SQLite waits
    // for it). 760 of each cell's N are decided.
    fleet: {
      databases: ["PostgreSQL", "SQLite"],
      workers: [1, 4],
      conversations: [1000, 10_000],
      warmup: 60,
      saturation: 300,
      rates: [0.5, 0.8],
      openDecisions: 200,
      window: 8,
      pool: 4,
      verify: 50
    },
    memory: { turns: 1000, steps: 10 },
    provider: { warmupRounds: 5, rounds: 30, calls: 50 },
    // 9 faults, each a soak of about 15 s (10 s of arrivals, the fault inside it; the workflow runners' start and
    // shard spreading on top): about 4 minutes.
    faults: {
      conversations: 200,
      rate: 20,
      workers: 4,
      leaseMillis: 2_000,
      attemptMillis: 3_000,
      deadlineMillis: 120_000,
      fullMillis: 3_000,
      lockMillis: 6_000,
      busyTimeoutMillis: 5_000
    }
  },
  smoke: {
    loop: { steps: [1, 2], budget: smokeBudget, allocTurns: 2 },
    pause: { sizes: [4], budget: smokeBudget },
    streaming: {
      cases: [{ deltas: 20, intervalUs: 1000 }, { deltas: 20, intervalUs: 100 }, { deltas: 20, intervalUs: 0 }],
      warmupRounds: 0,
      rounds: 1,
      collect: false
    },
    reducer: { cases: [{ steps: 3, history: 4 }], budget: smokeBudget },
    many: { conversations: 25 },
    store: { sizes: [4], samples: 2, warmup: 1 },
    steps: { steps: [1, 2], budget: smokeBudget, checks: { rounds: 1, calls: 20 } },
    cold: { runs: 1, turns: 3, imports: { runs: 1, only: ["@chat-ts/core", "@chat-ts/core/Chat", "@chat-ts/core/testing"] }, bundled: true },
    json: { sizes: [4], budget: smokeBudget },
    fleet: {
      databases: ["PostgreSQL", "SQLite"],
      workers: [2],
      conversations: [20],
      warmup: 2,
      saturation: 6,
      rates: [0.5],
      openDecisions: 6,
      window: 2,
      pool: 2,
      verify: 20
    },
    memory: { turns: 5, steps: 2 },
    provider: { warmupRounds: 0, rounds: 1, calls: 2 },
    faults: {
      conversations: 12,
      rate: 12,
      workers: 2,
      leaseMillis: 1_000,
      attemptMillis: 2_000,
      deadlineMillis: 40_000,
      fullMillis: 1_000,
      lockMillis: 2_000,
      busyTimeoutMillis: 1_000,
      parallel: true
    }
  }
}

/** One child process: a scenario, and for `many` the library it measures. */
export type Job =
  | { readonly scenario: Exclude<ScenarioId, "many">; readonly mode: Mode }
  | { readonly scenario: "many"; readonly mode: Mode; readonly library: Many.Library }

export const jobsFor = (ids: ReadonlyArray<ScenarioId>, mode: Mode, manyLibraries: ReadonlyArray<Many.Library>): Array<Job> =>
  ids.flatMap((scenario): Array<Job> =>
    scenario === "many"
      ? manyLibraries.map((library) => ({ scenario, mode, library }))
      : [{ scenario, mode }]
  )

/** Runs one job in this process. */
export const runJob = async (job: Job): Promise<unknown> => {
  const config = configs[job.mode]
  switch (job.scenario) {
    case "loop":
      return (await import("./loop.js")).run(config.loop)
    case "pause":
      return (await import("./pause.js")).run(config.pause)
    case "streaming":
      return (await import("./streaming.js")).run(config.streaming)
    case "reducer":
      return (await import("./reducer.js")).run(config.reducer)
    case "many":
      return (await import("./many.js")).run({ ...config.many, library: job.library })
    case "store":
      return (await import("./store.js")).run(config.store)
    case "steps":
      return (await import("./steps.js")).run(config.steps)
    case "cold":
      return (await import("./cold.js")).run(config.cold)
    case "json":
      return (await import("./json.js")).run(config.json)
    case "memory":
      return (await import("./memory.js")).run(config.memory)
    case "fleet":
      return (await import("./fleet.js")).run(config.fleet)
    case "provider":
      return (await import("./provider.js")).run(config.provider)
    case "faults":
      return (await import("./faults.js")).run(config.faults)
  }
}
