/**
 * A SQLite `SqlClient` on Node's built-in `node:sqlite` (`DatabaseSync`), for
 * `effect/sql` 4.1, where no official SQLite driver loads.
 *
 * One connection per client, shared through a semaphore
 * (`SqlClient.makeSqliteAcquirers`), statements compiled with
 * `Statement.makeCompilerSqlite`. Made for several processes on one file:
 * WAL journal, a busy timeout (a writer waits for another process's write
 * instead of failing at once), and transactions that start with
 * `BEGIN IMMEDIATE`, so two processes reading then writing in transactions
 * queue up instead of one failing with `SQLITE_BUSY`. Nested transactions are
 * savepoints.
 *
 * Driver errors keep SQLite's own code: the `cause` of a `SqlError`'s reason
 * is a `SqliteError` whose `code` is the SQLite name (`SQLITE_ERROR`,
 * `SQLITE_CONSTRAINT_UNIQUE`…) and `errno` its number; a unique or primary key
 * conflict is a `UniqueViolation`, as on PostgreSQL.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlConnection from "effect/sql/SqlConnection"
import * as SqlError from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import * as Stream from "effect/Stream"
import type { DatabaseSync, StatementSync } from "node:sqlite"

/** Settings of a client. */
export interface Options {
  /** The database file (`:memory:` for a private in-memory database). */
  readonly filename: string
  /** Open the file read-only (default false). */
  readonly readonly?: boolean | undefined
  /** How long a statement waits for another connection's lock before failing with `SQLITE_BUSY` (default 5 seconds). */
  readonly busyTimeout?: Duration.Input | undefined
  /** Keep SQLite's default rollback journal instead of WAL (default false: WAL, so readers do not block the writer). */
  readonly disableWAL?: boolean | undefined
  /** Extra attributes of every statement's span. */
  readonly spanAttributes?: Record<string, unknown> | undefined
  /** Renames result columns (e.g. snake_case to camelCase). */
  readonly transformResultNames?: ((name: string) => string) | undefined
  /** Renames identifiers in queries (e.g. camelCase to snake_case). */
  readonly transformQueryNames?: ((name: string) => string) | undefined
}

/** The name of SQLite's primary result codes, by number. */
const primaryCodes: ReadonlyArray<string> = [
  "OK", "ERROR", "INTERNAL", "PERM", "ABORT", "BUSY", "LOCKED", "NOMEM", "READONLY", "INTERRUPT",
  "IOERR", "CORRUPT", "NOTFOUND", "FULL", "CANTOPEN", "PROTOCOL", "EMPTY", "SCHEMA", "TOOBIG",
  "CONSTRAINT", "MISMATCH", "MISUSE", "NOLFS", "AUTH", "FORMAT", "RANGE", "NOTADB", "NOTICE", "WARNING"
]

/** The extended result codes a caller may want to tell apart (the others are named by their primary code). */
const extendedCodes: ReadonlyMap<number, string> = new Map([
  [257, "ERROR_MISSING_COLLSEQ"], [513, "ERROR_RETRY"], [769, "ERROR_SNAPSHOT"],
  [261, "BUSY_RECOVERY"], [517, "BUSY_SNAPSHOT"], [773, "BUSY_TIMEOUT"],
  [262, "LOCKED_SHAREDCACHE"], [518, "LOCKED_VTAB"],
  [264, "READONLY_RECOVERY"], [520, "READONLY_CANTLOCK"], [776, "READONLY_ROLLBACK"],
  [1032, "READONLY_DBMOVED"], [1288, "READONLY_CANTINIT"], [1544, "READONLY_DIRECTORY"],
  [270, "CANTOPEN_NOTEMPDIR"], [526, "CANTOPEN_ISDIR"], [782, "CANTOPEN_FULLPATH"],
  [1038, "CANTOPEN_CONVPATH"], [1550, "CANTOPEN_SYMLINK"],
  [275, "CONSTRAINT_CHECK"], [531, "CONSTRAINT_COMMITHOOK"], [787, "CONSTRAINT_FOREIGNKEY"],
  [1043, "CONSTRAINT_FUNCTION"], [1299, "CONSTRAINT_NOTNULL"], [1555, "CONSTRAINT_PRIMARYKEY"],
  [1811, "CONSTRAINT_TRIGGER"], [2067, "CONSTRAINT_UNIQUE"], [2323, "CONSTRAINT_VTAB"],
  [2579, "CONSTRAINT_ROWID"], [2835, "CONSTRAINT_PINNED"], [3091, "CONSTRAINT_DATATYPE"]
])

/** SQLite's name of a result code (`2067` is `SQLITE_CONSTRAINT_UNIQUE`). */
export const codeName = (errno: number): string =>
  `SQLITE_${extendedCodes.get(errno) ?? primaryCodes[errno & 0xff] ?? "UNKNOWN"}`

/** An error of SQLite, as the driver reported it, with SQLite's code. */
export class SqliteError extends Error {
  /** SQLite's name of the code, e.g. `SQLITE_CONSTRAINT_UNIQUE`. */
  readonly code: string
  /** SQLite's (extended) result code, e.g. 2067. */
  readonly errno: number
  /** SQLite's description of the code, e.g. `constraint failed`. */
  readonly errstr: string | undefined

  constructor(message: string, errno: number, errstr: string | undefined, cause: unknown) {
    super(message, { cause })
    this.name = "SqliteError"
    this.code = codeName(errno)
    this.errno = errno
    this.errstr = errstr
  }
}

/** The driver's error with SQLite's code: `node:sqlite` reports it as `errcode`, under a generic `code`. */
const driverError = (cause: unknown): unknown => {
  if (typeof cause !== "object" || cause === null || !("errcode" in cause) || typeof cause.errcode !== "number") {
    return cause
  }
  const message = cause instanceof Error ? cause.message : String(cause)
  const errstr = "errstr" in cause && typeof cause.errstr === "string" ? cause.errstr : undefined
  return new SqliteError(message, cause.errcode, errstr, cause)
}

/** A `SqlError` for a failure of the driver; unique and primary key conflicts are `UniqueViolation`s. */
export const sqlError = (cause: unknown, message: string, operation: string): SqlError.SqlError => {
  const error = driverError(cause)
  if (error instanceof SqliteError && error.errno === 1555) {
    const constraint = /constraint failed: (.+)$/.exec(error.message)?.[1]?.trim() ?? "unknown"
    return new SqlError.SqlError({ reason: new SqlError.UniqueViolation({ cause: error, message, operation, constraint }) })
  }
  return new SqlError.SqlError({ reason: SqlError.classifySqliteError(error, { message, operation }) })
}

/** What SQLite can bind: `undefined` is NULL, a `Date` its ISO text, a boolean 1 or 0. */
const bindable = (params: ReadonlyArray<unknown>): Array<never> =>
  params.map((value) =>
    value === undefined ? null : value instanceof Date ? value.toISOString() : typeof value === "boolean" ? Number(value) : value
  ) as Array<never>

/** How many prepared statements a connection keeps. */
const preparedCapacity = 200

/** Opens the database in `scope` and gives its one connection. */
const connect = (options: Options, scope: Scope.Scope) =>
  Effect.gen(function*() {
    // Loaded here, not at import: Node 22 prints an ExperimentalWarning when node:sqlite loads,
    // which users of @chat-ts/sql on PostgreSQL should never see.
    const sqlite = yield* Effect.tryPromise({
      try: () => import("node:sqlite"),
      catch: (cause) => sqlError(cause, "node:sqlite is not available (Node 22.5 or later has it)", "connect")
    })
    const db = yield* Effect.try({
      try: () =>
        new sqlite.DatabaseSync(options.filename, {
          readOnly: options.readonly ?? false,
          timeout: Duration.toMillis(Duration.fromInputUnsafe(options.busyTimeout ?? Duration.seconds(5)))
        }),
      catch: (cause) => sqlError(cause, `Failed to open ${options.filename}`, "connect")
    })
    yield* Scope.addFinalizer(scope, Effect.sync(() => db.isOpen && db.close()))
    if (options.disableWAL !== true && options.readonly !== true) {
      yield* Effect.try({
        try: () => db.exec("PRAGMA journal_mode = WAL"),
        catch: (cause) => sqlError(cause, "Failed to enable WAL", "connect")
      })
    }
    return { db, connection: connection(db) }
  })

/** A statement's rows as plain objects (a statement without result columns runs and gives none). */
const allRows = (statement: StatementSync, params: Array<never>): ReadonlyArray<object> => {
  if (statement.columns().length === 0) {
    statement.run(...params)
    return []
  }
  return statement.all(...params).map((row) => ({ ...row }))
}

/** A statement's rows as arrays of values. */
const allValues = (statement: StatementSync, params: Array<never>): ReadonlyArray<ReadonlyArray<unknown>> => {
  if (statement.columns().length === 0) {
    statement.run(...params)
    return []
  }
  statement.setReturnArrays(true)
  try {
    return statement.all(...params) as unknown as ReadonlyArray<ReadonlyArray<unknown>>
  } finally {
    statement.setReturnArrays(false)
  }
}

/** A statement's rows, or what it changed when it has no result columns. */
const rawResult = (statement: StatementSync, params: Array<never>): unknown => {
  if (statement.columns().length > 0) return statement.all(...params)
  const { changes, lastInsertRowid } = statement.run(...params)
  return { changes, lastInsertRowid }
}

/** Prepares statements on `db`, keeping the last `preparedCapacity` of those asked to be cached. */
const preparer = (db: DatabaseSync) => {
  const prepared = new Map<string, StatementSync>()
  return (sql: string, cache: boolean): StatementSync => {
    const cached = prepared.get(sql)
    if (cached !== undefined) {
      prepared.delete(sql)
      prepared.set(sql, cached)
      return cached
    }
    const statement = db.prepare(sql)
    if (cache) {
      prepared.set(sql, statement)
      if (prepared.size > preparedCapacity) prepared.delete(prepared.keys().next().value!)
    }
    return statement
  }
}

type RowTransform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

const transformed = (effect: Effect.Effect<ReadonlyArray<object>, SqlError.SqlError>, transform: RowTransform) =>
  transform === undefined ? effect : Effect.map(effect, transform)

/** The `Connection` over one database handle, with a small cache of prepared statements. */
const connection = (db: DatabaseSync): SqlConnection.Connection => {
  const prepare = preparer(db)
  const run = <A>(sql: string, cache: boolean, f: (statement: StatementSync, params: Array<never>) => A) =>
    (params: ReadonlyArray<unknown>) =>
      Effect.flatMap(SqlClient.SafeIntegers, (safeIntegers) =>
        Effect.try({
          try: () => {
            const statement = prepare(sql, cache)
            statement.setReadBigInts(safeIntegers)
            return f(statement, bindable(params))
          },
          catch: (cause) => sqlError(cause, "Failed to execute statement", "execute")
        }))
  return {
    execute: (sql, params, transform) => transformed(run(sql, true, allRows)(params), transform),
    executeUnprepared: (sql, params, transform) => transformed(run(sql, false, allRows)(params), transform),
    executeRaw: (sql, params) => run(sql, true, rawResult)(params),
    executeValues: (sql, params) => run(sql, true, allValues)(params),
    executeValuesUnprepared: (sql, params) => run(sql, false, allValues)(params),
    executeStream: () => Stream.die(new Error("SqliteClient: streaming queries are not supported"))
  }
}

/** Makes a client on `options.filename`, open until the scope closes. */
export const make = (
  options: Options
): Effect.Effect<SqlClient.SqlClient, SqlError.SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const { connection, db } = yield* connect(options, yield* Effect.scope)
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore: yield* Semaphore.make(1),
      isTransaction: () => db.isTransaction
    })
    return yield* SqlClient.make({
      ...acquirers,
      driver: "sqlite-node",
      compiler: Statement.makeCompilerSqlite(options.transformQueryNames),
      transformRows: options.transformResultNames === undefined
        ? undefined
        : Statement.defaultTransforms(options.transformResultNames).array,
      // A transaction takes the write lock at once: two processes that read and then write queue up on the
      // busy timeout, instead of the second one failing when it upgrades its read lock.
      beginTransaction: options.readonly === true ? "BEGIN" : "BEGIN IMMEDIATE",
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
      spanAttributes: [...Object.entries(options.spanAttributes ?? {}), ["db.system.name", "sqlite"]]
    })
  })

/** A layer providing `SqlClient` on a SQLite file (with its own `Reactivity`). */
export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.effectContext(Effect.map(make(options), (client) => Context.make(SqlClient.SqlClient, client))).pipe(
    Layer.provide(Reactivity.layer)
  )
