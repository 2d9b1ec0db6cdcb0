/**
 * The fault soak: worker processes (`worker.ts`) resume conversations paused
 * on an approval (`pay`, not idempotent: each run is recorded in a file with
 * its pid), each conversation driven by its own loop that hands it to the
 * next worker until it ends, while one fault is injected into the database,
 * the network or the workers once the first calls ran. It counts what must
 * stay 0 (a call run twice, a stored result that is not its runner's, a
 * conversation that never ends, an error the fault does not explain) and
 * times how long after the fault is over every conversation has ended.
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { SqliteClient, SqlConversationStore } from "@chat-ts/sql"
import type { EmbeddedPostgres } from "@chat-ts/sql/testing"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Option, Redacted, Schedule } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Workers from "./Workers.js"

export type Database = "PostgreSQL" | "SQLite"

/** The parent's view of the store: seeding, loading, and the faults' own statements. */
export type Parent = ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | ConversationStore.ConversationStore, never>

/** Where a soak runs, before its workers start. */
export interface Base {
  readonly database: Database
  /** PostgreSQL's server (PostgreSQL only). */
  readonly server: EmbeddedPostgres.Server | undefined
  /** SQLite's file (SQLite only). */
  readonly filename: string | undefined
  readonly table: string
  readonly parent: Parent
  readonly leaseMillis: number
}

/** A soak under way: its workers, and their owners (`w0`, `w1`, …) in the leases they take. */
export interface Live extends Base {
  readonly workers: ReadonlyArray<Workers.WorkerProcess>
  /** Sends a command to every worker and waits for every answer. */
  readonly broadcast: (command: (index: number) => object) => Promise<void>
}

/** A fault, set up before the workers start. */
export interface Injection {
  /** Environment of worker `index` beyond the database's (a proxied URL, say). */
  readonly env?: ((index: number) => Record<string, string>) | undefined
  /** Injects the fault; resolves when it is over (the database back, the network flowing, space again). */
  readonly inject: (live: Live) => Promise<void>
  /** Whether a reply is one this fault explains (beyond the retryable errors every fault may cause). */
  readonly explains?: ((reply: Workers.Reply) => boolean) | undefined
  /** Whether a reply shows the fault biting (a write refused for want of space, say). */
  readonly bites?: ((reply: Workers.Reply) => boolean) | undefined
  readonly close?: (() => Promise<void>) | undefined
}

export interface Fault {
  readonly id: string
  readonly database: Database
  /** What happens, for the tables. */
  readonly name: string
  /** Extra messages in each seeded conversation, bytes each (full-disk faults need rows that fill pages). */
  readonly padding?: number | undefined
  readonly setup: (base: Base) => Promise<Injection>
  /** A soak of its own in place of `run`'s worker processes (the workflow engine's runners: `runners.ts`). */
  readonly soak?: ((fault: Fault, config: Config, server: EmbeddedPostgres.Server | undefined) => Promise<Counts>) | undefined
}

export interface Config {
  readonly conversations: number
  /** Conversations decided per second: one arrives every 1/rate s, so the work goes on before, during and after the fault. */
  readonly rate: number
  readonly workers: number
  readonly leaseMillis: number
  /** How long a conversation's loop waits for one worker before it hands the conversation to the next. */
  readonly attemptMillis: number
  /** The bound of one soak, from its start. */
  readonly deadlineMillis: number
}

/** The counts of one soak. */
export interface Counts {
  readonly fault: string
  readonly database: Database
  readonly name: string
  readonly conversations: number
  readonly workers: number
  /** A call whose handler ran more than once. */
  readonly doubleRuns: number
  /** A completed call whose stored result is not the one its single run returned. */
  readonly wrongResults: number
  /** A conversation that did not end (nothing pending, the model's answer last) within the deadline. */
  readonly lostDecisions: number
  /** Defects, and errors the fault does not explain. */
  readonly unexpectedErrors: number
  /** The first few of them, for the report. */
  readonly unexpected: ReadonlyArray<string>
  /** Calls failed as interrupted (their handler may have started when the fault cut the turn): never run again. */
  readonly interrupted: number
  /** The errors the workers answered, by kind (`StoreError (retryable)`, `ConversationBusy`, …). */
  readonly errors: Record<string, number>
  /** Replies showing the fault biting (for a full disk: writes refused for want of space). */
  readonly bitten: number
  /** Hand-overs of a conversation to the next worker after `attemptMillis` without an answer. */
  readonly handedOver: number
  /** Handler runs in all. */
  readonly runs: number
  /** From the soak's start to the fault's injection, and its duration, ms. */
  readonly injectedAtMillis: number
  readonly faultMillis: number
  /** From the fault being over until every conversation decided by then has ended, ms. */
  readonly recoverMillis: number
  /** From the soak's start to the last conversation ending, ms. */
  readonly totalMillis: number
}

/** A conversation paused on one approval of `pay`, with `padding` bytes of earlier talk. */
const paused = (conversation: string, padding: number | undefined): Messages.Messages => [
  ...(padding === undefined ? [] : [Messages.user("x".repeat(padding)), Messages.assistant("Noted.")]),
  Messages.user("Pay the bill."),
  {
    role: "assistant",
    parts: [{
      _tag: "ToolCall",
      id: "c1",
      name: "pay",
      arguments: JSON.stringify({ conversation, slow: false }),
      status: { _tag: "AwaitingApproval" }
    }]
  }
]

/** The errors any fault may cause: a retryable store error, a lease held, a save that lost a race. */
export const retried = (reply: Workers.Reply) =>
  (reply.error === "StoreError" && reply.retryable === true) || reply.error === "ConversationBusy" ||
  reply.error === "ConcurrentModification"

/** An answered error's kind, for the tables. */
export const kind = (reply: Workers.Reply) =>
  reply.defect !== undefined ? "defect" : reply.error === "StoreError" && reply.retryable === true ? "StoreError (retryable)" : reply.error!

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, millis)))

/**
 * Injects the fault at `from` (a time), once `ready()` holds, polling every 10 ms until `deadline`
 * (then it throws, naming what never happened); when the injection began and ended.
 */
export const injectWhen = async (
  from: number,
  deadline: number,
  ready: () => boolean,
  never: string,
  inject: () => Promise<void>
): Promise<{ readonly at: number; readonly over: number }> => {
  await sleep(from - Date.now())
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(never)
    await sleep(10)
  }
  const at = Date.now()
  await inject()
  return { at, over: Date.now() }
}

/** The parent's store and client on the database. */
export const parentOf = (database: Database, url: string | undefined, filename: string | undefined, table: string): Parent =>
  ManagedRuntime.make(
    SqlConversationStore.layer({ table }).pipe(
      Layer.provideMerge(
        database === "PostgreSQL"
          ? PgClient.layer({ url: Redacted.make(url!), maxConnections: 2 })
          : SqliteClient.layer({ filename: filename! })
      ),
      Layer.orDie
    )
  )

let soaks = 0

/** Runs one soak under `fault`: on `server` for PostgreSQL (the caller starts it), on a fresh file for SQLite. */
export const run = async (fault: Fault, config: Config, server: EmbeddedPostgres.Server | undefined): Promise<Counts> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-faults-"))
  const runsFile = path.join(dir, "runs.log")
  const table = `soak_${process.pid}_${++soaks}`
  const filename = fault.database === "SQLite" ? path.join(dir, "store.db") : undefined
  const parent = parentOf(fault.database, server?.url, filename, table)
  // The parent's own connection is cut by some faults too: its reads run again until the database is back (bounded).
  const withStore = <A, E>(f: (store: ConversationStore.Service) => Effect.Effect<A, E>) =>
    parent.runPromise(Effect.flatMap(ConversationStore.ConversationStore, f).pipe(
      Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 600 })
    ))
  const base: Base = { database: fault.database, server, filename, table, parent, leaseMillis: config.leaseMillis }
  let injection: Injection | undefined
  let workers: ReadonlyArray<Workers.WorkerProcess> = []
  try {
    await parent.runPromise(Effect.orDie(SqlConversationStore.migrate({ table })))
    const ids = Array.from({ length: config.conversations }, (_, i) => `conv-${i}`)
    for (const id of ids) await withStore((store) => store.save(id, paused(id, fault.padding), { expectedVersion: 0 }))
    injection = await fault.setup(base)
    const database: Record<string, string> = server !== undefined ? { DATABASE_URL: server.url } : { SQLITE_FILE: filename! }
    workers = Array.from({ length: config.workers }, (_, i) =>
      Workers.start({ ...database, TABLE: table, RUNS_FILE: runsFile, ...injection!.env?.(i) }))
    const ready = await Promise.all(workers.map((worker) => worker.ready))
    const notReady = ready.find((reply) => reply.ready !== true)
    if (notReady !== undefined) throw new Error(`faults: a worker did not start: ${notReady.error}`)
    const live: Live = {
      ...base,
      workers,
      broadcast: async (command) => {
        await Promise.all(workers.map((worker, i) => worker.send(command(i), 30_000)))
      }
    }
    return await soak(fault, config, injection, live, ids, runsFile, withStore)
  } finally {
    await Promise.all(workers.map(Workers.stop))
    await injection?.close?.()
    await parent.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

type WithStore = <A, E>(f: (store: ConversationStore.Service) => Effect.Effect<A, E>) => Promise<A>

/** Whether a stored conversation ended: nothing pending, the model's answer last. */
const hasEnded = (messages: Messages.Messages): boolean => {
  const last = messages[messages.length - 1]
  return Messages.pendingTools(messages).length === 0 && last?.role === "assistant" && Messages.toolCallsOf(last).length === 0
}

const soak = async (
  fault: Fault,
  config: Config,
  injection: Injection,
  live: Live,
  ids: ReadonlyArray<string>,
  runsFile: string,
  withStore: WithStore
): Promise<Counts> => {
  const started = Date.now()
  const deadline = started + config.deadlineMillis
  const errors: Record<string, number> = {}
  const unexpected: Array<string> = []
  let bitten = 0
  let handedOver = 0
  const outstanding: Array<Promise<unknown>> = []
  const record = (id: string) => (reply: Workers.Reply) => {
    if (injection.bites?.(reply) === true) bitten++
    if (reply.defect === undefined && reply.error === undefined) return
    const k = kind(reply)
    errors[k] = (errors[k] ?? 0) + 1
    if (reply.defect !== undefined || !(retried(reply) || injection.explains?.(reply) === true)) {
      unexpected.push(`${id}: ${reply.defect ?? `${reply.error} ${reply.message ?? ""}`}`)
    }
  }
  const ended = new Map<string, number>()
  const arrival = (i: number) => started + Math.round((i * 1000) / config.rate)
  const drive = async (id: string, i: number) => {
    await sleep(arrival(i) - Date.now())
    for (let attempt = 0; !ended.has(id) && Date.now() < deadline; attempt++) {
      const index = (i + attempt) % live.workers.length
      const reply = live.workers[index]!.send({ resume: id, leaseMillis: config.leaseMillis, owner: `w${index}` }, 120_000)
      outstanding.push(reply.then(record(id), (error: unknown) => void unexpected.push(`${id}: ${String(error)}`)))
      const answered = await Promise.race([reply.then(() => true, () => true), sleep(config.attemptMillis).then(() => false)])
      if (!answered) handedOver++
      const stored = await withStore((store) => store.load(id))
      if (Option.isSome(stored) && hasEnded(stored.value.messages)) ended.set(id, Date.now())
      else await sleep(100)
    }
  }
  // The fault comes once a quarter of the conversations have been decided and a call has run: some are done,
  // some mid-turn, most not begun.
  const faultOver = injectWhen(
    arrival(Math.floor(ids.length / 4)),
    deadline,
    () => Workers.runsOf(runsFile).length >= 1,
    `faults: ${fault.id}: the first calls never ran`,
    () => injection.inject(live)
  )
  await Promise.all(ids.map(drive))
  const { at, over } = await faultOver
  await Promise.all(outstanding)
  return count(fault, config, ids, runsFile, withStore, {
    errors, unexpected, bitten, handedOver, ended, started, at, over,
    decidedByOver: ids.filter((_, i) => arrival(i) <= over)
  })
}

const count = async (
  fault: Fault,
  config: Config,
  ids: ReadonlyArray<string>,
  runsFile: string,
  withStore: WithStore,
  seen: {
    readonly errors: Record<string, number>
    readonly unexpected: ReadonlyArray<string>
    readonly bitten: number
    readonly handedOver: number
    readonly ended: Map<string, number>
    readonly started: number
    readonly at: number
    readonly over: number
    readonly decidedByOver: ReadonlyArray<string>
  }
): Promise<Counts> => {
  let doubleRuns = 0
  let wrongResults = 0
  let interrupted = 0
  for (const id of ids) {
    const runs = Workers.runsOf(runsFile, id)
    if (runs.length > 1) doubleRuns++
    const stored = Option.getOrThrow(await withStore((store) => store.load(id)))
    const status = Messages.toolCalls(stored.messages).find((call) => call.id === "c1")!.status
    if (status._tag === "Completed") {
      if (runs.length !== 1 || JSON.stringify(status.result) !== JSON.stringify({ by: runs[0]!.pid, attempt: 1 })) wrongResults++
    } else if (status._tag === "Failed") interrupted++
  }
  const last = Math.max(seen.started, ...seen.ended.values())
  const recovered = Math.max(seen.over, ...seen.decidedByOver.map((id) => seen.ended.get(id) ?? Infinity))
  return {
    fault: fault.id,
    database: fault.database,
    name: fault.name,
    conversations: ids.length,
    workers: config.workers,
    doubleRuns,
    wrongResults,
    lostDecisions: ids.length - seen.ended.size,
    unexpectedErrors: seen.unexpected.length,
    unexpected: seen.unexpected.slice(0, 5),
    interrupted,
    errors: seen.errors,
    bitten: seen.bitten,
    handedOver: seen.handedOver,
    runs: fs.existsSync(runsFile) ? Workers.runsOf(runsFile).length : 0,
    injectedAtMillis: seen.at - seen.started,
    faultMillis: seen.over - seen.at,
    recoverMillis: recovered - seen.over,
    totalMillis: last - seen.started
  }
}
