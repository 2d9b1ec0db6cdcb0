/**
 * The store under two faults of the machine rather than of the program: a
 * full disk (SQLite bounded by `PRAGMA max_page_count`): a save that cannot
 * be written fails typed and the stored state stays the last good one; and
 * workers whose clocks are 60 seconds apart (and decades off the database's): on the database's clock (the
 * default) a lease keeps one holder whatever each worker's clock says; and a
 * worker whose connection stalls (a loopback proxy that stops forwarding)
 * while it holds a lease: its save, delivered after the lease passed, is refused.
 */
import { ConversationStore, Messages, Worker } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { TestClock } from "effect/testing"
import { SqliteClient, SqlConversationStore } from "../src/index.js"
import { StallingProxy } from "../src/testing/index.js"
import { pgClient, postgresUrl, tempDatabase, uniqueTable } from "./support/Databases.js"

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

/** A stalling proxy to `port`, closed with the scope. */
const stallingProxy = (port: number) =>
  Effect.acquireRelease(Effect.promise(() => StallingProxy.start(port)), (proxy) => Effect.promise(() => proxy.close()))

describe("SqlConversationStore on PostgreSQL: a worker whose connection stalls while it holds a lease", () => {
  it.live("after the lease passed another worker takes it; the stalled worker's save, delivered late, is refused and changes nothing", () =>
    Effect.scoped(Effect.gen(function*() {
      const table = uniqueTable()
      const url = new URL(postgresUrl())
      const proxy = yield* stallingProxy(Number(url.port))
      const storeVia = (href: string) =>
        Layer.build(SqlConversationStore.layer({ table }).pipe(
          Layer.provideMerge(SqlConversationStore.layerMigrate({ table })),
          Layer.provideMerge(pgClient(href)),
          Layer.orDie
        ))
      const stalledWorker = Context.get(yield* storeVia(StallingProxy.via(proxy, url.href)), ConversationStore.ConversationStore)
      const otherWorker = Context.get(yield* storeVia(url.href), ConversationStore.ConversationStore)
      const saved = yield* otherWorker.save("conv", paused)
      const lease = yield* stalledWorker.acquire("conv", "stalled", "1 second")
      proxy.stall()
      const late = yield* Effect.forkChild(Effect.flip(
        stalledWorker.save("conv", [...paused, Messages.user("From the stalled worker.")], { expectedVersion: saved.version, lease })
      ))
      // The lease passes on the database's clock while the stalled worker's save waits in the proxy.
      const taken = yield* otherWorker.acquire("conv", "other", "1 minute").pipe(
        Effect.retry({ while: (error) => error._tag === "ConversationBusy", schedule: Schedule.spaced("100 millis"), times: 100 })
      )
      proxy.resume()
      // Refused on the lease it lost (another run holds it now), a refusal a worker tells from real errors.
      const refused = yield* Fiber.join(late)
      expect(refused).toMatchObject({ _tag: "ConversationBusy", id: "conv" })
      expect(Worker.isBusy(refused)).toBe(true)
      expect(Option.getOrThrow(yield* otherWorker.load("conv"))).toMatchObject({ version: saved.version, messages: paused })
      const theirs = [...paused, Messages.user("From the worker that took the lease.")]
      yield* otherWorker.save("conv", theirs, { expectedVersion: saved.version, lease: taken })
      expect(Option.getOrThrow(yield* otherWorker.load("conv"))).toMatchObject({ version: saved.version + 1, messages: theirs })
      // Its renewal and release under the lost lease change nothing either.
      expect(yield* Effect.flip(stalledWorker.renew(lease, "1 minute"))).toMatchObject({ _tag: "ConversationBusy" })
      yield* stalledWorker.release(lease)
      expect(yield* Effect.flip(stalledWorker.acquire("conv", "third", "1 minute"))).toMatchObject({ _tag: "ConversationBusy" })
    })))
})
