/**
 * One migrating process at a time: on PostgreSQL, an effect run in one
 * transaction that first takes a transaction-level advisory lock (released at
 * commit or rollback, or when a process that dies loses its session), so it
 * needs no second connection: a pool of one works. Other dialects run it as
 * is (SQLite serializes writers itself).
 *
 * Under the lock it creates the `Migrator`'s history tables when they are
 * missing (PostgreSQL): the `Migrator`'s own creation recovers from a failed
 * `CREATE TABLE` by querying again, which an aborted transaction cannot, and
 * would report "current transaction is aborted" instead of, say, a missing
 * grant.
 *
 * `SqlConversationStore`'s migrations and `@chat-ts/workflow`'s cluster
 * tables (`SocketRunner.layerMigrations`) both run under it, each with its own
 * lock name, so neither waits for the other. It lives here, as its own small
 * entry point (`@chat-ts/sql/MigrationLock`, which loads nothing but `effect`),
 * because both packages reach it at the least cost: core may use only the
 * modules Effect marks stable, and `effect/sql` is not one of them; the
 * workflow's users keep their cluster on the same SQL database as their turns
 * and install `@chat-ts/sql` anyway, which depends on nothing they do not
 * already have (`@chat-ts/core`, `effect`).
 *
 * @since 0.3.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"

/** How long a process waits for another one's migrations before giving up. */
export const defaultTimeout: Duration.Duration = Duration.minutes(5)

/** Settings of `withMigrationLock`. */
export interface Options {
  /** The `Migrator` history tables the effect's migrators use, created first when missing (PostgreSQL). */
  readonly historyTables?: ReadonlyArray<string> | undefined
  /** How long to wait for the lock (default 5 minutes). */
  readonly timeout?: Duration.Duration | undefined
}

const timedOut = (name: string, timeout: Duration.Duration) =>
  new SqlError.SqlError({
    reason: new SqlError.LockTimeoutError({
      cause: new Error(`advisory lock '${name}' not granted within ${Duration.format(timeout)}`),
      message: `Another process held the migration lock '${name}' for longer than ${Duration.format(timeout)}`,
      operation: "migrate"
    })
  })

/** Takes the lock `name` (a 64-bit key hashed from it) for the current transaction, polling every 100 ms, for at most `timeout`. */
const lock = (sql: SqlClient.SqlClient, name: string, timeout: Duration.Duration) =>
  sql<{ readonly locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${name}, 0)) AS locked`.pipe(
    Effect.map((rows) => rows[0]?.locked === true),
    Effect.repeat({ until: (locked) => locked, schedule: Schedule.spaced("100 millis") }),
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(timedOut(name, timeout)) })
  )

/** Creates a `Migrator` history table (as the `Migrator` creates it on PostgreSQL) unless it exists. */
const ensureHistoryTable = (sql: SqlClient.SqlClient, table: string) =>
  Effect.flatMap(
    sql`SELECT 1 AS found WHERE to_regclass(${sql`${sql(table)}`.compile(true)[0]}) IS NOT NULL`,
    (found) =>
      found.length > 0 ? Effect.void : Effect.asVoid(sql`CREATE TABLE ${sql(table)} (
  migration_id integer primary key,
  created_at timestamp with time zone not null default now(),
  name text not null
)`)
  )

/**
 * Runs `effect` while this process holds the migration lock `name` (PostgreSQL: in one transaction,
 * whose statements, nested transactions as savepoints, all run on its connection), or as is (other dialects).
 */
export const withMigrationLock = <A, E, R>(
  name: string,
  effect: Effect.Effect<A, E, R>,
  options: Options = {}
): Effect.Effect<A, E | SqlError.SqlError, R | SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.onDialectOrElse({
      pg: () =>
        sql.withTransaction(
          lock(sql, name, options.timeout ?? defaultTimeout).pipe(
            Effect.andThen(Effect.forEach(options.historyTables ?? [], (table) => ensureHistoryTable(sql, table), { discard: true })),
            Effect.andThen(effect)
          )
        ),
      orElse: () => effect
    }))
