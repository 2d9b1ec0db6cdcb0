/**
 * A worker process for the crash test of one decision (see
 * `DecisionCrash.process.test.ts`), on PostgreSQL (`DATABASE_URL`) or SQLite
 * (`SQLITE_FILE`), table `TABLE`. Its tool `pay` (not idempotent) appends
 * each run to `RUNS_FILE` (conversation, pid) before it returns.
 *
 * - With `CRASH_AFTER=k` and `CONVERSATION`: resumes that conversation
 *   (approving its call, lease `LEASE_MILLIS`) and, when its statement k + 1
 *   is about to be sent, kills itself with SIGKILL: it dies between the
 *   decision's statements k and k + 1 (before the first with k = 0).
 * - Otherwise: prints `{"ready":true}`, then reads commands, one JSON object
 *   a line: `{ "n", "resume": id }` resumes `id` (approving any call that
 *   waits), trying again while another run's lease holds it (10 s at most),
 *   and answers `{ "n", "outcome", "statements" }` (the statements of the
 *   resume that ran) or `{ "n", "error" }`.
 */
import { Action, Chat, ConversationStore, Messages, Tool, Toolkit, Worker } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, ManagedRuntime, Schedule, Schema } from "effect"
import * as Statement from "effect/sql/Statement"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { SqliteClient, SqlConversationStore } from "../../src/index.js"

const Pay = Tool.make("pay", {
  description: "Pay.",
  parameters: { conversation: Schema.String },
  success: Schema.Struct({ by: Schema.Number })
})
const tools = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.RequireApproval())
const runsFile = process.env["RUNS_FILE"]!

const handlers = tools.toLayer({
  pay: ({ conversation }) =>
    Effect.sync(() => {
      fs.appendFileSync(runsFile, JSON.stringify({ conversation, pid: process.pid }) + "\n")
      return { by: process.pid }
    })
})

const client = process.env["DATABASE_URL"] !== undefined
  ? PgClient.layerConfig({ url: Config.Redacted("DATABASE_URL"), maxConnections: Config.succeed(2) })
  : SqliteClient.layer({ filename: process.env["SQLITE_FILE"]! })
const runtime = ManagedRuntime.make(
  Layer.mergeAll(SqlConversationStore.layer({ table: process.env["TABLE"]! }), handlers).pipe(Layer.provideMerge(client))
)
const reply = (value: object) => process.stdout.write(JSON.stringify(value) + "\n")

const approveAll = (stored: ConversationStore.Stored) =>
  Effect.reduce(
    Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
    () => stored.messages,
    (messages, call) => Effect.fromResult(Messages.approve(messages, call.id))
  )

/** One resume, counting the statements it sends; `crashAfter`: SIGKILL when statement `crashAfter + 1` is about to go. */
const resume = (id: string, leaseMillis: number, crashAfter: number | undefined) =>
  Effect.gen(function*() {
    const chat = yield* Chat.make({ tools }).pipe(Effect.provide(MockLanguageModel.make([MockLanguageModel.text("Done.")]).layer))
    let statements = 0
    const result = yield* Worker.resume(chat, id, approveAll, { leaseTtl: leaseMillis }).pipe(
      Effect.provideService(Statement.CurrentTransformer, (statement) =>
        Effect.sync(() => {
          if (crashAfter !== undefined && statements === crashAfter) process.kill(process.pid, "SIGKILL")
          statements++
          return statement
        }))
    )
    return { outcome: result.outcome._tag, statements }
  })

const crashAfter = process.env["CRASH_AFTER"]
if (crashAfter !== undefined) {
  runtime.runPromise(resume(process.env["CONVERSATION"]!, Number(process.env["LEASE_MILLIS"] ?? "1500"), Number(crashAfter))).then(
    (done) => {
      reply(done)
      process.exit(0)
    },
    (error) => {
      reply({ error: String(error) })
      process.exit(1)
    }
  )
} else {
  // A first query, so the pool is connected before the test starts.
  runtime.runPromise(Effect.flatMap(ConversationStore.ConversationStore, (store) => store.listPending({ limit: 1 }))).then(
    () => {
      reply({ ready: true })
      readline.createInterface({ input: process.stdin }).on("line", (line) => {
        const command = JSON.parse(line) as { readonly n: number; readonly resume: string }
        const attempt = resume(command.resume, 10_000, undefined).pipe(
          Effect.retry({ while: (error) => Worker.isBusy(error), schedule: Schedule.spaced("100 millis"), times: 100 }),
          Effect.catch((error) => Effect.succeed({ error: error._tag }))
        )
        runtime.runPromise(attempt).then(
          (answer) => reply({ n: command.n, ...answer }),
          (defect) => reply({ n: command.n, error: `defect: ${String(defect)}` })
        )
      }).on("close", () => void runtime.dispose().then(() => process.exit(0)))
    },
    (error) => {
      reply({ ready: false, error: String(error) })
      process.exit(1)
    }
  )
}
