/**
 * A process for the crash test of notifications (`Notifications.process.test.ts`), on a SQLite file
 * (`SQLITE_FILE`) with an outbox, printing JSON lines on stdout:
 *
 * - `MODE=pause`: migrates, runs a turn that pauses on a call needing approval (saved with its
 *   notification in one transaction), prints `{"saved":version}`, then runs a dispatcher whose notifier
 *   prints `{"claimed":id}` and never sends: the test kills it there, between the save and the send.
 * - `MODE=deliver`: runs passes of a dispatcher with the webhook notifier (`HOOK_URL`, `HOOK_SECRET`)
 *   until no row is pending, then prints `{"rows":[…]}` (each row's kind, status and attempts) and exits.
 */
import { Action, Chat, ConversationStore, Messages, Notifier, Outbox, OutboxDispatcher, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { SqliteClient, SqlConversationStore } from "@chat-ts/sql"
import { Config, Effect, Layer, Schema } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { WebhookNotifier } from "../../src/index.js"

const print = (value: object) => Effect.sync(() => void process.stdout.write(JSON.stringify(value) + "\n"))

const Pay = Tool.make("pay", { description: "Pay.", parameters: { amount: Schema.Number }, success: Schema.Number })
const tools = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.RequireApproval())

const client = SqliteClient.layer({ filename: process.env["SQLITE_FILE"]! })
const store = SqlConversationStore.layerWithOutbox().pipe(Layer.provideMerge(SqlConversationStore.layerMigrate()), Layer.provideMerge(client))

const pause = Effect.gen(function*() {
  const conversations = yield* ConversationStore.ConversationStore
  const chat = yield* Chat.make({ tools }).pipe(
    Effect.provide(Layer.merge(
      MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "c1", name: "pay", arguments: { amount: 10 } }])]).layer,
      tools.toLayer({ pay: ({ amount }) => Effect.succeed(amount) })
    ))
  )
  const first = yield* conversations.save("conv", Messages.fromUser("Pay the bill."), { expectedVersion: 0 })
  const result = yield* chat.complete(first.messages, { checkpoint: ConversationStore.checkpoint(conversations, "conv", first.version) })
  yield* print({ saved: result.outcome._tag })
  const hanging = Notifier.layer((notification) => Effect.andThen(print({ claimed: notification.id }), Effect.never))
  yield* OutboxDispatcher.deliverPending({ claimTtl: "2 seconds" }).pipe(Effect.provide(hanging))
})

const deliver = Effect.gen(function*() {
  const outbox = yield* Outbox.Outbox
  const webhook = WebhookNotifier.layerConfig({ url: Config.String("HOOK_URL"), secret: Config.Redacted("HOOK_SECRET") }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )
  for (let pass = 0; pass < 300 && (yield* outbox.list({ status: "pending" })).length > 0; pass++) {
    yield* OutboxDispatcher.deliverPending().pipe(Effect.provide(webhook))
    yield* Effect.sleep("100 millis")
  }
  const rows = yield* outbox.list()
  yield* print({ rows: rows.map((row) => ({ id: row.notification.id, kind: row.notification.kind, status: row.status, attempts: row.attempts })) })
})

const program: Effect.Effect<void, unknown, ConversationStore.ConversationStore | Outbox.Outbox> = process.env["MODE"] === "pause"
  ? pause
  : deliver

Effect.runPromise(Effect.provide(program, store)).then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(String(error) + "\n")
    process.exit(1)
  }
)
