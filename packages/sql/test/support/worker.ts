/**
 * A worker process for the multi-process tests: it builds the store's layer
 * (no DDL) on PostgreSQL (`DATABASE_URL`) or SQLite (`SQLITE_FILE`), prints
 * `{"ready":true}`, then runs the commands it reads from stdin, one JSON
 * object a line, answering each with one JSON line on stdout:
 *
 * - `{ "n", "resume": id, "leaseMillis" }`: `Worker.resume` approving every
 *   waiting call; answers `{ "n", "outcome" }` or `{ "n", "error": tag }`.
 * - `{ "n", "pending": true }`: `listPending`; answers `{ "n", "ids" }`.
 *
 * Tools: `pay` (not idempotent) and `sync` (idempotent). Each run of a
 * handler is appended to `RUNS_FILE` (conversation, pid, attempt) before it
 * works; with `{ "slow": true }` it then waits for `RUNS_FILE.release-<conversation>`.
 */
import { Action, Chat, ConversationStore, Messages, Tool, Toolkit, Worker } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Config, Duration, Effect, Layer, ManagedRuntime, Schedule, Schema } from "effect"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { SqlConversationStore } from "../../src/index.js"

const Params = { conversation: Schema.String, slow: Schema.Boolean }
const Result = Schema.Struct({ by: Schema.Number, attempt: Schema.Number })
const Pay = Tool.make("pay", { description: "Pay.", parameters: Params, success: Result })
const Sync = Tool.make("sync", { description: "Copy.", parameters: Params, success: Result, idempotent: true })
const tools = Toolkit.withStrategy(Toolkit.make(Pay, Sync), () => Action.RequireApproval())

const runsFile = process.env["RUNS_FILE"]!

const handle = (params: { readonly conversation: string; readonly slow: boolean }, call: Tool.CallInfo) =>
  Effect.gen(function*() {
    fs.appendFileSync(runsFile, JSON.stringify({ conversation: params.conversation, pid: process.pid, attempt: call.attempt, tool: call.name }) + "\n")
    if (params.slow) {
      const release = `${runsFile}.release-${params.conversation}`
      yield* Effect.sync(() => fs.existsSync(release)).pipe(
        Effect.repeat({ until: (released) => released, schedule: Schedule.spaced("10 millis") }),
        Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => "never released" }),
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
  ? PgClient.layerConfig({ url: Config.redacted("DATABASE_URL"), maxConnections: Config.succeed(2) })
  : SqliteClient.layer({ filename: process.env["SQLITE_FILE"]! })

const store = SqlConversationStore.layer({ table: process.env["TABLE"]! }).pipe(Layer.provide(client))
const runtime = ManagedRuntime.make(Layer.mergeAll(store, handlers))

const approveAll = (stored: ConversationStore.Stored) =>
  Effect.reduce(
    Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
    stored.messages,
    (messages, call) => Messages.approve(messages, call.id)
  )

interface Command {
  readonly n: number
  readonly resume?: string
  readonly leaseMillis?: number
  readonly pending?: boolean
}

const run = (command: Command) =>
  Effect.gen(function*() {
    if (command.pending === true) {
      const page = yield* Effect.flatMap(ConversationStore.ConversationStore, (s) => s.listPending())
      return { ids: page.items.map((item) => item.id) }
    }
    const chat = yield* Chat.make({ tools }).pipe(
      Effect.provide(MockLanguageModel.make([MockLanguageModel.text("Done.")]).layer)
    )
    const result = yield* Worker.resume(chat, command.resume!, approveAll, { leaseTtl: command.leaseMillis ?? 10_000 })
    return { outcome: result.outcome._tag }
  }).pipe(Effect.catchAll((error) => Effect.succeed({ error: error._tag })))

const reply = (value: object) => process.stdout.write(JSON.stringify(value) + "\n")

runtime.runPromise(Effect.flatMap(ConversationStore.ConversationStore, (s) => s.listPending({ limit: 1 }))).then(
  () => {
    reply({ ready: true })
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
