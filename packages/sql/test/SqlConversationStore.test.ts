import { Action, Chat, ConversationStore, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlConversationStore } from "../src/index.js"
import * as Readme from "./readme-example.js"

/** A fresh SQLite database file; two layers on the same file act as two processes. */
const tempDatabase = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-sql-")), "store.db")

const storeOn = (filename: string) =>
  SqlConversationStore.layer().pipe(Layer.provideMerge(SqliteClient.layer({ filename })))

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

describe("SqlConversationStore on SQLite", () => {
  it.effect("saves and loads a conversation, growing its version on each save", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const first = yield* store.save("conv-1", paused, { expectedVersion: 0 })
      expect(first.version).toBe(1)
      const loaded = yield* store.load("conv-1")
      expect(Option.map(loaded, (s) => [s.messages, s.version])).toEqual(Option.some([paused, 1]))
      const approved = yield* Messages.approve(paused, "c1")
      const second = yield* store.save("conv-1", approved, { expectedVersion: 1 })
      expect(second.version).toBe(2)
      expect(Option.map(yield* store.load("conv-1"), (s) => s.messages)).toEqual(Option.some(approved))
      expect(yield* store.load("nobody")).toEqual(Option.none())
    }).pipe(Effect.provide(storeOn(tempDatabase()))))

  it.effect("refuses a save from a stale version, an insert over an existing one and an update of a missing one", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", paused, { expectedVersion: 0 })
      yield* store.save("conv", paused, { expectedVersion: 1 })
      const stale = yield* Effect.flip(store.save("conv", done, { expectedVersion: 1 }))
      expect(stale).toMatchObject({ _tag: "ConcurrentModification", id: "conv", expectedVersion: 1, actualVersion: 2 })
      const again = yield* Effect.flip(store.save("conv", done, { expectedVersion: 0 }))
      expect(again).toMatchObject({ _tag: "ConcurrentModification", expectedVersion: 0, actualVersion: 2 })
      const missing = yield* Effect.flip(store.save("ghost", done, { expectedVersion: 4 }))
      expect(missing._tag).toBe("ConcurrentModification")
      expect(missing).not.toHaveProperty("actualVersion")
      // The refused saves changed nothing.
      expect(Option.map(yield* store.load("conv"), (s) => [s.messages, s.version])).toEqual(Option.some([paused, 2]))
      // Without an expected version the last write wins.
      expect((yield* store.save("conv", done)).version).toBe(3)
      expect((yield* store.save("new", done)).version).toBe(1)
    }).pipe(Effect.provide(storeOn(tempDatabase()))))

  it.effect("lists the conversations with pending calls, oldest first, and removes conversations", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("b", paused)
      yield* TestClock.adjust("1 minute")
      yield* store.save("done", done)
      yield* store.save("a", paused)
      const pending = yield* store.listPending
      expect(pending.map((p) => [p.id, p.pending, p.updatedAt])).toEqual([["b", ["c1"], 0], ["a", ["c1"], 60_000]])
      yield* store.remove("b")
      expect((yield* store.listPending).map((p) => p.id)).toEqual(["a"])
      expect(yield* store.load("b")).toEqual(Option.none())
    }).pipe(Effect.provide(storeOn(tempDatabase()))))

  it.effect("a document changed in the database is refused when loaded", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const sql = yield* SqlClient.SqlClient
      yield* store.save("conv", paused)
      yield* sql`UPDATE chat_ts_conversations SET document = ${"{\"format\":\"chat-ts/messages\",\"version\":1,\"messages\":[{\"role\":\"robot\",\"parts\":[]}]}"}`
      const error = yield* Effect.flip(store.load("conv"))
      expect(error._tag).toBe("StateDecodeError")
    }).pipe(Effect.provide(storeOn(tempDatabase()))))

  it.effect("uses the table name it is given", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* SqlConversationStore.make({ table: "pauses" })
      yield* store.save("conv", paused)
      const rows = yield* sql<{ id: string }>`SELECT id FROM pauses`
      expect(rows.map((row) => row.id)).toEqual(["conv"])
    }).pipe(Effect.provide(SqliteClient.layer({ filename: tempDatabase() }))))
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
        const [pending] = yield* store.listPending
        expect(pending).toMatchObject({ id: "conv", pending: ["c1"], version: 1 })
        const stored = Option.getOrThrow(yield* store.load(pending!.id))
        const approved = yield* Messages.approve(stored.messages, "c1")
        const chat = yield* chatWith(model2, deleted)
        const result = yield* chat.resume(approved, {
          checkpoint: ConversationStore.checkpoint(store, stored.id, stored.version)
        })
        expect(result.outcome._tag).toBe("Complete")
        const final = Option.getOrThrow(yield* store.load("conv"))
        expect(final.messages).toEqual(result.messages)
        expect(yield* store.listPending).toEqual([])
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
        const approved = yield* Messages.approve(result.messages, "c1")
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
      expect(refused && Exit.isFailure(refused) ? Cause.failureOption(refused.cause) : undefined).toMatchObject({
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

  it.effect("its worker resumes the oldest pending conversation with checkpoints", () =>
    Effect.gen(function*() {
      const database = tempDatabase()
      const deleted: Array<ReadonlyArray<string>> = []
      const result = yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const first = yield* chatWith(script(), deleted)
        const pausedTurn = yield* first.complete(Messages.fromUser("Delete the old logs."))
        yield* store.save("conv", pausedTurn.messages, { expectedVersion: 0 })
        const chat = yield* chatWith(MockLanguageModel.make([MockLanguageModel.text("Deleted a.log.")]), deleted)
        return yield* Readme.resumeOldest(chat, (messages) => Messages.approve(messages, "c1"))
      }).pipe(Effect.provide(Readme.StoreLive(database)))
      expect(result?.outcome._tag).toBe("Complete")
      expect(deleted).toEqual([["a.log"]])
    }))
})
