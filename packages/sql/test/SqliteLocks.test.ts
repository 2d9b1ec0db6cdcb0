/**
 * The store on a SQLite file whose write lock another process holds: a
 * statement the lock refuses (`SQLITE_BUSY`) is retried inside the store,
 * within its budget, and succeeds once the lock is released; past the budget
 * it is a `StoreError` with `retryable: true`, nothing is written, and the
 * README's worker loop skips it and resumes the conversation on a later round.
 * Real processes on a real file; the clock is the real one (the budget is timed).
 */
import { Action, ChatError, Chat, ConversationStore, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Exit, Fiber, Layer, Option, Schema, Scope } from "effect"
import { spawn } from "node:child_process"
import * as readline from "node:readline"
import { SqliteClient, SqlConversationStore } from "../src/index.js"
import * as Readme from "./readme-example.js"
import { tempDatabase } from "./support/Databases.js"

/**
 * A process that opens `filename`, takes its write lock (`BEGIN IMMEDIATE`) and holds it until the
 * scope closes (it then commits nothing and exits); bounded at every step.
 */
const writeLockHeldBy = (filename: string) =>
  Effect.acquireRelease(
    Effect.callback<ReturnType<typeof spawn>, Error>((resume) => {
      const holder = spawn(process.execPath, [
        "-e",
        `const { DatabaseSync } = require("node:sqlite")
         const db = new DatabaseSync(process.argv[1])
         db.exec("BEGIN IMMEDIATE")
         process.stdout.write("locked\\n")
         process.stdin.on("data", () => { db.exec("ROLLBACK"); db.close(); process.exit(0) })
         setTimeout(() => process.exit(2), 60000)`,
        filename
      ], { stdio: ["pipe", "pipe", "inherit"] })
      const timer = setTimeout(() => (holder.kill("SIGKILL"), resume(Effect.fail(new Error("the lock holder did not lock in 30 s")))), 30_000)
      readline.createInterface({ input: holder.stdout! }).once("line", (line) => {
        clearTimeout(timer)
        resume(line === "locked" ? Effect.succeed(holder) : Effect.fail(new Error(`the lock holder said ${line}`)))
      })
    }),
    (holder) =>
      Effect.callback<void>((resume) => {
        if (holder.exitCode !== null) return resume(Effect.void)
        const timer = setTimeout(() => (holder.kill("SIGKILL"), resume(Effect.void)), 10_000)
        holder.once("exit", () => (clearTimeout(timer), resume(Effect.void)))
        holder.stdin!.write("release\n")
      })
  )

/** A migrated store on `filename` whose client waits 20 ms for a lock and whose store retries for `budget`. */
const storeOn = (filename: string, budget: Duration.Input) =>
  SqlConversationStore.layer({ lockRetryBudget: budget }).pipe(
    Layer.provideMerge(SqlConversationStore.layerMigrate()),
    Layer.provideMerge(SqliteClient.layer({ filename, busyTimeout: "20 millis" })),
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

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number })
})
const files = Toolkit.withStrategy(Toolkit.make(DeleteFiles), () => Action.RequireApproval())

describe("SqlConversationStore on SQLite under a held write lock", () => {
  it.live("a lease acquire waits (retried within the budget, past the client's busy timeout) and then succeeds", () =>
    Effect.gen(function*() {
      const file = tempDatabase()
      const lease = yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", paused)
        const scope = yield* Scope.make()
        yield* Scope.provide(writeLockHeldBy(file), scope)
        const acquiring = yield* Effect.forkChild(store.acquire("conv", "worker-1", "1 minute"))
        // Many times the client's busy timeout of 20 ms: without the store's retries it has failed by now.
        yield* Effect.sleep("500 millis")
        expect(acquiring.pollUnsafe()).toBeUndefined()
        yield* Scope.close(scope, Exit.void)
        return yield* Fiber.join(acquiring)
      }).pipe(Effect.provide(storeOn(file, "30 seconds")))
      expect(lease).toMatchObject({ id: "conv", owner: "worker-1" })
    }))

  it.live("past the budget an acquire or a save fails with a StoreError that says it is worth retrying, and writes nothing", () =>
    Effect.gen(function*() {
      const file = tempDatabase()
      yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        const saved = yield* store.save("conv", paused)
        const { acquired, saveFailure } = yield* Effect.scoped(Effect.gen(function*() {
          yield* writeLockHeldBy(file)
          return {
            acquired: yield* Effect.flip(store.acquire("conv", "worker-1", "1 minute")),
            saveFailure: yield* Effect.flip(store.save("conv", [...paused, Messages.user("More.")], { expectedVersion: saved.version }))
          }
        }))
        for (const failure of [acquired, saveFailure]) {
          expect(failure).toMatchObject({ _tag: "StoreError", retryable: true })
          expect(ChatError.isRetryableStoreError(failure)).toBe(true)
          expect(failure.message).toContain("SQLITE_BUSY")
          expect(failure.message).toContain("(worth retrying)")
        }
        // Nothing was written: the conversation is as it was saved, and no run holds its lease.
        const stored = Option.getOrThrow(yield* store.load("conv"))
        expect(stored).toMatchObject({ version: saved.version, messages: paused })
        expect(yield* store.acquire("conv", "worker-2", "1 minute")).toMatchObject({ owner: "worker-2" })
      }).pipe(Effect.provide(storeOn(file, "300 millis")))
    }))

  it.live("the README's worker loop skips a conversation it cannot lease for the lock, and resumes it on the next round", () =>
    Effect.gen(function*() {
      const file = tempDatabase()
      const deleted: Array<ReadonlyArray<string>> = []
      const chat = yield* Chat.make({ tools: files }).pipe(
        Effect.provide(Layer.merge(
          MockLanguageModel.make([MockLanguageModel.text("Deleted a.log.")]).layer,
          files.toLayer({ delete_files: ({ paths }) => Effect.sync(() => (deleted.push(paths), { deleted: paths.length })) })
        ))
      )
      const approve = (messages: Messages.Messages) => Effect.fromResult(Messages.approve(messages, "c1"))
      const [skipped, resumed] = yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", paused)
        // Reads go on under another process's write lock (WAL); the lease acquire cannot.
        const skipped = yield* Effect.scoped(Effect.andThen(writeLockHeldBy(file), Readme.resumeOldest(chat, approve)))
        expect(deleted).toEqual([])
        return [skipped, yield* Readme.resumeOldest(chat, approve)] as const
      }).pipe(Effect.provide(storeOn(file, "200 millis")))
      expect(skipped).toBeUndefined()
      expect(resumed?.outcome._tag).toBe("Complete")
      expect(deleted).toEqual([["a.log"]])
    }))
})
