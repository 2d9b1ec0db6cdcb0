/**
 * A worker process for the multi-process tests of `@chat-ts/sql` and the
 * bench's fault soak (`soak.ts`), run with tsx from the bench package: it builds the store's layer
 * (no DDL) on PostgreSQL (`DATABASE_URL`) or SQLite (`SQLITE_FILE`, its busy timeout
 * `BUSY_TIMEOUT_MILLIS` when set); with
 * `GO_FILE` it prints `{"loaded":true}` and waits for that file; with
 * `MIGRATE=1` it runs `migrate` first; it prints `{"ready":true}` (with
 * `"applied": n`, the migrations it applied, when it migrated), then runs the commands it reads from stdin, one JSON
 * object a line, answering each with one JSON line on stdout:
 *
 * - `{ "n", "resume": id, "leaseMillis", "owner" }`: `Worker.resume` approving every
 *   waiting call (as `owner` when given); answers `{ "n", "outcome" }` or `{ "n", "error": tag }`
 *   (with `"retryable": true` for a `StoreError` that says so).
 *   Commands run concurrently: two resumes sent at once are two fibers of one process.
 * - `{ "n", "pending": true }`: `listPending`; answers `{ "n", "ids" }`.
 * - `{ "n", "clockSkewMillis": ms }`: from now on this process's wall clock (`Date.now`, and Effect's
 *   `Clock` with it) is `ms` off (a clock 30 s ahead: 30000); answers `{ "n" }`.
 * - `{ "n", "maxPageCount": pages }` (SQLite): `PRAGMA max_page_count` on its connection (a disk
 *   that holds `pages` pages); answers `{ "n" }`.
 *
 * Tools: `pay` (not idempotent) and `sync` (idempotent). Each run of a
 * handler is appended to `RUNS_FILE` (conversation, pid, attempt) before it
 * works; with `{ "slow": true }` it then waits for `RUNS_FILE.release-<conversation>`.
 */
import { Action, Chat, ConversationStore, Messages, Tool, Toolkit, Worker } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { PgClient } from "@effect/sql-pg"
import { Config, Duration, Effect, Layer, ManagedRuntime, Schedule, Schema } from "effect"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { SqliteClient, SqlConversationStore } from "@chat-ts/sql"
import * as SqlClient from "effect/sql/SqlClient"

const Params = { conversation: Schema.String, slow: Schema.Boolean }
const Result = Schema.Struct({ by: Schema.Number, attempt: Schema.Number })
const Pay = Tool.make("pay", { description: "Pay.", parameters: Params, success: Result })
const Sync = Tool.make("sync", { description: "Copy.", parameters: Params, success: Result, idempotent: true })
const tools = Toolkit.withStrategy(Toolkit.make(Pay, Sync), () => Action.RequireApproval())

const runsFile = process.env["RUNS_FILE"]!

/** How far this process's wall clock is off (`clockSkewMillis`). */
let skew = 0
const realNow = Date.now
Date.now = () => realNow() + skew

const handle = (params: { readonly conversation: string; readonly slow: boolean }, call: Tool.CallInfo) =>
  Effect.gen(function*() {
    fs.appendFileSync(runsFile, JSON.stringify({ conversation: params.conversation, pid: process.pid, attempt: call.attempt, tool: call.name }) + "\n")
    if (params.slow) {
      const release = `${runsFile}.release-${params.conversation}`
      yield* Effect.sync(() => fs.existsSync(release)).pipe(
        Effect.repeat({ until: (released) => released, schedule: Schedule.spaced("10 millis") }),
        Effect.timeoutOrElse({ duration: "30 seconds", orElse: () => Effect.fail("never released") }),
        Effect.orDie
      )
    } else {
      // Long enough for the other workers to arrive while it runs.
      yield* Effect.sleep(Duration.millis(5 + Math.floor(Math.random() * 10)))
    }
    return { by: process.pid, attempt: call.attempt }
  })

const handlers = tools.toLayer({ pay: handle, sync: handle })

const client = process.env["DATABASE_URL"] !== undefined
  ? PgClient.layerConfig({ url: Config.Redacted("DATABASE_URL"), maxConnections: Config.succeed(2) })
  : SqliteClient.layer({
    filename: process.env["SQLITE_FILE"]!,
    ...(process.env["BUSY_TIMEOUT_MILLIS"] === undefined ? {} : { busyTimeout: Number(process.env["BUSY_TIMEOUT_MILLIS"]) })
  })

const table = process.env["TABLE"]!
const reply = (value: object) => process.stdout.write(JSON.stringify(value) + "\n")
const store = SqlConversationStore.layer({ table })
const runtime = ManagedRuntime.make(Layer.mergeAll(store, handlers).pipe(Layer.provideMerge(client)))

const approveAll = (stored: ConversationStore.Stored) =>
  Effect.reduce(
    Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
    () => stored.messages,
    (messages, call) => Effect.fromResult(Messages.approve(messages, call.id))
  )

interface Command {
  readonly n: number
  readonly resume?: string
  readonly leaseMillis?: number
  readonly owner?: string
  readonly pending?: boolean
  readonly clockSkewMillis?: number
  readonly maxPageCount?: number
}

const run = (command: Command) =>
  Effect.gen(function*() {
    if (command.clockSkewMillis !== undefined) {
      skew = command.clockSkewMillis
      return {}
    }
    if (command.maxPageCount !== undefined) {
      const sql = yield* SqlClient.SqlClient
      yield* Effect.orDie(sql.unsafe(`PRAGMA max_page_count = ${Math.floor(command.maxPageCount)}`))
      return {}
    }
    if (command.pending === true) {
      const page = yield* Effect.flatMap(ConversationStore.ConversationStore, (s) => s.listPending())
      return { ids: page.items.map((item) => item.id) }
    }
    const chat = yield* Chat.make({ tools }).pipe(
      Effect.provide(MockLanguageModel.make([MockLanguageModel.text("Done.")]).layer)
    )
    const result = yield* Worker.resume(chat, command.resume!, approveAll, {
      leaseTtl: command.leaseMillis ?? 10_000,
      ...(command.owner === undefined ? {} : { owner: command.owner })
    })
    return { outcome: result.outcome._tag }
  }).pipe(Effect.catch((error) =>
    Effect.succeed({
      error: error._tag,
      ...(error._tag === "StoreError" ? { message: error.message } : {}),
      ...(error._tag === "StoreError" && error.retryable === true ? { retryable: true } : {})
    })
  ))

/** With `GO_FILE`, the worker says `{"loaded":true}` and waits (bounded) until that file exists: processes start as one. */
const go = (file: string | undefined) =>
  file === undefined ? Effect.void : Effect.sync(() => reply({ loaded: true })).pipe(
    Effect.andThen(Effect.sync(() => fs.existsSync(file)).pipe(
      Effect.repeat({ until: (exists) => exists, schedule: Schedule.spaced("5 millis") }),
      Effect.timeoutOrElse({ duration: "60 seconds", orElse: () => Effect.die(new Error(`${file} never appeared`)) })
    ))
  )

/** With `MIGRATE=1` the worker first runs the migrations itself (as every process of a deploy might), and says how many it applied. */
const migrate = process.env["MIGRATE"] === "1"
  ? Effect.map(SqlConversationStore.migrate({ table }), (applied) => ({ applied: applied.length }))
  : Effect.succeed({})

const startup = Effect.flatMap(Effect.andThen(go(process.env["GO_FILE"]), migrate), (migrated) =>
  Effect.as(Effect.flatMap(ConversationStore.ConversationStore, (s) => s.listPending({ limit: 1 })), migrated))

runtime.runPromise(startup).then(
  (migrated) => {
    reply({ ready: true, ...migrated })
    readline.createInterface({ input: process.stdin }).on("line", (line) => {
      const command = JSON.parse(line) as Command
      runtime.runPromise(run(command)).then(
        (answer) => reply({ n: command.n, ...answer }),
        (defect) => reply({ n: command.n, defect: String(defect) })
      )
    }).on("close", () => void runtime.dispose().then(() => process.exit(0)))
  },
  (error) => {
    reply({ ready: false, error: String(error) })
    process.exit(1)
  }
)
