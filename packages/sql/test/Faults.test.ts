/**
 * The store under two faults of the machine rather than of the program: a
 * full disk (SQLite bounded by `PRAGMA max_page_count`): a save that cannot
 * be written fails typed and the stored state stays the last good one; and
 * workers whose clocks are 60 seconds apart (and decades off the database's): on the database's clock (the
 * default) a lease keeps one holder whatever each worker's clock says.
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { TestClock } from "effect/testing"
import { SqliteClient, SqlConversationStore } from "../src/index.js"
import { pgClient, tempDatabase, uniqueTable } from "./support/Databases.js"

const paused: Messages.Messages = [
  Messages.user("Delete the old logs."),
  {
    role: "assistant",
    parts: [
      { _tag: "ToolCall", id: "c1", name: "delete_files", arguments: "{\"paths\":[\"a.log\"]}", status: { _tag: "AwaitingApproval" } }
    ]
  }
]

describe("SqlConversationStore on a full disk (SQLite, max_page_count)", () => {
  it.effect("a save that cannot be written is a StoreError (SQLITE_FULL, not retryable); the stored state stays the last good one", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const sql = yield* SqlClient.SqlClient
      const saved = yield* store.save("conv", paused)
      // The disk is full: the file may not grow by one page.
      const pages = yield* sql<{ readonly page_count: number }>`PRAGMA page_count`
      yield* sql.unsafe(`PRAGMA max_page_count = ${pages[0]!.page_count}`)
      const big = [...paused, Messages.user("x".repeat(200_000))]
      const failure = yield* Effect.flip(store.save("conv", big, { expectedVersion: saved.version }))
      expect(failure).toMatchObject({ _tag: "StoreError" })
      expect(failure._tag === "StoreError" && failure.retryable).toBeFalsy()
      expect(failure.message).toContain("SQLITE_FULL")
      // Nothing of the failed save is stored.
      expect(Option.getOrThrow(yield* store.load("conv"))).toMatchObject({ version: saved.version, messages: paused })
      // Space again: the next save goes on from the last good version.
      yield* sql.unsafe(`PRAGMA max_page_count = 1073741823`)
      expect(yield* store.save("conv", big, { expectedVersion: saved.version })).toMatchObject({ version: saved.version + 1 })
    }).pipe(Effect.provide(
      SqlConversationStore.layer().pipe(
        Layer.provideMerge(SqlConversationStore.layerMigrate()),
        Layer.provideMerge(SqliteClient.layer({ filename: tempDatabase() })),
        Layer.orDie
      )
    )))
})

const databases = [
  ["SQLite", () => Layer.orDie(SqliteClient.layer({ filename: tempDatabase() }))],
  ["PostgreSQL", () => pgClient()]
] as const

for (const [name, client] of databases) {
  describe(`SqlConversationStore on ${name}: workers whose clocks are 60 s apart`, () => {
    it.effect("on the database's clock a lease keeps one holder: a worker whose clock is 60 s ahead cannot take the lease of one whose clock is behind", () => {
      const table = uniqueTable()
      return Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused)
        yield* store.save("b", paused)
        // The worker's clock (TestClock) is decades behind the database's; the "fast" worker is 60 s ahead of the "slow" one.
        const slow = yield* store.acquire("a", "slow", "10 seconds")
        yield* TestClock.adjust("60 seconds")
        const fast = yield* store.acquire("b", "fast", "10 seconds")
        // Each lease ends 10 s after the database's now, whatever the worker's clock said.
        for (const lease of [slow, fast]) {
          expect(Math.abs(lease.expiresAt - (Date.now() + 10_000))).toBeLessThan(5_000)
        }
        // The fast worker's clock says "a"'s lease ended 50 s ago: on the database's clock it is still held.
        expect(yield* Effect.flip(store.acquire("a", "fast", "10 seconds"))).toMatchObject({ _tag: "ConversationBusy", id: "a" })
        // Saves and renewals under each lease go on.
        expect(yield* store.renew(slow, "10 seconds")).toMatchObject({ owner: "slow" })
        yield* store.save("b", paused, { lease: fast })
      }).pipe(Effect.provide(
        SqlConversationStore.layer({ table }).pipe(
          Layer.provideMerge(SqlConversationStore.layerMigrate({ table })),
          Layer.provideMerge(client()),
          Layer.orDie
        )
      ))
    })
  })
}
