/**
 * The faults of the soak (`soak.ts`), each on the database it applies to:
 * PostgreSQL restarted as `pg_ctl restart -m immediate` does, its client
 * connections terminated, a worker's connection stalled past its lease, a
 * full disk, a workflow runner cut off from it and later back (a soak of
 * runner processes of its own: `runners.ts`); SQLite locked by another
 * process past its busy timeout, a full disk; on both, the workers' clocks
 * 30 s ahead and behind. The fault
 * machinery is `@chat-ts/sql/testing`'s (`PostgresFaults`, `StallingProxy`),
 * which the store's own tests use too.
 */
import { PostgresFaults, StallingProxy } from "@chat-ts/sql/testing"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { DatabaseSync } from "node:sqlite"
import * as Runners from "./runners.js"
import type { Base, Fault, Injection, Live } from "./soak.js"
import type * as Workers from "./Workers.js"

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, millis)))

/** How long the full disks stay full, and the lock is held. */
export interface Settings {
  readonly fullMillis: number
  /** How long another process holds SQLite's write lock: longer than the busy timeout, within the store's lock retry budget (10 s). */
  readonly lockMillis: number
  /** The SQLite workers' busy timeout (`SqliteClient`'s `busyTimeout`, 5 s by default). */
  readonly busyTimeoutMillis: number
}

const plain = (inject: (live: Live) => Promise<void>, rest: Partial<Injection> = {}) => async (): Promise<Injection> => ({
  inject,
  ...rest
})

/** A write refused for want of space: SQLite's `SQLITE_FULL`, PostgreSQL's file that may not grow. */
const full = (reply: Workers.Reply) =>
  reply.error === "StoreError" && /SQLITE_FULL|could not extend file|No space left/.test(reply.message ?? "")

/** Every worker's clock 30 s off: ahead on even workers, behind on odd ones (the store times leases on the database's clock). */
const skewClocks = (live: Live) => live.broadcast((i) => ({ clockSkewMillis: i % 2 === 0 ? 30_000 : -30_000 }))

/** The first worker connects through a proxy; once it holds a lease, the proxy stalls until the lease has passed by a second. */
const stalled = async (base: Base): Promise<Injection> => {
  const proxy = await StallingProxy.start(base.server!.port)
  const holdsLease = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly n: unknown }>`SELECT COUNT(*) AS n FROM ${sql(base.table)} WHERE lease_owner = 'w0'`
    return Number(rows[0]!.n) > 0
  })
  return {
    env: (i) => (i === 0 ? { DATABASE_URL: StallingProxy.via(proxy, base.server!.url) } : {}),
    inject: async () => {
      for (let tries = 0; tries < 500 && !(await base.parent.runPromise(Effect.orDie(holdsLease))); tries++) await sleep(10)
      proxy.stall()
      await sleep(base.leaseMillis + 1_000)
      proxy.resume()
    },
    close: () => proxy.close()
  }
}

/** How long the other runners work the cut-off runner's shards before it is back. */
const cutHoldMillis = 5_000

/**
 * The first workflow runner reaches the database through a proxy; the proxy stalls until the other runners hold
 * every shard between them (the cut-off runner's shard locks expired) and `cutHoldMillis` more, then flows again.
 */
const runnerCut = async (base: Base): Promise<Injection> => {
  const proxy = await StallingProxy.start(base.server!.port)
  await base.parent.runPromise(Effect.orDie(idleInTransaction(`${cutTransactionMillis}ms`)))
  return {
    env: (i) => (i === 0 ? { DATABASE_URL: StallingProxy.via(proxy, base.server!.url) } : {}),
    inject: async (live) => {
      proxy.stall()
      try {
        const others = live.workers.slice(1)
        await Runners.until(async () => {
          const held = (await Promise.all(others.map((worker) => Runners.shardsOf(worker)))).flat()
          return new Set(held).size === Runners.shardsPerGroup
        }, 120_000, "the other runners taking the cut-off runner's shards")
        await sleep(cutHoldMillis)
      } finally {
        proxy.resume()
      }
    },
    close: async () => {
      await base.parent.runPromise(Effect.orDie(idleInTransaction(undefined)))
      await proxy.close()
    }
  }
}

/**
 * How long the server lets a session sit in an open transaction (`idle_in_transaction_session_timeout`, for the
 * sessions the runners open): a runner cut off mid-transaction otherwise keeps its rows of `cluster_messages`
 * locked while it is away, and the runner that takes its shards does not take up the turns it had read.
 */
const cutTransactionMillis = 2_000

const idleInTransaction = (value: string | undefined) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      value === undefined
        ? "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I RESET idle_in_transaction_session_timeout', current_database()); END $$"
        : `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET idle_in_transaction_session_timeout = %L', current_database(), '${value}'); END $$`
    ))

/**
 * PostgreSQL's disk full: the message rows' file grown past the WAL's 16 MB segments, then no backend may grow a
 * file past its size. The few pages with room left (the seeded conversations') are taken off too while it is full
 * (`fillfactor` 10: a row goes only where a page is nearly empty), as on a disk that has filled up.
 */
const postgresFull = (settings: Settings) => async (base: Base): Promise<Injection> => {
  const messages = `${base.table}_messages`
  const size = await base.parent.runPromise(Effect.orDie(PostgresFaults.fill(messages, "filler", 20_000_000)))
  const fillfactor = (set: boolean) =>
    base.parent.runPromise(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      set ? sql`ALTER TABLE ${sql(messages)} SET (fillfactor = 10)` : sql`ALTER TABLE ${sql(messages)} RESET (fillfactor)`)))
  return {
    inject: async () => {
      await fillfactor(true)
      await base.parent.runPromise(Effect.orDie(PostgresFaults.limitFileSize(size)))
      await sleep(settings.fullMillis)
      await base.parent.runPromise(Effect.orDie(PostgresFaults.limitFileSize("unlimited")))
      await fillfactor(false)
    },
    explains: full,
    bites: full
  }
}

/** SQLite's disk full: every worker's connection may not grow the file past its size now. */
const sqliteFull = (settings: Settings) => async (base: Base): Promise<Injection> => ({
  inject: async (live) => {
    const db = new DatabaseSync(base.filename!)
    const pages = Number((db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count)
    db.close()
    await live.broadcast(() => ({ maxPageCount: pages }))
    await sleep(settings.fullMillis)
    await live.broadcast(() => ({ maxPageCount: 1_073_741_823 }))
  },
  explains: full,
  bites: full
})

/** SQLite locked: another process holds a write transaction on the file for `lockMillis`. */
const sqliteLocked = (settings: Settings) => async (): Promise<Injection> => ({
  env: () => ({ BUSY_TIMEOUT_MILLIS: String(settings.busyTimeoutMillis) }),
  inject: async (live) => {
    if (settings.lockMillis <= settings.busyTimeoutMillis) throw new Error("faults: the lock must outlast the busy timeout")
    const db = new DatabaseSync(live.filename!)
    try {
      db.exec("PRAGMA busy_timeout = 10000")
      db.exec("BEGIN IMMEDIATE")
      await sleep(settings.lockMillis)
      db.exec("COMMIT")
    } finally {
      db.close()
    }
  }
})

/** Every fault, in the order they run. */
export const all = (settings: Settings): ReadonlyArray<Fault> => [
  {
    id: "pg-restart",
    database: "PostgreSQL",
    name: "restarted (`pg_ctl restart -m immediate`: every backend ends, crash recovery)",
    setup: plain((live) => live.server!.restartImmediate())
  },
  {
    id: "pg-terminate",
    database: "PostgreSQL",
    name: "every client connection terminated (`pg_terminate_backend`)",
    setup: plain(async (live) => void (await live.parent.runPromise(Effect.orDie(PostgresFaults.terminateConnections))))
  },
  {
    id: "pg-stall",
    database: "PostgreSQL",
    name: "a worker's connection stalled (loopback proxy) while it holds a lease, released a second after the lease",
    setup: stalled
  },
  {
    id: "pg-full",
    database: "PostgreSQL",
    name: `disk full for ${settings.fullMillis / 1000} s (no server process may grow the message rows' file: \`RLIMIT_FSIZE\`)`,
    setup: postgresFull(settings)
  },
  {
    id: "pg-clock",
    database: "PostgreSQL",
    name: "the workers' clocks 30 s ahead and 30 s behind",
    setup: plain(skewClocks)
  },
  {
    id: "wf-runner-cut",
    database: "PostgreSQL",
    name: `a workflow runner cut off (loopback proxy) until the other runners hold its shards and ${cutHoldMillis / 1000} s more, then back`,
    setup: runnerCut,
    soak: Runners.run
  },
  {
    id: "sqlite-locked",
    database: "SQLite",
    name: `locked by another process for ${settings.lockMillis / 1000} s (past the workers' ${settings.busyTimeoutMillis / 1000} s busy timeout)`,
    setup: sqliteLocked(settings)
  },
  {
    id: "sqlite-full",
    database: "SQLite",
    name: `disk full for ${settings.fullMillis / 1000} s (\`max_page_count\` at the file's size on every worker)`,
    padding: 2_000,
    setup: sqliteFull(settings)
  },
  {
    id: "sqlite-clock",
    database: "SQLite",
    name: "the workers' clocks 30 s ahead and 30 s behind",
    setup: plain(skewClocks)
  }
]
