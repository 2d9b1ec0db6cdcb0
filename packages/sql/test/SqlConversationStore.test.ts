import { Action, Chat, ConversationStore, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Cause, ConfigProvider, Effect, Exit, Fiber, Layer, Option, Redacted, Schema } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { SqliteClient, SqlConversationStore } from "../src/index.js"
import * as Readme from "./readme-example.js"
import { freshPostgresDatabase, migratedStore, pgClient, postgresUrl, sqliteClient, tempDatabase, uniqueTable } from "./support/Databases.js"

/** A store on a SQLite file, migrated; two layers on the same file act as two processes. */
const storeOn = (filename: string) =>
  SqlConversationStore.layer().pipe(
    Layer.provideMerge(SqlConversationStore.layerMigrate()),
    Layer.provideMerge(SqliteClient.layer({ filename })),
    Layer.orDie
  )

const paused: Messages.Messages = [
  Messages.user("Delete the old logs."),
  {
    role: "assistant",
    parts: [
      { _tag: "ToolCall", id: "c1", name: "delete_files", arguments: "{\"paths\":[\"a.log\"]}", status: { _tag: "AwaitingApproval" } }
    ]
  }
]
const done: Messages.Messages = [Messages.user("Hi"), Messages.assistant("Hello!")]

/** What `migrate` applies to an empty database. */
const allMigrations = [[1, "conversations"], [2, "lease_token"], [3, "outbox"]]

const databases = [
  ["SQLite", () => sqliteClient()],
  ["PostgreSQL", () => pgClient()]
] as const

for (const [name, client] of databases) {
  describe(`SqlConversationStore on ${name}`, () => {
    it.effect("a damaged pending column is a CorruptConversation naming the conversation, in every read", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const sql = yield* SqlClient.SqlClient
        yield* store.save("good", paused)
        yield* store.save("conv", paused)
        for (const broken of ["{broken", "[1]", "[]", "null", "\"c1\""]) {
          yield* sql`UPDATE ${sql(table)} SET pending = ${broken} WHERE id = ${"conv"}`
          const error = yield* Effect.flip(store.listPending())
          expect(error).toMatchObject({ _tag: "CorruptConversation", id: "conv" })
          expect(error.message).toContain("'conv'")
        }
        // The conversation itself still loads: its messages are intact.
        expect(Option.map(yield* store.load("conv"), (s) => s.messages)).toEqual(Option.some(paused))
      }).pipe(Effect.provide(migratedStore(client(), { table })))
    })

    it.effect("a damaged or missing message row is a CorruptConversation on load, and listPending never reads them", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const sql = yield* SqlClient.SqlClient
        const messages = sql(`${table}_messages`)
        yield* store.save("conv", paused)
        yield* sql`UPDATE ${messages} SET body = ${"{\"role\":\"robot\",\"parts\":[]}"} WHERE position = 0`
        expect(yield* Effect.flip(store.load("conv"))).toMatchObject({ _tag: "CorruptConversation", id: "conv" })
        yield* sql`UPDATE ${messages} SET body = ${"not json"} WHERE position = 0`
        expect(yield* Effect.flip(store.load("conv"))).toMatchObject({ _tag: "CorruptConversation", id: "conv" })
        // The list of pending conversations comes from indexed columns only.
        expect((yield* store.listPending()).items.map((p) => [p.id, p.pending])).toEqual([["conv", ["c1"]]])
        yield* store.save("gap", paused)
        yield* sql`DELETE FROM ${messages} WHERE conversation_id = ${"gap"} AND position = 0`
        const gap = yield* Effect.flip(store.load("gap"))
        expect(gap).toMatchObject({ _tag: "CorruptConversation", id: "gap" })
        expect(gap.message).toContain("message 0 is missing")
        yield* store.save("short", paused)
        yield* sql`UPDATE ${sql(table)} SET message_count = 3 WHERE id = ${"short"}`
        expect(yield* Effect.flip(store.load("short"))).toMatchObject({ _tag: "CorruptConversation", id: "short" })
      }).pipe(Effect.provide(migratedStore(client(), { table })))
    })

    it.effect("a conversation removed and created again by another worker is never mixed with the old one", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const mine = yield* SqlConversationStore.make({ table })
        const theirs = yield* SqlConversationStore.make({ table })
        const long: Messages.Messages = [...paused, Messages.user("one"), Messages.assistant("two"), Messages.user("three")]
        yield* mine.save("conv", long, { expectedVersion: 0 })
        const loaded = Option.getOrThrow(yield* mine.load("conv"))
        // Another worker removes it and stores a different conversation under the same id, at the same version.
        yield* theirs.remove("conv")
        yield* theirs.save("conv", done, { expectedVersion: 0 })
        // This worker's save matches the version: it is written whole, never as a change of the old rows.
        const mineNext = [...loaded.messages.slice(0, 4), Messages.user("changed")]
        yield* mine.save("conv", mineNext, { expectedVersion: 1 })
        expect(Option.map(yield* theirs.load("conv"), (s) => s.messages)).toEqual(Option.some(mineNext))
      }).pipe(Effect.provide(migratedStore(client(), { table })))
    })

    it.effect("a save of the changes whose compare-and-set does not hold writes no message row (one statement on PostgreSQL)", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const mine = yield* SqlConversationStore.make({ table })
        const theirs = yield* SqlConversationStore.make({ table })
        yield* mine.save("conv", paused, { expectedVersion: 0 })
        const loaded = Option.getOrThrow(yield* mine.load("conv"))
        const theirsNext = [...loaded.messages, Messages.user("theirs")]
        yield* theirs.save("conv", theirsNext, { expectedVersion: 1 })
        // This store knows version 1: its change (a new message 2, an edit of message 0) is refused whole.
        const mineNext = [Messages.user("mine"), loaded.messages[1]!, Messages.user("mine too")]
        expect(yield* Effect.flip(mine.save("conv", mineNext, { expectedVersion: 1 }))).toMatchObject({
          _tag: "ConcurrentModification",
          expectedVersion: 1,
          actualVersion: 2
        })
        const stored = Option.getOrThrow(yield* mine.load("conv"))
        expect([stored.messages, stored.version]).toEqual([theirsNext, 2])
        // Under a lease that is not the caller's: refused the same, nothing written, the holder's lease kept.
        const held = yield* theirs.acquire("conv", "theirs", "10 seconds")
        const forged = { ...held, token: "forged" }
        expect(yield* Effect.flip(mine.save("conv", mineNext, { expectedVersion: 2, lease: forged }))).toMatchObject({ _tag: "ConversationBusy" })
        expect(yield* Effect.flip(ConversationStore.saveAndRelease(mine, "conv", mineNext, { expectedVersion: 2, lease: forged })))
          .toMatchObject({ _tag: "ConversationBusy" })
        expect(Option.map(yield* theirs.load("conv"), (s) => [s.messages, s.version])).toEqual(Option.some([theirsNext, 2]))
        expect(yield* Effect.flip(mine.acquire("conv", "mine", "1 second"))).toMatchObject({ _tag: "ConversationBusy" })
      }).pipe(Effect.provide(migratedStore(client(), { table })))
    })

    it.effect("acquireAndLoad of a damaged conversation is a CorruptConversation and gives the lease back", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const sql = yield* SqlClient.SqlClient
        yield* store.save("conv", paused, { expectedVersion: 0 })
        yield* sql`UPDATE ${sql(`${table}_messages`)} SET body = ${"not json"} WHERE position = 0`
        expect(yield* Effect.flip(ConversationStore.acquireAndLoad(store, "conv", "w1", "10 seconds"))).toMatchObject({
          _tag: "CorruptConversation",
          id: "conv"
        })
        expect((yield* store.acquire("conv", "w2", "1 second")).owner).toBe("w2")
      }).pipe(Effect.provide(migratedStore(client(), { table })))
    })

    it.effect("builds its layer without a statement; a missing table is a StoreError carrying the driver's error", () =>
      Effect.gen(function*() {
        const store = yield* SqlConversationStore.make({ table: uniqueTable() })
        const error = yield* Effect.flip(store.load("conv"))
        expect(error._tag).toBe("StoreError")
        if (error._tag !== "StoreError") return
        const cause = error.cause as { readonly code?: unknown; readonly message?: unknown }
        expect(cause).toBeInstanceOf(Error)
        expect(cause.code).toBe(name === "PostgreSQL" ? "42P01" : "SQLITE_ERROR")
        expect(error.detail).toContain(String(cause.message))
        expect(error.detail).toMatch(/does not exist|no such table/)
      }).pipe(Effect.provide(Layer.orDie(client()))))

    it.effect("a lease row written before lease tokens is held by a run it does not know until it expires", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // The tables as the first migration made them, with a lease taken by the old code (an owner, no token).
        const first = { "1_conversations": SqlConversationStore.migrations({ table })["1_conversations"]! }
        yield* Migrator.make({})({ loader: Migrator.fromRecord(first), table: `${table}_migrations` })
        const old = yield* SqlConversationStore.make({ table, clock: "effect" })
        yield* old.save("conv", paused, { expectedVersion: 0 })
        yield* sql`UPDATE ${sql(table)} SET lease_owner = ${"proc-1"}, lease_expires_at = ${10_000} WHERE id = ${"conv"}`
        expect(yield* SqlConversationStore.migrate({ table })).toEqual([[2, "lease_token"], [3, "outbox"]])
        const store = yield* SqlConversationStore.make({ table, clock: "effect" })
        // Not even its owner's name takes it, and no lease but a token the store gave renews, saves under or releases it.
        expect(yield* Effect.flip(store.acquire("conv", "proc-1", "1 minute"))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 10_000 })
        const forged = { id: "conv", owner: "proc-1", token: "", expiresAt: 10_000 }
        yield* store.release(forged)
        expect(yield* Effect.flip(store.renew(forged, "1 minute"))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 10_000 })
        expect(yield* Effect.flip(store.save("conv", done, { expectedVersion: 1, lease: forged }))).toMatchObject({ _tag: "ConversationBusy" })
        expect(yield* Effect.flip(store.acquire("conv", "proc-2", "1 minute"))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 10_000 })
        // Expired: the next run takes it, with a token of its own, and saves under it.
        yield* TestClock.adjust("10 seconds")
        const lease = yield* store.acquire("conv", "proc-2", "1 minute")
        expect(lease).toEqual({ id: "conv", owner: "proc-2", token: expect.any(String), expiresAt: 70_000 })
        expect((yield* store.save("conv", done, { expectedVersion: 1, lease })).version).toBe(2)
      }).pipe(Effect.provide(Layer.orDie(client())))
    })

    it.effect("migrating again changes nothing; stores on other tables are independent", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", paused)
        expect(yield* SqlConversationStore.migrate({ table })).toEqual([])
        const other = yield* SqlConversationStore.make({ table: `${table}_b` })
        expect(yield* SqlConversationStore.migrate({ table: `${table}_b` })).toEqual(allMigrations)
        expect(yield* other.load("conv")).toEqual(Option.none())
        expect(Option.map(yield* store.load("conv"), (s) => s.version)).toEqual(Option.some(1))
      }).pipe(Effect.provide(migratedStore(client(), { table })))
    })
  })
}

describe("SqlConversationStore on PostgreSQL with an application role", () => {
  it.effect("works with read and write grants only, while the schema needs the deployer's role", () => {
    const table = uniqueTable()
    const role = `app_${table}`
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE ROLE ${sql(role)} LOGIN PASSWORD 'app'`
      yield* sql`REVOKE CREATE ON SCHEMA public FROM PUBLIC`
      yield* sql`GRANT SELECT, INSERT, UPDATE, DELETE ON ${sql(table)}, ${sql(`${table}_messages`)} TO ${sql(role)}`
      const url = new URL(postgresUrl())
      url.username = role
      url.password = "app"
      const asApp = Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", paused, { expectedVersion: 0 })
        const lease = yield* store.acquire("conv", "w", "1 minute")
        yield* store.save("conv", done, { expectedVersion: 1, lease })
        yield* store.release(lease)
        expect(Option.map(yield* store.load("conv"), (s) => s.messages)).toEqual(Option.some(done))
        const denied = yield* Effect.flip(SqlConversationStore.migrate({ table: `${table}_new` }))
        expect(denied).toMatchObject({ _tag: "SqlError", reason: { _tag: "AuthorizationError", cause: { code: "42501" } } })
      }).pipe(Effect.provide(SqlConversationStore.layer({ table }).pipe(Layer.provideMerge(Layer.orDie(pgClient(url.href))))))
      yield* asApp
    }).pipe(Effect.provide(migratedStore(pgClient(), { table })))
  })
})

describe("SqlConversationStore.migrate on PostgreSQL", () => {
  it.live("waits while another session holds the store's migration lock, and migrates once it is released", () => {
    const table = uniqueTable()
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const lock = `chat-ts/sql:${table}_migrations`
      // Another process holds the lock (a session lock, on a connection of its own).
      const other = yield* sql.reserve
      yield* other.executeValues("SELECT pg_advisory_lock(hashtextextended($1, 0))", [lock])
      const migrating = yield* Effect.forkChild(SqlConversationStore.migrate({ table }))
      yield* Effect.sleep("1500 millis")
      expect(migrating.pollUnsafe()).toBeUndefined()
      expect(yield* sql`SELECT to_regclass(${table})::text AS found`).toEqual([{ found: null }])
      yield* other.executeValues("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [lock])
      expect(yield* Fiber.join(migrating)).toEqual(allMigrations)
      // The lock is free again: another migration takes it at once and finds nothing to do.
      expect(yield* SqlConversationStore.migrate({ table })).toEqual([])
      expect(yield* other.executeValues("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", [lock])).toEqual([[true]])
      // The reserved connection goes back before the client's pool closes (scoped inside the layer).
    }).pipe(Effect.scoped, Effect.provide(Layer.orDie(pgClient())))
  }, 30_000)

  it.effect("needs one connection: migrates on a client whose pool has a single one", () => {
    const table = uniqueTable()
    return Effect.gen(function*() {
      expect(yield* SqlConversationStore.migrate({ table })).toEqual(allMigrations)
      expect(yield* SqlConversationStore.migrate({ table })).toEqual([])
      const store = yield* SqlConversationStore.make({ table })
      yield* store.save("conv", paused, { expectedVersion: 0 })
      expect(Option.map(yield* store.load("conv"), (s) => s.version)).toEqual(Option.some(1))
    }).pipe(Effect.provide(Layer.orDie(PgClient.layer({ url: Redacted.make(postgresUrl()), maxConnections: 1 }))))
  })
})

// ---------------------------------------------------------------------------
// With Chat: pause in one process, resume in another; two workers, one run
// ---------------------------------------------------------------------------

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number })
})
const files = Toolkit.withStrategy(Toolkit.make(DeleteFiles), () => Action.RequireApproval())

const script = () =>
  MockLanguageModel.make([
    MockLanguageModel.toolCalls([{ id: "c1", name: "delete_files", arguments: { paths: ["a.log"] } }]),
    MockLanguageModel.text("Deleted a.log.")
  ])

const chatWith = (model: MockLanguageModel.MockLanguageModel, deleted: Array<ReadonlyArray<string>>) =>
  Chat.make({ tools: files }).pipe(
    Effect.provide(Layer.merge(
      model.layer,
      files.toLayer({ delete_files: ({ paths }) => Effect.sync(() => (deleted.push(paths), { deleted: paths.length })) })
    ))
  )

describe("SqlConversationStore with Chat", () => {
  it.effect("pauses in one process and resumes in another", () =>
    Effect.gen(function*() {
      const database = tempDatabase()
      const deleted: Array<ReadonlyArray<string>> = []

      // Process 1: the turn pauses; the pause is stored.
      const model1 = script()
      yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const chat = yield* chatWith(model1, deleted)
        const result = yield* chat.complete(Messages.fromUser("Delete the old logs."))
        expect(result.outcome._tag).toBe("Paused")
        yield* store.save("conv", result.messages, { expectedVersion: 0 })
      }).pipe(Effect.provide(storeOn(database)))

      // Process 2: finds the pending approval, approves and resumes, saving every state.
      const model2 = MockLanguageModel.make([MockLanguageModel.text("Deleted a.log.")])
      yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const [pending] = (yield* store.listPending()).items
        expect(pending).toMatchObject({ id: "conv", pending: ["c1"], version: 1 })
        const stored = Option.getOrThrow(yield* store.load(pending!.id))
        const approved = yield* Effect.fromResult(Messages.approve(stored.messages, "c1"))
        const chat = yield* chatWith(model2, deleted)
        const result = yield* chat.resume(approved, {
          checkpoint: ConversationStore.checkpoint(store, stored.id, stored.version)
        })
        expect(result.outcome._tag).toBe("Complete")
        const final = Option.getOrThrow(yield* store.load("conv"))
        expect(final.messages).toEqual(result.messages)
        expect((yield* store.listPending()).items).toEqual([])
      }).pipe(Effect.provide(storeOn(database)))

      expect(deleted).toEqual([["a.log"]])
    }))

  it.effect("two workers resuming the same pause: the call runs once, the late worker is refused", () =>
    Effect.gen(function*() {
      const database = tempDatabase()
      const deleted: Array<ReadonlyArray<string>> = []
      const model = script()
      const stored = yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const chat = yield* chatWith(model, deleted)
        const result = yield* chat.complete(Messages.fromUser("Delete the old logs."))
        const approved = yield* Effect.fromResult(Messages.approve(result.messages, "c1"))
        return yield* store.save("conv", approved, { expectedVersion: 0 })
      }).pipe(Effect.provide(storeOn(database)))

      const worker = Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const chat = yield* chatWith(MockLanguageModel.make([MockLanguageModel.text("Deleted a.log.")]), deleted)
        return yield* chat.resume(stored.messages, {
          checkpoint: ConversationStore.checkpoint(store, "conv", stored.version)
        })
      }).pipe(Effect.provide(storeOn(database)))

      const exits = yield* Effect.all([Effect.exit(worker), Effect.exit(worker)], { concurrency: "unbounded" })
      expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
      // The late worker stops with a typed error, before running anything.
      const [refused] = exits.filter(Exit.isFailure)
      expect(refused && Exit.isFailure(refused) ? Cause.findErrorOption(refused.cause) : undefined).toMatchObject({
        _tag: "Some",
        value: { _tag: "ConcurrentModification", id: "conv", expectedVersion: 1 }
      })
      expect(deleted).toEqual([["a.log"]])
    }))
})

describe("README", () => {
  it("shows test/readme-example.ts word for word", () => {
    const here = path.dirname(new URL(import.meta.url).pathname)
    const readme = fs.readFileSync(path.join(here, "..", "README.md"), "utf8")
    const example = fs.readFileSync(path.join(here, "readme-example.ts"), "utf8")
    expect(readme).toContain("```ts\n" + example + "```")
  })

  it.effect("its worker, on PostgreSQL from DATABASE_URL, skips a busy conversation and resumes the next", () =>
    Effect.gen(function*() {
      const deleted: Array<ReadonlyArray<string>> = []
      const url = yield* freshPostgresDatabase
      const result = yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const first = yield* chatWith(script(), deleted)
        const pausedTurn = yield* first.complete(Messages.fromUser("Delete the old logs."))
        yield* store.save("busy", pausedTurn.messages, { expectedVersion: 0 })
        yield* TestClock.adjust("1 second")
        yield* store.save("free", pausedTurn.messages, { expectedVersion: 0 })
        yield* store.acquire("busy", "another worker", "1 hour")
        const chat = yield* chatWith(MockLanguageModel.make([MockLanguageModel.text("Deleted a.log.")]), deleted)
        const result = yield* Readme.resumeOldest(chat, (messages) => Effect.fromResult(Messages.approve(messages, "c1")))
        expect((yield* store.listPending()).items.map((p) => p.id)).toEqual(["busy"])
        return result
      }).pipe(
        Effect.provide(Readme.StoreLive.pipe(Layer.provideMerge(Readme.Migrate), Layer.orDie)),
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({ DATABASE_URL: url })))
      )
      expect(result?.outcome._tag).toBe("Complete")
      expect(deleted).toEqual([["a.log"]])
    }))
})
