/**
 * A runner process for the end-to-end test: one `effect/cluster` socket
 * runner (`SocketRunner.layer`, 127.0.0.1, a free port) on PostgreSQL
 * (`DATABASE_URL`) hosting the durable turn, with the turn store in
 * table `TABLE`. With `GO_FILE` it prints `{"loaded":true}` and waits for that
 * file first (so that runners start at the same moment). It prints
 * `{"ready":true}` once its layers are built (creating the cluster's tables
 * when missing, and with `MIGRATE_STORE=1` the turn store's table), then
 * runs the commands it reads from stdin (one JSON object a line), answering
 * each with one JSON line:
 *
 * - `{ "n", "start": conversationId, "text" }`: starts a turn; answers `{ "n", "id" }`, or `{ "n", "error", "message", "retryable" }`
 *   (a `StoreError`, retryable, when the engine cannot store the start).
 * - `{ "n", "decide": executionId, "call", "approve": boolean }`; answers `{ "n" }` or `{ "n", "error" }`.
 * - `{ "n", "executionOf": conversationId, "text" }`: the execution id of that turn, without starting it; answers `{ "n", "id" }`.
 * - `{ "n", "shards": true }`: the shards this runner holds now; answers `{ "n", "shards": [1, 4, …] }`.
 * - `{ "n", "owns": executionId }`: whether this runner holds the shard of that turn; answers `{ "n", "owns" }`.
 *
 * The model is a fake that records every call in `RUNS_FILE` (`{"model":n,"asked":text}`):
 * asked to "delete", it proposes `delete_files` of `[text]` (needs approval); asked to
 * "remind", it proposes `remind` (deferred by `REMIND_MILLIS`); once a call
 * is completed, rejected or failed (a call interrupted by a runner's death) in the conversation, it
 * answers "done", so that a turn whose call was interrupted ends too. Asked a text with "slow" in it,
 * it takes `SLOW_MODEL_MILLIS` (default 4 s) to answer, so that a turn is in flight that long. Each run
 * of a tool handler is appended to `RUNS_FILE` too, with the pid of the runner that ran it, and
 * `delete_files` returns that pid (`{ deleted, by }`), so that a stored result names its runner; with
 * `TOOL_MILLIS` it takes that long after it is recorded (a call in flight that long).
 * A decision refused answers `{ "n", "error", "message", "retryable" }` (`retryable` for a `StoreError`).
 */
import { Action, LanguageModel, Messages, Tool, Toolkit } from "@chat-ts/core"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Duration, Effect, Layer, ManagedRuntime, Redacted, Schedule, Schema } from "effect"
import * as EntityId from "effect/cluster/EntityId"
import * as ShardId from "effect/cluster/ShardId"
import { Sharding } from "effect/cluster/Sharding"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { SqlConversationStore } from "../../../sql/src/index.js"
import { ChatWorkflow, Decision } from "../../src/index.js"
import * as SocketRunner from "../../src/SocketRunner.js"

const runsFile = process.env["RUNS_FILE"]!
const record = (entry: object) => fs.appendFileSync(runsFile, JSON.stringify({ ...entry, pid: process.pid }) + "\n")

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number, by: Schema.Number })
})
const Remind = Tool.make("remind", { description: "Remind.", parameters: { text: Schema.String }, success: Schema.String })
const toolMillis = Number(process.env["TOOL_MILLIS"] ?? "0")
const remindMillis = Number(process.env["REMIND_MILLIS"] ?? "3000")
const tools = Toolkit.withStrategy(
  Toolkit.make(DeleteFiles, Remind),
  (call) => call.name === "remind" ? Action.Defer({ after: remindMillis }) : Action.RequireApproval()
)
export const turns = ChatWorkflow.make({ name: "e2e-turn", tools })

const handlers = tools.toLayer({
  delete_files: (params) =>
    Effect.sync(() => (record({ tool: "delete_files", paths: params.paths }), { deleted: params.paths.length, by: process.pid })).pipe(
      // Recorded as it starts, done `TOOL_MILLIS` later: a call in flight that long (a cut then interrupts it).
      Effect.tap(() => Effect.sleep(toolMillis))
    ),
  remind: (params) => Effect.sync(() => (record({ tool: "remind" }), `sent: ${params.text}`))
})

// A call in one of these states is answered "done"; `Failed` is a call interrupted by a cut or a death (never run again).
const settled = new Set(["Completed", "Rejected", "Failed"])
const slowMillis = Number(process.env["SLOW_MODEL_MILLIS"] ?? "4000")
const model = LanguageModel.layer({
  generate: (request) =>
    Effect.sync(() => {
      const answered = request.messages.some((m) => m.parts.some((p) => p._tag === "ToolCall" && settled.has(p.status._tag)))
      const asked = Messages.textOf(request.messages.find((m) => m.role === "user")!)
      record({ model: request.messages.length, asked })
      const call = asked.includes("remind")
        ? Messages.toolCall({ id: "r1", name: "remind", arguments: `{"text":"stand up"}` })
        : Messages.toolCall({ id: "d1", name: "delete_files", arguments: JSON.stringify({ paths: [asked] }) })
      return answered
        ? { parts: [Messages.text("done")], usage: { inputTokens: 1, outputTokens: 1 }, finishReason: "stop" as const }
        : { parts: [call], usage: { inputTokens: 1, outputTokens: 1 }, finishReason: "tool-calls" as const }
    }).pipe(
      // Recorded as it starts, answered `slowMillis` later.
      Effect.tap(() => Messages.textOf(request.messages.find((m) => m.role === "user")!).includes("slow") ? Effect.sleep(slowMillis) : Effect.void)
    ),
  stream: () => Effect.die(new Error("not used")) as never
})

const shardsPerGroup = 8 // as `Runners.shardsPerGroup`
const database = PgClient.layer({ url: Redacted.make(process.env["DATABASE_URL"]!) })
// A socket runner on 127.0.0.1 and a free port; short lock and poll intervals so that a killed runner's shards move in seconds.
const cluster = SocketRunner.layer({
  shardingConfig: {
    shardsPerGroup: shardsPerGroup,
    entityMessagePollInterval: Duration.millis(250),
    shardLockRefreshInterval: Duration.seconds(1),
    shardLockExpiration: Duration.seconds(5),
    refreshAssignmentsInterval: Duration.millis(500),
    runnerHealthCheckInterval: Duration.seconds(2)
  }
})
// With MIGRATE_STORE=1 the runner also creates the turn store's table (as each process of a deploy might).
const storeOptions = { table: process.env["TABLE"]! }
const store = process.env["MIGRATE_STORE"] === "1"
  ? SqlConversationStore.layer(storeOptions).pipe(Layer.provide(SqlConversationStore.layerMigrate(storeOptions)))
  : SqlConversationStore.layer(storeOptions)
const runtime = ManagedRuntime.make(
  ChatWorkflow.layer(turns).pipe(
    Layer.provideMerge(Layer.mergeAll(cluster, store, model, handlers)),
    Layer.provide(database),
    Layer.orDie
  )
)

interface Command {
  readonly n: number
  readonly start?: string
  readonly text?: string
  readonly decide?: string
  readonly call?: string
  readonly approve?: boolean
  readonly shards?: boolean
  readonly owns?: string
  readonly executionOf?: string
}

/** A refused command's answer: its error's tag and message, and `retryable` for a `StoreError`. */
const refused = <A>(self: Effect.Effect<A, { readonly _tag: string; readonly message?: string; readonly retryable?: boolean | undefined }, ChatWorkflow.ClientContext>) =>
  Effect.catch(self, (error) =>
    Effect.succeed({
      error: error._tag,
      message: "message" in error ? String(error.message) : undefined,
      retryable: error._tag === "StoreError" ? error.retryable : undefined
    }))

const run = (command: Command): Effect.Effect<object, never, ChatWorkflow.ClientContext | Sharding> =>
  command.start !== undefined
    ? refused(Effect.map(turns.start(command.start, Messages.fromUser(command.text ?? "")), (id) => ({ id })))
    : command.executionOf !== undefined
    ? Effect.map(turns.executionId(command.executionOf, Messages.fromUser(command.text ?? "")), (id) => ({ id }))
    : command.shards === true
    ? Effect.map(Sharding, (sharding) => ({
      shards: Array.from({ length: shardsPerGroup }, (_, i) => i + 1).filter((i) => sharding.hasShardId(ShardId.make("default", i)))
    }))
    : command.owns !== undefined
    ? Effect.map(Sharding, (sharding) => ({
      owns: sharding.hasShardId(sharding.getShardId(EntityId.make(command.owns!), "default"))
    }))
    : refused(Effect.as(turns.decide(command.decide!, command.call!, command.approve === true ? Decision.approve() : Decision.reject("no")), {}))

const reply = (value: object) => process.stdout.write(JSON.stringify(value) + "\n")

/** With `GO_FILE`: says `{"loaded":true}`, then waits (bounded) for that file before it builds its layers. */
const go = (file: string | undefined) =>
  file === undefined ? Promise.resolve() : Effect.runPromise(Effect.sync(() => reply({ loaded: true })).pipe(
    Effect.andThen(Effect.sync(() => fs.existsSync(file)).pipe(
      Effect.repeat({ until: (exists) => exists, schedule: Schedule.spaced("5 millis") }),
      Effect.timeoutOrElse({ duration: "60 seconds", orElse: () => Effect.die(new Error(`${file} never appeared`)) })
    ))
  ))

go(process.env["GO_FILE"]).then(() => runtime.runPromise(Effect.void)).then(
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
