/**
 * Smoke runs of every scenario at tiny sizes, in this process, so the harness
 * cannot rot. They check that each scenario runs and produces well-formed
 * results; they never assert on timings.
 */
import { existsSync } from "node:fs"
import { describe, expect, it } from "vitest"
import type { Timing } from "../src/harness.js"
import { evaluate, markdown, type Results, type Scenarios } from "../src/report.js"
import { configs } from "../src/scenarios/index.js"
import { countInstructions } from "../src/instructions.js"
import { buildBody } from "../src/sse.js"
import * as chatts from "../src/peers/chatts.js"
import * as Cold from "../src/scenarios/cold.js"
import * as Fleet from "../src/scenarios/fleet.js"
import * as FleetReport from "../src/fleet/render.js"
import * as Json from "../src/scenarios/json.js"
import * as Loop from "../src/scenarios/loop.js"
import * as Many from "../src/scenarios/many.js"
import * as Memory from "../src/scenarios/memory.js"
import * as Pause from "../src/scenarios/pause.js"
import * as Reducer from "../src/scenarios/reducer.js"
import * as Steps from "../src/scenarios/steps.js"
import * as Store from "../src/scenarios/store.js"
import * as Streaming from "../src/scenarios/streaming.js"

const smoke = configs.smoke

const expectTiming = (timing: Timing): void => {
  expect(timing.samples).toBeGreaterThanOrEqual(1)
  for (const key of ["medianUs", "p95Us", "meanUs", "minUs", "maxUs", "wallMedianUs", "wallP95Us"] as const) {
    expect(Number.isFinite(timing[key]), key).toBe(true)
    expect(timing[key], key).toBeGreaterThanOrEqual(0)
  }
  expect(timing.p95Us).toBeGreaterThanOrEqual(timing.medianUs)
}

const scenarios: { -readonly [K in keyof Scenarios]: Scenarios[K] } = {}

describe("bench scenarios (smoke sizes)", () => {
  it("1. loop overhead: one row per library and N, per-step timings and allocations", async () => {
    const result = await Loop.run(smoke.loop)
    expect(result.rows).toHaveLength(Loop.libraries.length * smoke.loop.steps.length)
    for (const row of result.rows) {
      expect(Loop.libraries).toContain(row.library)
      expect(row.modelCalls).toBe(row.steps + 1)
      expectTiming(row.perTurn)
      expectTiming(row.perStep)
      expect(row.allocatedBytesPerStep).toBeGreaterThan(0)
    }
    scenarios.loop = result
  }, 30_000)

  it("2. pause → serialise → resume: both libraries, every phase, sizes against the wire JSON", async () => {
    const result = await Pause.run(smoke.pause)
    expect(result.rows.map((r) => r.library)).toEqual(["chat-ts", "@openai/agents"])
    for (const row of result.rows) {
      expect(row.historyMessages).toBe(smoke.pause.sizes[0])
      expect(row.stateBytes).toBeGreaterThan(0)
      expect(row.wireBytes).toBeGreaterThan(0)
      expect(row.sizeRatio).toBeCloseTo(row.stateBytes / row.wireBytes, 2)
      for (const phase of Pause.phases) expectTiming(row.timings[phase])
    }
    scenarios.pause = result
  }, 30_000)

  it("3. streaming: paced at 1 ms and 100 µs and in a burst, every consumer does the same work, ratios to the bare SDK", async () => {
    const result = await Streaming.run(smoke.streaming)
    expect(result.cases.map((c) => c.intervalUs)).toEqual(smoke.streaming.cases.map((c) => c.intervalUs))
    for (const [i, c] of result.cases.entries()) {
      const deltas = smoke.streaming.cases[i]!.deltas
      const { expected, events } = buildBody(deltas)
      // role, the deltas, the call's start and fragments, finish, usage
      expect(c.events).toBe(events)
      expect(c.events).toBeGreaterThan(deltas + 4)
      expect(c.rows.map((r) => r.consumer)).toEqual([...Streaming.consumers])
      expect(c.rows[0]!.ratio).toBe(1)
      for (const row of c.rows) {
        // Every library saw each text delta on its own and ended with the same text and call.
        expect(row.work, row.consumer).toEqual({
          textDeltas: deltas,
          textChars: expected.text.length,
          toolName: expected.toolName,
          arguments: expected.arguments
        })
        expect(row.timing.samples).toBe(smoke.streaming.rounds)
        // Instructions are counted for the consumers built on Effect (every event costs some).
        if (Streaming.counted.includes(row.consumer as (typeof Streaming.consumers)[number])) {
          expect(row.instructionsPerEvent).toBeGreaterThan(0)
        } else expect(row.instructionsPerEvent).toBeUndefined()
        expectTiming(row.timing)
        expect(row.ratio).toBeGreaterThan(0)
      }
      if (c.intervalUs === 0) expect(c.pace).toBeUndefined()
      else {
        // The server wrote every event and the final [DONE] of every stream, paced (warm-up rounds included).
        expect(c.pace!.frames).toBe(events + 1)
        expect(c.pace!.responses).toBeGreaterThanOrEqual(Streaming.consumers.length * smoke.streaming.rounds)
        expect(c.pace!.eventsPerWrite).toBeGreaterThanOrEqual(1)
        expect(c.pace!.achievedUs).toBeGreaterThan(0)
      }
    }
    scenarios.streaming = result
  }, 60_000)

  it("4. reducer throughput: events per second of whole turns", async () => {
    const result = await Reducer.run(smoke.reducer)
    const [row] = result.rows
    expect(row).toBeDefined()
    expect(row!.events).toBe(4 * smoke.reducer.cases[0]!.steps + 2)
    expectTiming(row!.perTurn)
    expect(row!.eventsPerSecond).toBeGreaterThan(0)
    scenarios.reducer = result
  }, 30_000)

  it("5. many conversations: every library pauses and resumes them all", async () => {
    const rows: Array<Many.Result> = []
    for (const library of Many.libraries) {
      const result = await Many.run({ ...smoke.many, library })
      expect(result.library).toBe(library)
      expect(result.conversations).toBe(smoke.many.conversations)
      expect(result.totalMs).toBe(result.pauseMs + result.resumeMs)
      expect(result.peakRssMB).toBeGreaterThanOrEqual(result.baselineRssMB)
      expect(Number.isFinite(result.heapPerPausedBytes)).toBe(true)
      rows.push(result)
    }
    scenarios.many = rows
  }, 30_000)

  it("6. one approved call on a stored conversation: both databases, three checkpoints, bytes below the document's", async () => {
    const result = await Store.run(smoke.store)
    expect(result.rows.map((r) => [r.database, r.historyMessages])).toEqual(
      Store.databases.map((database) => [database, smoke.store.sizes[0]])
    )
    for (const row of result.rows) {
      // The decision with Running (one save, before the handler starts), Completed, the answer with the release.
      expect(row.checkpoints).toBe(3)
      expect(row.bytesPerCheckpoint).toBeGreaterThan(0)
      expect(row.bytesPerCheckpoint).toBeLessThan(row.documentBytes)
      expect(row.call.samples).toBe(smoke.store.samples)
      expectTiming(row.call)
    }
    scenarios.store = result
  }, 60_000)

  it("7. per step: instructions counted the same every run, the floor beside, every turn complete", async () => {
    const result = await Steps.run(smoke.steps)
    expect(result.rows.map((r) => r.steps)).toEqual(smoke.steps.steps)
    for (const row of result.rows) {
      expect(row.modelCalls).toBe(row.steps + 1)
      expect(row.instructions).toBeGreaterThan(row.floorInstructionsPerStep * row.modelCalls)
      expectTiming(row.perStep)
      expectTiming(row.floorPerStep)
    }
    // A step split by check: every check timed, the loop's own ones counted per step.
    expect(result.checks?.length).toBeGreaterThan(0)
    for (const check of result.checks ?? []) {
      expect(Number.isFinite(check.usPerCall) && check.usPerCall >= 0).toBe(true)
      expect(check.usPerStep).toBeCloseTo(check.usPerCall * check.perStep, 2)
    }
    // The count is a property of the code: the same turn counts the same, run after run.
    const turn = await chatts.loopTurnEffect(3)
    const counts = [await countInstructions(turn), await countInstructions(turn), await countInstructions(turn)]
    expect(counts.map((c) => c.value)).toEqual([5, 5, 5])
    expect(new Set(counts.slice(1).map((c) => c.instructions)).size).toBe(1)
    scenarios.steps = result
  }, 30_000)

  it("8. cold start: every library in a fresh process reaches its first request and completes its turns, as published and bundled", async () => {
    const result = await Cold.run(smoke.cold)
    expect(result.rows.map((r) => r.library)).toEqual([...Cold.libraries])
    // Every library also ran (and checked its turns) from the esbuild bundle of the same script.
    expect(result.bundled?.map((r) => r.library)).toEqual([...Cold.libraries])
    for (const row of [...result.rows, ...result.bundled!]) {
      expect(row.runs).toBe(smoke.cold.runs)
      expect(row.importMs).toBeGreaterThan(0)
      expect(row.firstRequestMs).toBeGreaterThanOrEqual(row.importMs)
      expect(row.firstTurnMs).toBeGreaterThanOrEqual(row.firstRequestMs)
      expect(row.turnsMs).toBeGreaterThanOrEqual(row.firstTurnMs)
    }
    // The entry-point table: the reference rows, then the entry points asked for, each timed and counted.
    expect(result.imports.map((r) => r.entry)).toEqual(["effect (floor)", "effect/Schema", "ai + zod", ...smoke.cold.imports.only!])
    const entry = (name: string) => result.imports.find((r) => r.entry === name)!
    for (const row of result.imports) {
      expect(row.runs).toBe(smoke.cold.imports.runs)
      expect(row.importMs).toBeGreaterThan(0)
      expect(row.modules).toBeGreaterThanOrEqual(row.effectModules + row.ownModules)
    }
    expect(entry("effect (floor)").beyondFloor).toEqual([])
    expect(entry("effect (floor)").ownModules).toBe(0)
    // Module counts do not move with load: the Chat path is a part of the barrel.
    expect(entry("@chat-ts/core/Chat").ownModules).toBeGreaterThan(0)
    expect(entry("@chat-ts/core/Chat").modules).toBeLessThan(entry("@chat-ts/core").modules)
    scenarios.cold = result
  }, 120_000)

  it("9. JSON: the round trip gives the messages back; ratios to JSON.stringify / JSON.parse", async () => {
    const result = await Json.run(smoke.json)
    const [row] = result.rows
    expect(row!.messages).toBe(smoke.json.sizes[0])
    expect(row!.bytes).toBeGreaterThan(0)
    for (const timing of [row!.toJson, row!.stringify, row!.fromJson, row!.parse]) expectTiming(timing)
    expect(row!.toJsonRatio).toBeGreaterThan(0)
    expect(row!.fromJsonRatio).toBeGreaterThan(0)
    scenarios.json = result
  }, 30_000)

  it("10. a fleet: worker processes resume the decided conversations once each, the floor replays the same statements", async () => {
    const config = smoke.fleet
    const result = await Fleet.run(config)
    const decided = config.warmup + config.saturation + config.rates.length * config.openDecisions
    expect(result.cells.map((c) => [c.database, c.workers, c.conversations])).toEqual(
      config.databases.flatMap((d) => config.workers.flatMap((w) => config.conversations.map((n) => [d, w, n])))
    )
    for (const cell of result.cells) {
      // Every decided call ran exactly once, every decided conversation is complete (for the floor: stored as chat-ts
      // stored it), the undecided ones are still paused, no lease is left, and the seeded copies load as the template.
      expect(cell.checks).toEqual({
        copiesDecode: true,
        toolRanOnce: true,
        decidedComplete: true,
        floorSameResult: true,
        undecidedUntouched: true
      })
      expect(cell.decided).toBe(decided)
      expect(cell.decided).toBeLessThan(cell.conversations)
      for (const run of [cell.chatTs, cell.floor]) {
        expect(run.saturation).toBeGreaterThan(0)
        expect(run.open.map((o) => o.fraction)).toEqual(config.rates)
        for (const o of run.open) expect(o.p99Ms).toBeGreaterThanOrEqual(o.p50Ms)
        expect(run.workerCpuUsPerDecision).toBeGreaterThan(0)
        // SQLite works inside the workers; PostgreSQL's server time is read from /proc (Linux).
        expect(run.databaseCpuUsPerDecision === undefined).toBe(cell.database === "SQLite" || !existsSync("/proc/self/stat"))
      }
      // The floor is offered the same arrival rates as chat-ts.
      expect(cell.floor.open.map((o) => o.rate)).toEqual(cell.chatTs.open.map((o) => o.rate))
    }
    // One decision: the lease and the load, three checkpoints (the approval with Running, the result, the answer
    // with the release), each a row write and a message insert: on PostgreSQL each one statement (no transaction),
    // on SQLite each a transaction of two.
    for (const trace of result.traces) {
      const postgres = trace.database === "PostgreSQL"
      expect(trace).toMatchObject({
        checkpoints: 3,
        transactions: postgres ? 0 : 3,
        commits: 4,
        statements: postgres ? 4 : 8,
        roundTrips: postgres ? 4 : 14,
        leaseAcquire: 1,
        leaseRenew: 0,
        leaseRelease: 1,
        loads: 1,
        messageWrites: 3
      })
    }
    // Its target asks for every cell of the full matrix, each with its floor, every check held.
    expect(FleetReport.target(result).met).toBe(false)
    const full: Fleet.Result = {
      ...result,
      cells: FleetReport.matrix.databases.flatMap((database) =>
        FleetReport.matrix.workers.flatMap((workers) =>
          FleetReport.matrix.conversations.map((conversations) => ({ ...result.cells[0]!, database, workers, conversations }))
        )
      )
    }
    expect(FleetReport.target(full).met).toBe(true)
    const broken = full.cells.map((c, i) => (i === 0 ? { ...c, checks: { ...c.checks, toolRanOnce: false } } : c))
    expect(FleetReport.target({ ...full, cells: broken }).met).toBe(false)
    scenarios.fleet = result
  }, 120_000)

  it("11. memory: every library keeps its turns, the floor the same conversation in plain objects", async () => {
    const result = await Memory.run(smoke.memory)
    expect(result.steps).toBe(smoke.memory.steps)
    expect(result.rows.map((r) => r.library)).toEqual([...Memory.libraries])
    for (const row of result.rows) {
      expect(row.turns).toBe(smoke.memory.turns)
      expect(Number.isFinite(row.bytesPer1000Turns)).toBe(true)
    }
    // chat-ts and the floor keep one message per model response and the user's; the Agents SDK one item per call, result and answer.
    const items = Object.fromEntries(result.rows.map((r) => [r.library, r.itemsPerTurn]))
    expect(items["chat-ts"]).toBe(smoke.memory.steps + 2)
    expect(items["plain objects (floor)"]).toBe(smoke.memory.steps + 2)
    expect(items["@openai/agents"]).toBe(2 * smoke.memory.steps + 2)
    expect(items["ai"]).toBe(2 * smoke.memory.steps + 2)
    expect(result.chatTsJsonBytesPerTurn).toBeGreaterThan(0)
    scenarios.memory = result
  }, 30_000)

  it("the targets and RESULTS.md are derived from the results", () => {
    const targets = evaluate(scenarios)
    expect(targets.map((t) => t.id)).toEqual(["loop", "streaming", "pauseSize", "resume", "instructions", "floor", "growth", "cold", "coldBundled", "json", "fleet", "memory"])
    const results: Results = {
      mode: "smoke",
      date: new Date(0).toISOString(),
      machine: { cpu: "test", cores: 1, memoryGB: 1, node: process.version, platform: "test", loadAverageAtStart: 0 },
      versions: {},
      seconds: {},
      scenarios,
      targets
    }
    const md = markdown(results)
    for (const heading of ["## Targets", "### 1.", "### 2.", "### 3.", "### 4.", "### 5.", "### 6.", "### 7.", "### 8.", "### 9.", "### 10.", "### 11."]) expect(md).toContain(heading)
    expect(md).toContain("A step by check")
  })
})
