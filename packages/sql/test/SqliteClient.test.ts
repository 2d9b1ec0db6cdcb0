/**
 * The SQLite client on `node:sqlite`: statements, transactions and
 * savepoints, errors classified with SQLite's own codes, values it binds, and
 * two OS processes writing one file in colliding transactions.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import * as os from "node:os"
import * as SqliteClient from "../src/SqliteClient.js"

/** A fresh SQLite database file. */
const tempDatabase = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-sqlite-")), "test.db")

const client = (filename = tempDatabase(), options: Partial<SqliteClient.Options> = {}) =>
  Layer.orDie(SqliteClient.layer({ filename, ...options }))

const withTable = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.as(sql`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, note TEXT)`, sql))

/** The reason of a failed statement's `SqlError`. */
const reasonOf = <A, E extends { readonly reason?: unknown }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => error.reason as { readonly _tag: string; readonly cause: unknown })

describe("SqliteClient", () => {
  it.effect("runs statements: insert with returning, select with `in`, values, and the number of rows it read", () =>
    Effect.gen(function*() {
      const sql = yield* withTable
      const inserted = yield* sql`INSERT INTO items ${sql.insert([{ name: "a" }, { name: "b" }, { name: "c" }])} RETURNING id, name`
      expect(inserted).toEqual([{ id: 1, name: "a" }, { id: 2, name: "b" }, { id: 3, name: "c" }])
      expect(yield* sql`SELECT name FROM items WHERE id IN ${sql.in([1, 3])} ORDER BY id`).toEqual([{ name: "a" }, { name: "c" }])
      expect(yield* sql`SELECT id, name FROM items ORDER BY id DESC`.values).toEqual([[3, "c"], [2, "b"], [1, "a"]])
      expect(yield* sql`SELECT count(*) AS n FROM items`).toEqual([{ n: 3 }])
      expect(sql.onDialectOrElse({ sqlite: () => "sqlite", orElse: () => "other" })).toBe("sqlite")
    }).pipe(Effect.provide(client())))

  it.effect("binds undefined as NULL, a Date as its ISO text, booleans as 1 and 0, and bigints; reads BIGINTs safely when asked", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5))
      expect(yield* sql`SELECT ${undefined} AS u, ${at} AS d, ${true} AS t, ${false} AS f, ${2n ** 40n} AS b`).toEqual([
        { u: null, d: "2026-01-02T03:04:05.000Z", t: 1, f: 0, b: 2 ** 40 }
      ])
      const big = yield* sql`SELECT 9007199254740993 AS n`.pipe(Effect.provideService(SqlClient.SafeIntegers, true))
      expect(big).toEqual([{ n: 9007199254740993n }])
    }).pipe(Effect.provide(client())))

  it.effect("a transaction commits on success and rolls back on failure", () =>
    Effect.gen(function*() {
      const sql = yield* withTable
      yield* sql.withTransaction(sql`INSERT INTO items ${sql.insert({ name: "kept" })}`)
      const failed = yield* Effect.exit(sql.withTransaction(Effect.andThen(
        sql`INSERT INTO items ${sql.insert({ name: "dropped" })}`,
        Effect.fail("boom")
      )))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* sql`SELECT name FROM items`).toEqual([{ name: "kept" }])
    }).pipe(Effect.provide(client())))

  it.effect("a nested transaction is a savepoint: its rollback keeps the outer transaction's rows", () =>
    Effect.gen(function*() {
      const sql = yield* withTable
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO items ${sql.insert({ name: "outer" })}`
        const inner = yield* Effect.exit(sql.withTransaction(Effect.andThen(
          sql`INSERT INTO items ${sql.insert({ name: "inner" })}`,
          Effect.fail("inner failed")
        )))
        expect(Exit.isFailure(inner)).toBe(true)
        yield* sql.withTransaction(sql`INSERT INTO items ${sql.insert({ name: "inner, committed" })}`)
      }))
      expect(yield* sql`SELECT name FROM items ORDER BY id`).toEqual([{ name: "outer" }, { name: "inner, committed" }])
    }).pipe(Effect.provide(client())))

  it.effect("a unique or primary key conflict is a UniqueViolation, other constraints a ConstraintError, each with SQLite's code", () =>
    Effect.gen(function*() {
      const sql = yield* withTable
      yield* sql`INSERT INTO items ${sql.insert({ id: 1, name: "a" })}`
      const unique = yield* reasonOf(sql`INSERT INTO items ${sql.insert({ name: "a" })}`)
      expect(unique).toMatchObject({ _tag: "UniqueViolation", constraint: "items.name" })
      expect(unique.cause).toBeInstanceOf(SqliteClient.SqliteError)
      expect(unique.cause).toMatchObject({ code: "SQLITE_CONSTRAINT_UNIQUE", errno: 2067, message: "UNIQUE constraint failed: items.name" })
      const primary = yield* reasonOf(sql`INSERT INTO items ${sql.insert({ id: 1, name: "b" })}`)
      expect(primary).toMatchObject({ _tag: "UniqueViolation", constraint: "items.id", cause: { code: "SQLITE_CONSTRAINT_PRIMARYKEY" } })
      const notNull = yield* reasonOf(sql`INSERT INTO items (id) VALUES (5)`)
      expect(notNull).toMatchObject({ _tag: "ConstraintError", cause: { code: "SQLITE_CONSTRAINT_NOTNULL", errno: 1299 } })
      const missing = yield* reasonOf(sql`SELECT * FROM nowhere`)
      expect(missing.cause).toMatchObject({ code: "SQLITE_ERROR", errno: 1, message: "no such table: nowhere" })
      // The failed statements changed nothing.
      expect(yield* sql`SELECT id, name FROM items`).toEqual([{ id: 1, name: "a" }])
    }).pipe(Effect.provide(client())))

  it.effect("a database it cannot open fails the layer with a ConnectionError; a read-only one refuses writes", () =>
    Effect.gen(function*() {
      const nowhere = path.join(tempDatabase(), "no", "such", "dir.db")
      const open = yield* Effect.flip(Effect.provide(SqlClient.SqlClient, SqliteClient.layer({ filename: nowhere })))
      expect(open.reason).toMatchObject({ _tag: "ConnectionError", cause: { code: "SQLITE_CANTOPEN" } })

      const filename = tempDatabase()
      yield* Effect.provide(withTable, client(filename))
      const write = yield* reasonOf(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO items (name) VALUES ('x')`)).pipe(
        Effect.provide(client(filename, { readonly: true }))
      )
      expect(write.cause).toMatchObject({ code: "SQLITE_READONLY" })
    }))

  it.effect("transactions of many fibers on one client take turns", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)`
      yield* sql`INSERT INTO counter VALUES (1, 0)`
      const increment = sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql<{ readonly n: number }>`SELECT n FROM counter WHERE id = 1`
        yield* Effect.yieldNow
        yield* sql`UPDATE counter SET n = ${row!.n + 1} WHERE id = 1`
      }))
      yield* Effect.all(Array.from({ length: 50 }, () => increment), { concurrency: "unbounded" })
      expect(yield* sql`SELECT n FROM counter`).toEqual([{ n: 50 }])
    }).pipe(Effect.provide(client())))
})

const counter = fileURLToPath(new URL("./support/sqliteCounter.ts", import.meta.url))
const tsx = fileURLToPath(new URL("../../../node_modules/tsx/dist/loader.mjs", import.meta.url))

interface Counter {
  /** Resolves when the process is ready to go. */
  readonly loaded: Promise<void>
  /** What it printed last: `{ done }` or `{ error }`. */
  readonly result: Promise<{ readonly done?: number; readonly error?: string }>
}

/** Starts the counter process on `file` (bounded). */
const startCounter = (file: string, times: number, go: string): Counter => {
  const child = spawn(process.execPath, ["--import", tsx, counter, file, String(times), go], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    stdio: ["ignore", "pipe", "inherit"]
  })
  let onLoaded: () => void = () => undefined
  const loaded = new Promise<void>((resolve) => (onLoaded = resolve))
  const lines: Array<string> = []
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    if (line === JSON.stringify({ loaded: true })) onLoaded()
    else lines.push(line)
  })
  const result = new Promise<{ readonly done?: number; readonly error?: string }>((resolve, reject) => {
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error("the counter process did not end in 90 s"))), 90_000)
    child.once("error", reject)
    child.once("close", () => {
      clearTimeout(timer)
      onLoaded()
      try {
        resolve(JSON.parse(lines.at(-1) ?? ""))
      } catch {
        reject(new Error(`the counter process printed ${JSON.stringify(lines)}`))
      }
    })
  })
  return { loaded, result }
}

describe("SqliteClient in two processes on one file", () => {
  it("transactions that read then write, from two processes at once, all commit, one after the other", async () => {
    const file = tempDatabase()
    await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)`
      yield* sql`CREATE TABLE increments (pid INTEGER NOT NULL, value INTEGER NOT NULL UNIQUE)`
      yield* sql`INSERT INTO counter VALUES (1, 0)`
    }).pipe(Effect.provide(client(file))))
    const go = `${file}.go`
    const counters = [startCounter(file, 300, go), startCounter(file, 300, go)]
    // Both processes have opened the file; they start their loops at the same moment.
    await Promise.all(counters.map((c) => c.loaded))
    fs.writeFileSync(go, "")
    expect(await Promise.all(counters.map((c) => c.result))).toEqual([{ done: 300 }, { done: 300 }])
    const rows = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return {
        counter: yield* sql`SELECT n FROM counter`,
        byPid: yield* sql`SELECT count(*) AS n FROM increments GROUP BY pid`,
        values: yield* sql`SELECT min(value) AS low, max(value) AS high, count(DISTINCT value) AS distinct_values FROM increments`
      }
    }).pipe(Effect.provide(client(file))))
    // No increment was lost: every transaction saw the one before it, whichever process ran it.
    expect(rows.counter).toEqual([{ n: 600 }])
    expect(rows.byPid).toEqual([{ n: 300 }, { n: 300 }])
    expect(rows.values).toEqual([{ low: 1, high: 600, distinct_values: 600 }])
  }, 120_000)
})
