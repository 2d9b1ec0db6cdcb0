import { Action, Chat, ChatError, ConversationStore, Messages, type Notification, Notifier, Outbox, OutboxDispatcher, Tool, Toolkit, Worker } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlClientType from "effect/sql/SqlClient"
import { TestClock } from "effect/testing"
import { SqlConversationStore } from "../src/index.js"
import { pgClient, sqliteClient, uniqueTable } from "./support/Databases.js"

const Pay = Tool.make("pay", {
  description: "Pay a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number })
})
const tools = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.RequireApproval())

const chat = () =>
  Chat.make({ tools }).pipe(
    Effect.provide(Layer.merge(
      MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "c1", name: "pay", arguments: { amount: 10 } }]),
        MockLanguageModel.text("Paid.")
      ]).layer,
      tools.toLayer({ pay: ({ amount }) => Effect.succeed({ paid: amount }) })
    ))
  )

const approveAll = (stored: ConversationStore.Stored) =>
  Effect.reduce(
    Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
    () => stored.messages,
    (messages, c) => Effect.fromResult(Messages.approve(messages, c.id))
  )

const paused: Messages.Messages = [
  Messages.user("Pay."),
  { role: "assistant", parts: [{ _tag: "ToolCall", id: "c1", name: "pay", arguments: "{\"amount\":1}", status: { _tag: "AwaitingApproval" } }] }
]

/** A migrated store with an outbox on its own tables, on Effect's clock; the client stays provided. */
const withOutbox = (client: Layer.Layer<SqlClientType.SqlClient, unknown>, table = uniqueTable()) => {
  const settings: SqlConversationStore.Options = { table, clock: "effect" }
  return SqlConversationStore.layerWithOutbox(settings).pipe(
    Layer.provideMerge(SqlConversationStore.layerMigrate(settings)),
    Layer.provideMerge(client),
    Layer.orDie
  )
}

/** Moves the test clock on, a second at a time, until `fiber` ends (its database round trips take real time). */
const runOut = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600 && fiber.pollUnsafe() === undefined; i++) {
      yield* TestClock.adjust("1 second")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
    }
    return yield* Fiber.join(fiber)
  })

const kindsOf = (entries: ReadonlyArray<Outbox.Entry>) => entries.map((entry) => entry.notification.kind)

const databases = [
  ["SQLite", () => sqliteClient()],
  ["PostgreSQL", () => pgClient()]
] as const

for (const [name, client] of databases) {
  describe(`the outbox on ${name}`, () => {
    it.effect("each save writes its notifications in its transaction: pause, decision, resume, completion", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const outbox = yield* Outbox.Outbox
        const c = yield* chat()
        const first = yield* store.save("conv", Messages.fromUser("Pay the bill."), { expectedVersion: 0 })
        const result = yield* c.complete(first.messages, { checkpoint: ConversationStore.checkpoint(store, "conv", first.version) })
        expect(result.outcome._tag).toBe("Paused")
        expect(kindsOf(yield* outbox.list())).toEqual(["Paused"])
        expect((yield* Worker.resume(c, "conv", approveAll)).outcome._tag).toBe("Complete")
        const entries = yield* outbox.list()
        expect(kindsOf(entries)).toEqual(["Paused", "Decided", "Resumed", "Completed"])
        expect(entries.every((entry) => entry.status === "pending" && entry.attempts === 0)).toBe(true)
        expect(entries[0]!.notification).toMatchObject({ conversationId: "conv", calls: [{ id: "c1", name: "pay", status: "AwaitingApproval" }] })
        expect(kindsOf(yield* outbox.list({ conversationId: "other" }))).toEqual([])
      }).pipe(Effect.provide(withOutbox(client()))))

    it.effect("a save that is refused, or fails inside its transaction, writes no notification", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const outbox = yield* Outbox.Outbox
        yield* store.save("conv", paused, { expectedVersion: 0 })
        expect((yield* Effect.flip(store.save("conv", paused, { expectedVersion: 0 })))._tag).toBe("ConcurrentModification")
        const rejected = Messages.reject(paused, "c1")
        if (rejected._tag !== "Success") throw new Error("reject failed")
        // A message JSON cannot hold (a BigInt in a result) fails the save in its transaction: no state, no row.
        const unstorable: Messages.Messages = [...rejected.success, Messages.assistant([{
          _tag: "ToolCall", id: "c2", name: "pay", arguments: "{}", status: { _tag: "Completed", result: 1n as never }
        }])]
        expect((yield* Effect.flip(store.save("conv", unstorable, { expectedVersion: 1 })))._tag).toBe("StateEncodeError")
        expect(kindsOf(yield* outbox.list())).toEqual(["Paused"])
        // The decision, saved by another store that does not remember the conversation, still finds the state before.
        const other = yield* SqlConversationStore.makeWithOutbox({ table, clock: "effect" })
        yield* other.store.save("conv", rejected.success, { expectedVersion: 1 })
        expect(kindsOf(yield* outbox.list())).toEqual(["Paused", "Decided"])
      }).pipe(Effect.provide(withOutbox(client(), table)))
    })

    it.effect("two dispatchers at once deliver every row exactly once; an expired claim is sent again", () => {
      const seen: Array<string> = []
      const notifier = Notifier.layer((n) => Effect.sync(() => void seen.push(n.id)))
      return Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const outbox = yield* Outbox.Outbox
        for (let i = 0; i < 30; i++) yield* store.save(`conv-${i}`, paused, { expectedVersion: 0 })
        const held = yield* outbox.claim({ limit: 5, ttl: 10_000 })
        expect(held.length).toBe(5)
        const passes = yield* Effect.all(
          [OutboxDispatcher.deliverPending({ batchSize: 7 }), OutboxDispatcher.deliverPending({ batchSize: 7 }), OutboxDispatcher.deliverPending({ batchSize: 7 }), OutboxDispatcher.deliverPending({ batchSize: 7 })],
          { concurrency: "unbounded" }
        )
        expect(passes.reduce((n, pass) => n + pass.delivered, 0)).toBe(25)
        expect(new Set(seen).size).toBe(25)
        expect(seen.length).toBe(25)
        // The held rows' claim expires (their dispatcher died): the next pass sends them.
        expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 0, failed: 0 })
        yield* TestClock.adjust("10 seconds")
        expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 5, failed: 0 })
        expect(new Set(seen).size).toBe(30)
        expect((yield* outbox.list({ status: "delivered" })).length).toBe(30)
        // The dead dispatcher's late `failed` changes nothing; its late `delivered` leaves the row delivered.
        yield* outbox.failed(held[0]!, 1, "late")
        yield* outbox.delivered(held[1]!, 1)
        expect((yield* outbox.list({ status: "delivered" })).length).toBe(30)
      }).pipe(Effect.provide(Layer.merge(withOutbox(client()), notifier)))
    })

    it.effect("a receiver that fails forever: bounded tries, the row kept failed with attempts and error; requeue", () => {
      let tries = 0
      const notifier = Notifier.layer((n: Notification.Notification) =>
        Effect.suspend(() => (tries++, Effect.fail(new ChatError.NotificationFailed({ id: n.id, detail: "HTTP 500", status: 500, retryable: true })))))
      return Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const outbox = yield* Outbox.Outbox
        yield* store.save("conv", paused, { expectedVersion: 0 })
        const pass = yield* Effect.forkChild(OutboxDispatcher.deliverPending())
        expect(yield* runOut(pass)).toEqual({ delivered: 0, failed: 1 })
        expect(tries).toBe(5)
        const [row] = yield* outbox.list()
        expect(row).toMatchObject({ status: "failed", attempts: 5, lastError: "HTTP 500" })
        expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 0, failed: 0 })
        expect(yield* outbox.requeue(row!.notification.id)).toBe(true)
        expect(yield* outbox.requeue(row!.notification.id)).toBe(false)
        expect((yield* outbox.list({ status: "pending" })).length).toBe(1)
        for (const bad of [{ limit: 0, ttl: 1 }, { limit: 1, ttl: Number.NaN }]) {
          expect((yield* Effect.flip(outbox.claim(bad)))._tag).toBe("StoreError")
        }
      }).pipe(Effect.provide(Layer.merge(withOutbox(client()), notifier)))
    })

    it.effect("a store without an outbox (`layer`) writes no rows; tables from before `3_outbox` migrate", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const firstTwo = SqlConversationStore.migrations({ table })
        yield* Migrator.make({})({
          loader: Migrator.fromRecord({ "1_conversations": firstTwo["1_conversations"]!, "2_lease_token": firstTwo["2_lease_token"]! }),
          table: `${table}_migrations`
        })
        const old = yield* SqlConversationStore.make({ table })
        yield* old.save("conv", paused, { expectedVersion: 0 })
        expect(yield* SqlConversationStore.migrate({ table })).toEqual([[3, "outbox"]])
        const plain = yield* SqlConversationStore.make({ table })
        yield* plain.save("conv", [Messages.user("Hi"), Messages.assistant("Hello.")], { expectedVersion: 1 })
        expect(yield* sql`SELECT id FROM ${sql(`${table}_outbox`)}`).toEqual([])
        const { outbox, store } = yield* SqlConversationStore.makeWithOutbox({ table })
        yield* store.save("conv", paused, { expectedVersion: 2 })
        expect(kindsOf(yield* outbox.list())).toEqual(["Paused"])
      }).pipe(Effect.provide(Layer.orDie(client())))
    })
  })
}
