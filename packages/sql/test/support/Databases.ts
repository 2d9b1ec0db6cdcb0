/**
 * The databases the store is tested on, as layers: the in-memory store, a
 * SQLite file and the test run's PostgreSQL. Each call gives a fresh store
 * (its own file, or its own tables), migrated, with leases on Effect's
 * `Clock` so `TestClock` drives them.
 */
import { ConversationStore } from "@chat-ts/core"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import * as SqlClientTag from "effect/sql/SqlClient"
import type * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { inject } from "vitest"
import { SqliteClient, SqlConversationStore } from "../../src/index.js"

/** A fresh SQLite database file. */
export const tempDatabase = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-sql-")), "store.db")

/** The test run's PostgreSQL. */
export const postgresUrl = () => inject("postgresUrl")

let tables = 0
/** A table name no other test of this process uses. */
export const uniqueTable = () => `t_${process.pid}_${Date.now().toString(36)}_${++tables}`

/** A client on a fresh SQLite file. */
export const sqliteClient = (filename = tempDatabase()): Layer.Layer<SqlClient.SqlClient> =>
  Layer.orDie(SqliteClient.layer({ filename }))

/** A client on the test run's PostgreSQL. */
export const pgClient = (url = postgresUrl()): Layer.Layer<SqlClient.SqlClient, unknown> =>
  PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })

/** A migrated store with its own tables on this client, its leases on Effect's `Clock`; the client stays provided. */
export const migratedStore = (client: Layer.Layer<SqlClient.SqlClient, unknown>, options: SqlConversationStore.Options = {}) => {
  const settings: SqlConversationStore.Options = { table: uniqueTable(), clock: "effect", ...options }
  return SqlConversationStore.layer(settings).pipe(
    Layer.provideMerge(SqlConversationStore.layerMigrate(settings)),
    Layer.provideMerge(client),
    Layer.orDie
  )
}

/** The three stores every contract test runs on. */
export const stores: ReadonlyArray<readonly [string, () => Layer.Layer<ConversationStore.ConversationStore>]> = [
  ["memory", () => ConversationStore.layerMemory],
  ["SQLite", () => migratedStore(sqliteClient())],
  ["PostgreSQL", () => migratedStore(pgClient())]
]

/** Creates an empty database on the test run's PostgreSQL and gives its URL. */
export const freshPostgresDatabase: Effect.Effect<string> = Effect.gen(function*() {
  const sql = yield* SqlClientTag.SqlClient
  const name = uniqueTable()
  yield* sql`CREATE DATABASE ${sql(name)}`
  const url = new URL(postgresUrl())
  url.pathname = `/${name}`
  return url.href
}).pipe(Effect.provide(pgClient()), Effect.orDie)
