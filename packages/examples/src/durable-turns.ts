/**
 * Durable turns on PostgreSQL: runner processes host the turns (as many as you
 * start: they share the shards and reach each other over TCP), and any other
 * process starts them, lists what waits for a person and decides. A runner can
 * die and the others pick its turns up.
 *
 *   DATABASE_URL=postgres://… npx tsx src/durable-turns.ts migrate
 *   DATABASE_URL=postgres://… npx tsx src/durable-turns.ts runner            # keeps running; start several
 *   DATABASE_URL=postgres://… npx tsx src/durable-turns.ts start invoice-7 "Pay the plumber 120 EUR."
 *   DATABASE_URL=postgres://… npx tsx src/durable-turns.ts pending <executionId>
 *   DATABASE_URL=postgres://… npx tsx src/durable-turns.ts decide <executionId> <callId> approve|reject
 *   DATABASE_URL=postgres://… npx tsx src/durable-turns.ts read <executionId>
 *
 * The model is scripted (offline): it asks to pay, then confirms.
 */
// #region imports
import { Action, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { SqlConversationStore } from "@chat-ts/sql"
import { ChatWorkflow, Decision } from "@chat-ts/workflow"
import * as SocketRunner from "@chat-ts/workflow/SocketRunner"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Config, Console, Duration, Effect, Layer, Option, Schema } from "effect"
// #endregion imports
import { isMain } from "./shared/main.js"

// #region define
const PayBill = Tool.make("pay_bill", {
  description: "Pay a bill from the household account.",
  parameters: { payee: Schema.String, amount: Schema.Number },
  success: Schema.Struct({ reference: Schema.String })
})

// Every payment waits for a person, for at most a week.
const toolkit = Toolkit.withStrategy(Toolkit.make(PayBill), () =>
  Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
    Action.RequireApproval({ expiresAt: now + Duration.toMillis(Duration.days(7)) })))

// One definition, shared by the runners and the clients.
export const payments = ChatWorkflow.make({ name: "payments", tools: toolkit, maxSteps: 5 })
// #endregion define

const model = MockLanguageModel.make((request) =>
  request.messages.some((m) => m.parts.some((p) => p._tag === "ToolCall" && p.status._tag !== "Proposed"))
    ? MockLanguageModel.text("The bill is handled.")
    : MockLanguageModel.toolCalls([{ name: "pay_bill", arguments: { payee: "plumber", amount: 120 } }])
)

const handlers = toolkit.toLayer({
  pay_bill: ({ amount, payee }) => Effect.succeed({ reference: `PAY-${payee.toUpperCase()}-${amount}` })
})

// #region layers
const database = PgClient.layerConfig({ url: Config.Redacted("DATABASE_URL") })

// Turns publish their messages to this table: that is what a UI reads.
const store = SqlConversationStore.layer({ table: "payment_turns" })

// Where a runner listens: RUNNER_HOST (default 127.0.0.1) and RUNNER_PORT (default 0: a free port);
// listening on 0.0.0.0, RUNNER_ADVERTISE_HOST is the address the other runners reach it at.
const listen = Config.all({
  host: Config.String("RUNNER_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Port("RUNNER_PORT").pipe(Config.withDefault(0)),
  advertiseHost: Config.String("RUNNER_ADVERTISE_HOST").pipe(Config.option, Config.map(Option.getOrUndefined))
})

// A runner: it joins the others through PostgreSQL, takes its share of the shards and runs their turns.
const runner = ChatWorkflow.layer(payments).pipe(
  Layer.provideMerge(Layer.unwrap(Effect.map(listen, SocketRunner.layer))),
  Layer.provideMerge(store),
  Layer.provide([model.layer, handlers]),
  Layer.provide(database)
)

// A client: no address and no shards; it sends starts and decisions to the runners that hold the turns.
const client = SocketRunner.layerClient().pipe(
  Layer.provideMerge(store),
  Layer.provide(database)
)
// #endregion layers

// #region client
const start = (conversation: string, text: string) =>
  Effect.flatMap(payments.start(conversation, Messages.fromUser(text)), (id) => Console.log(`started ${id}`))

const pending = (executionId: string) =>
  Effect.flatMap(payments.pending(executionId), (calls) =>
    Effect.forEach(calls, (call) => Console.log(`${call.id} ${call.name} ${call.arguments} (${call.status._tag})`)))

const decide = (executionId: string, callId: string, verdict: string) =>
  payments.decide(executionId, callId, verdict === "approve" ? Decision.approve() : Decision.reject("not now")).pipe(
    Effect.andThen(Console.log(`${verdict}d ${callId}`)),
    Effect.catchTags({
      UnknownToolCall: () => Console.log(`no call ${callId} waits in ${executionId}`),
      ToolCallAlreadyResolved: () => Console.log(`${callId} was already decided`)
    })
  )

const read = (executionId: string) =>
  Effect.flatMap(payments.read(executionId), (view) =>
    Console.log(`${view.status._tag}: ${Messages.textOf(view.messages[view.messages.length - 1]!)}`))
// #endregion client

/** Runs one command line. */
export const main = (args: ReadonlyArray<string>) => {
  const [command = "", a = "", b = "", c = ""] = args
  switch (command) {
    case "migrate":
      return Effect.provide(Effect.asVoid(SqlConversationStore.migrate({ table: "payment_turns" })), database)
    case "runner":
      return Layer.launch(runner)
    case "start":
      return Effect.provide(start(a, b), client)
    case "pending":
      return Effect.provide(pending(a), client)
    case "decide":
      return Effect.provide(decide(a, b, c), client)
    case "read":
      return Effect.provide(read(a), client)
    default:
      return Console.log("usage: durable-turns migrate | runner | start <conversation> <text> | pending <id> | decide <id> <call> approve|reject | read <id>")
  }
}

if (isMain(import.meta.url)) {
  Effect.runPromise(Effect.scoped(main(process.argv.slice(2)) as Effect.Effect<void, unknown>)).then(
    () => process.exit(0),
    (error) => (console.error(error), process.exit(1))
  )
}
