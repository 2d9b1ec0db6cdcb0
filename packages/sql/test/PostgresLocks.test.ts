/**
 * The store on PostgreSQL when another connection holds a conversation's row
 * lock: a statement refused by `lock_timeout` (`55P03`) is retried inside the
 * store within its budget; past it, and when the store's connection is
 * terminated (`pg_terminate_backend`, `57P01`), the failure is a `StoreError`
 * with `retryable: true`. The test run's real PostgreSQL; the real clock.
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { type Duration, Deferred, Effect, Fiber, Layer, Redacted, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { SqlConversationStore } from "../src/index.js"
import { postgresUrl, uniqueTable } from "./support/Databases.js"

const paused: Messages.Messages = [Messages.user("Delete the old logs.")]

/** A migrated store on its own table, on a client named `application` whose statements wait `lockTimeout` for a lock. */
const storeOn = (table: string, application: string, budget: Duration.Input, lockTimeout?: string) =>
  SqlConversationStore.layer({ table, lockRetryBudget: budget }).pipe(
    Layer.provideMerge(SqlConversationStore.layerMigrate({ table })),
    Layer.provideMerge(PgClient.layer({
      url: Redacted.make(postgresUrl()),
      maxConnections: 2,
      applicationName: application,
      ...(lockTimeout === undefined ? {} : { startupParameters: { lock_timeout: lockTimeout } })
    })),
    Layer.orDie
  )

/** Other connections, for holding locks and terminating backends, open until the test's scope closes. */
const otherClient = Layer.build(PgClient.layer({ url: Redacted.make(postgresUrl()), maxConnections: 2 }).pipe(Layer.orDie))

/** Holds the row lock of `id` in `table` (from another connection) until `release` completes. */
const holdRowLock = (table: string, id: string, release: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const locked = yield* Deferred.make<void>()
    const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT id FROM ${sql(table)} WHERE id = ${id} FOR UPDATE`
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    })))
    yield* Deferred.await(locked).pipe(Effect.timeout("30 seconds"))
    return holder
  })

describe("SqlConversationStore on PostgreSQL under a held row lock", () => {
  it.live("an acquire refused by lock_timeout is retried within the budget and succeeds once the lock is released", () =>
    Effect.gen(function*() {
      const table = uniqueTable()
      const other = yield* otherClient
      const lease = yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", paused)
        const release = yield* Deferred.make<void>()
        const holder = yield* holdRowLock(table, "conv", release).pipe(Effect.provide(other))
        const acquiring = yield* Effect.forkChild(store.acquire("conv", "worker-1", "1 minute"))
        // Many times the 50 ms lock timeout: without the store's retries it has failed by now.
        yield* Effect.sleep("500 millis")
        expect(acquiring.pollUnsafe()).toBeUndefined()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        return yield* Fiber.join(acquiring)
      }).pipe(Effect.provide(storeOn(table, `${table}_store`, "30 seconds", "50ms")))
      expect(lease).toMatchObject({ id: "conv", owner: "worker-1" })
    }).pipe(Effect.scoped))

  it.live("past the budget the acquire is a StoreError worth retrying (55P03), and no lease was taken", () =>
    Effect.gen(function*() {
      const table = uniqueTable()
      const other = yield* otherClient
      yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", paused)
        const release = yield* Deferred.make<void>()
        const holder = yield* holdRowLock(table, "conv", release).pipe(Effect.provide(other))
        const failure = yield* Effect.flip(store.acquire("conv", "worker-1", "1 minute"))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        expect(failure).toMatchObject({ _tag: "StoreError", retryable: true })
        expect(failure.message).toContain("55P03")
        expect(yield* store.acquire("conv", "worker-2", "1 minute")).toMatchObject({ owner: "worker-2" })
      }).pipe(Effect.provide(storeOn(table, `${table}_store`, "300 millis", "50ms")))
    }).pipe(Effect.scoped))

  it.live("a statement whose connection is terminated (pg_terminate_backend) is a StoreError worth retrying; the next one runs", () =>
    Effect.gen(function*() {
      const table = uniqueTable()
      const other = yield* otherClient
      const application = `${table}_store`
      yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", paused)
        const release = yield* Deferred.make<void>()
        const holder = yield* holdRowLock(table, "conv", release).pipe(Effect.provide(other))
        const acquiring = yield* Effect.forkChild(Effect.flip(store.acquire("conv", "worker-1", "1 minute")))
        // The store's statement waits for the row lock; its connection is cut while it waits.
        const terminated = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ readonly terminated: boolean }>`SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
              WHERE application_name = ${application} AND wait_event_type = 'Lock'`.pipe(
            Effect.repeat({ until: (rows) => rows.length > 0, schedule: Schedule.spaced("20 millis") }),
            Effect.timeout("30 seconds")
          )
        }).pipe(Effect.provide(other))
        expect(terminated).toEqual([{ terminated: true }])
        const failure = yield* Fiber.join(acquiring)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        expect(failure).toMatchObject({ _tag: "StoreError", retryable: true })
        // Nothing was taken, and the store goes on on a new connection.
        expect(yield* store.acquire("conv", "worker-2", "1 minute")).toMatchObject({ owner: "worker-2" })
      }).pipe(Effect.provide(storeOn(table, application, "30 seconds")))
    }).pipe(Effect.scoped))
})
