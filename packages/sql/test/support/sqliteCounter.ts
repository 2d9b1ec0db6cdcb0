/**
 * A child process for the SQLite client's two-process test: on the file
 * `argv[2]`, it prints `{"loaded":true}` and waits (bounded) for the file
 * `argv[4]` to exist, then runs
 * `argv[3]` transactions that each read the counter and write it back plus
 * one (a read then a write: the case where two processes' transactions
 * collide), and prints `{"done":n}`, or `{"error":…}` on the first failure.
 */
import { Effect, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as SqliteClient from "../../src/SqliteClient.js"

const [filename, times, go] = [process.argv[2]!, Number(process.argv[3]), process.argv[4]!]

const increment = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    const [row] = yield* sql<{ readonly n: number }>`SELECT n FROM counter WHERE id = 1`
    yield* sql`UPDATE counter SET n = ${row!.n + 1} WHERE id = 1`
    yield* sql`INSERT INTO increments ${sql.insert({ pid: process.pid, value: row!.n + 1 })}`
  }))
})

const program = Effect.gen(function*() {
  yield* Effect.sync(() => process.stdout.write(JSON.stringify({ loaded: true }) + "\n"))
  yield* Effect.sync(() => fs.existsSync(go)).pipe(
    Effect.repeat({ until: (exists) => exists, schedule: Schedule.spaced("5 millis") }),
    Effect.timeoutOrElse({ duration: "60 seconds", orElse: () => Effect.die(new Error("never told to go")) })
  )
  yield* Effect.repeat(increment, { times: times - 1 })
  return times
}).pipe(Effect.provide(SqliteClient.layer({ filename })))

Effect.runPromise(program).then(
  (done) => process.stdout.write(JSON.stringify({ done }) + "\n"),
  (error) => {
    process.stdout.write(JSON.stringify({ error: String(error) }) + "\n")
    process.exitCode = 1
  }
)
