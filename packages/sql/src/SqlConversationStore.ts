/**
 * A `ConversationStore` in a SQL database, through `effect/sql`'s
 * `SqlClient`: PostgreSQL (`@effect/sql-pg`) and SQLite (this package's
 * `SqliteClient`, on `node:sqlite`), both tested on real databases.
 *
 * Two tables. The conversations table has one row per conversation: its
 * version, its message count, the ids of its pending calls, when it was saved
 * and its lease (owner, token, expiry). The messages table has one row per message,
 * so a save writes only the messages that changed (a call's new status, an
 * appended response) and loading composes the conversation back. Saves with
 * an `expectedVersion` are compare-and-set in one transaction, so two workers
 * resuming the same pause cannot both go on.
 *
 * With an outbox (`layerWithOutbox`), a third table, `<table>_outbox`, holds
 * the notifications of each save (`Notification.between` the stored state
 * and the new one), inserted in the save's transaction: a notification
 * exists exactly when its state was stored (see `Outbox` and
 * `OutboxDispatcher` in `@chat-ts/core`).
 *
 * The tables are created by `migrate` (an `effect/sql` `Migrator`), run once
 * by whoever deploys: building the store's layer runs no DDL. Many processes
 * may run `migrate` at once: one applies the migrations, the others wait for
 * it and find nothing left to do.
 *
 * @since 0.1.0
 */
import type { Messages } from "@chat-ts/core"
import * as ChatError from "@chat-ts/core/ChatError"
import * as ConversationStore from "@chat-ts/core/ConversationStore"
import * as Notification from "@chat-ts/core/Notification"
import * as Outbox from "@chat-ts/core/Outbox"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Schema from "effect/Schema"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import { withMigrationLock } from "./MigrationLock.js"
import * as SqlOutbox from "./internal/outbox.js"
import * as Internal from "./internal/rows.js"

/** Settings of the store. */
export interface Options {
  /** The conversations table (default `chat_ts_conversations`); messages go to `<table>_messages`. */
  readonly table?: string
  /**
   * Whose clock times leases: the database's (default; every worker agrees on it) or
   * Effect's `Clock` in the store's process (so `TestClock` drives leases in tests; in production
   * every process's clock must then agree to well within a lease's ttl, or a worker whose clock is
   * ahead takes a lease another still holds).
   */
  readonly clock?: "database" | "effect"
  /**
   * How long the store keeps retrying a statement a lock refused (SQLite's `SQLITE_BUSY` or
   * `SQLITE_LOCKED`, each attempt after the client's own busy timeout; PostgreSQL's lock timeout,
   * deadlock or serialization failure), with a jittered backoff from 10 ms to 250 ms, before it
   * fails with a `StoreError` whose `retryable` is `true` (default `lockRetryBudget`, 10 seconds;
   * 0: no retry). Such a statement wrote nothing, so running it again is safe. The budget is timed
   * on Effect's `Clock`.
   */
  readonly lockRetryBudget?: Duration.Input
}

/** How long a statement refused by a lock is retried by default (see `Options.lockRetryBudget`). */
export const lockRetryBudget: Duration.Input = "10 seconds"

/** The default conversations table. */
export const defaultTable = "chat_ts_conversations"

const tablesOf = (options: Options) => {
  const table = options.table ?? defaultTable
  return {
    table,
    messages: `${table}_messages`,
    pendingIndex: `${table}_pending`,
    migrations: `${table}_migrations`,
    outbox: `${table}_outbox`,
    outboxIndex: `${table}_outbox_pending`
  }
}

/** The migrations that create and evolve the store's tables, in order. */
export const migrations = (
  options: Options = {}
): Record<string, Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient>> => {
  const names = tablesOf(options)
  return {
    "1_conversations": Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ${sql(names.table)} (
        id TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        incarnation TEXT NOT NULL,
        message_count INTEGER NOT NULL,
        pending TEXT NOT NULL,
        pending_count INTEGER NOT NULL,
        updated_at BIGINT NOT NULL,
        lease_owner TEXT,
        lease_expires_at BIGINT
      )`
      // listPending reads this index only: the oldest conversations that wait.
      yield* sql`CREATE INDEX ${sql(names.pendingIndex)} ON ${sql(names.table)} (updated_at, id) WHERE pending_count > 0`
      yield* sql`CREATE TABLE ${sql(names.messages)} (
        conversation_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (conversation_id, position)
      )`
    }),
    // A lease is one run's, not an owner's: every `acquire` writes a new token, which renew, release and
    // saves check. A lease row written before this migration has no token: it is held by a run this
    // version does not know until it expires (nothing renews, releases or saves under it).
    "2_lease_token": Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`ALTER TABLE ${sql(names.table)} ADD COLUMN lease_token TEXT`
    }),
    // The notifications of each save, written in its transaction, until a dispatcher delivers them. Stores
    // without an outbox write nothing here; a store built before this migration has none to deliver.
    "3_outbox": Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ${sql(names.outbox)} (
        id TEXT PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        position INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        body TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        last_error TEXT,
        delivered_at BIGINT,
        claim_token TEXT,
        claim_expires_at BIGINT
      )`
      // Dispatchers read this index only: the oldest rows still to send.
      yield* sql`CREATE INDEX ${sql(names.outboxIndex)} ON ${sql(names.outbox)} (created_at, conversation_id, version, position)
        WHERE status = 'pending'`
    })
  }
}

/**
 * Creates or updates the store's tables (run once per deploy, by a role that may change the schema).
 * Safe to run again: applied migrations are recorded in `<table>_migrations`. Safe to run from many
 * processes at once: on PostgreSQL they take turns on the advisory lock `chat-ts/sql:<table>_migrations`
 * (one transaction holds it, on one connection; a process waits up to 5 minutes for it), on SQLite on
 * the database's write lock; the first applies the migrations, the others find them applied and
 * return `[]`.
 */
export const migrate = (
  options: Options = {}
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> => {
  const { migrations: table } = tablesOf(options)
  return withMigrationLock(
    `chat-ts/sql:${table}`,
    Migrator.make({})({ loader: Migrator.fromRecord(migrations(options)), table }),
    { historyTables: [table] }
  )
}

/** A layer that runs `migrate` when built (for deploy scripts and tests, not for every worker). */
export const layerMigrate = (
  options: Options = {}
): Layer.Layer<never, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effectDiscard(migrate(options))

/** How many conversations' last saved messages a store remembers, to write only what changed. */
const rememberedConversations = 1000

/** How many rows one INSERT writes. */
const batchSize = 200

/** The driver's own error under a `SqlError` (with its message and code), or the error itself. */
const driverCause = (error: SqlError.SqlError | Schema.SchemaError): unknown =>
  error._tag === "SqlError" ? error.reason.cause ?? error : error

/** Failures where the statement (or its transaction) wrote nothing because of a lock: safe to run again at once. */
const lockReasons: ReadonlySet<string> = new Set(["LockTimeoutError", "DeadlockError", "SerializationError"])

/** Whether a failure is one a lock caused (SQLite's busy or locked database, PostgreSQL's lock conflicts). */
const isLockRefusal = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError" &&
  lockReasons.has((error as SqlError.SqlError).reason._tag)

/**
 * PostgreSQL's SQLSTATEs of a server going away (`57P01` the connection terminated by an administrator,
 * `57P02` a crash shutdown, `57P03` a server starting or stopping) and of a full server (`53300`).
 */
const retryableStates: ReadonlySet<string> = new Set(["57P01", "57P02", "57P03", "53300"])

/** Failures worth retrying later: a lock, a lost connection, a statement timeout, a server going away. */
const isRetryable = (error: SqlError.SqlError | Schema.SchemaError): boolean => {
  if (error._tag !== "SqlError") return false
  if (lockReasons.has(error.reason._tag) || error.reason._tag === "ConnectionError" || error.reason._tag === "StatementTimeoutError") {
    return true
  }
  const cause = error.reason.cause
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" &&
    retryableStates.has(cause.code)
}

const storeError = (what: string) => (error: SqlError.SqlError | Schema.SchemaError): ChatError.StoreError => {
  const cause = driverCause(error)
  const driver = cause instanceof Error ? cause.message : String(cause)
  const code = typeof cause === "object" && cause !== null && "code" in cause ? ` (code ${String(cause.code)})` : ""
  return new ChatError.StoreError({ detail: `${what}: ${driver}${code}`, cause, ...(isRetryable(error) ? { retryable: true } : {}) })
}

/**
 * A transaction whose rollback failed (its connection was lost, the server restarted) dies in
 * `effect/sql` with the rollback's `SqlError`: the store fails with it instead (a retryable
 * `StoreError`), so a lost connection in the middle of a save is never a defect. Any other defect
 * or an interruption stays as it is.
 */
const lostRollbackAsFailure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.catchCause(effect, (cause): Effect.Effect<never, E | SqlError.SqlError> => {
    const dies = cause.reasons.filter(Cause.isDieReason)
    if (dies.length === 0 || Cause.hasInterrupts(cause) || !dies.every((reason) => SqlError.isSqlError(reason.defect))) {
      return Effect.failCause(cause)
    }
    const failure = cause.reasons.find(Cause.isFailReason)
    return failure !== undefined ? Effect.fail(failure.error) : Effect.fail(dies[0]!.defect as SqlError.SqlError)
  })

/** Runs `effect` again while a lock refuses it, with a jittered backoff from 10 ms to 250 ms, for `budget` at most. */
const retryingLocks = (budget: Duration.Input) => {
  const millis = Duration.toMillis(Duration.fromInputUnsafe(budget))
  const schedule = Schedule.max([
    Schedule.exponential("10 millis").pipe(
      Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.millis(250))))
    ),
    Schedule.during(Duration.millis(millis))
  ]).pipe(Schedule.jittered)
  return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    millis <= 0 ? effect : Effect.retry(effect, { schedule, while: isLockRefusal })
}

/** A lease's token as the queries match it: a lease without one (built by hand) matches no row, never every row. */
const tokenOf = (lease: ConversationStore.Lease): string => typeof lease.token === "string" ? lease.token : ""

/** A store, writing the notifications of its saves to its outbox table when `withOutbox`. */
const build = (options: Options, withOutbox: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const names = tablesOf(options)
    const table = sql(names.table)
    const messagesTable = sql(names.messages)
    // What this store last read or wrote of a conversation: its incarnation (a new one each time the id is
    // created, so a conversation removed and created again is never taken for the old one), version and messages.
    const remembered = Internal.lru<string, Internal.Known>(rememberedConversations)
    // A statement a lock refused wrote nothing: it runs again, within the budget, before it is a StoreError.
    const retrying = retryingLocks(options.lockRetryBudget ?? lockRetryBudget)

    const isPostgres = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
    const databaseNow = sql.onDialectOrElse({
      pg: () => sql.literal("CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"),
      orElse: () => sql.literal("CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)")
    })
    /** "now" (and "now + ttl") on the lease clock, as SQL. */
    const leaseTime = (plus: number): Effect.Effect<Statement.Fragment | number> =>
      options.clock === "effect"
        ? Effect.clockWith((clock) => Effect.map(clock.currentTimeMillis, (now) => now + plus))
        : Effect.succeed(plus === 0 ? databaseNow : sql`(${databaseNow} + ${plus})`)

    const load: ConversationStore.Service["load"] = (id) =>
      sql`SELECT c.incarnation, c.version, c.updated_at, c.message_count, m.position, m.body
          FROM ${table} c LEFT JOIN ${messagesTable} m ON m.conversation_id = c.id AND m.position < c.message_count
          WHERE c.id = ${id} ORDER BY m.position`.pipe(
        retrying,
        Effect.mapError(storeError(`loading '${id}'`)),
        Effect.flatMap((rows) =>
          Result.match(Internal.decodeConversation(id, rows), {
            onFailure: (detail) => Effect.fail(new ChatError.CorruptConversation({ id, detail })),
            onSuccess: Effect.succeed
          })
        ),
        Effect.map(Option.map(({ incarnation, stored }) => {
          remembered.set(id, { incarnation, version: stored.version, messages: stored.messages })
          return stored
        }))
      )

    const insertMessages = (id: string, messages: Messages.Messages, positions: ReadonlyArray<number>) =>
      Effect.forEach(
        Internal.chunks(positions, batchSize),
        (chunk) =>
          Effect.flatMap(
            // A message JSON cannot hold fails the save (inside its transaction: nothing is written).
            Effect.forEach(chunk, (position) =>
              Effect.fromResult(Result.map(Internal.encodeMessage(messages[position]!), (body) => ({ conversation_id: id, position, body })))),
            ([first, ...rest]) =>
              first === undefined ? Effect.void : Effect.asVoid(sql`INSERT INTO ${messagesTable} ${sql.insert([first, ...rest])}
                ON CONFLICT (conversation_id, position) DO UPDATE SET body = excluded.body`)
          ),
        { discard: true }
      )

    /** Writes the message rows: only those that changed since `previous` (the stored messages), or all. */
    const writeMessages = (id: string, messages: Messages.Messages, previous: Messages.Messages | undefined) =>
      Effect.gen(function*() {
        if (previous === undefined) {
          yield* sql`DELETE FROM ${messagesTable} WHERE conversation_id = ${id}`
          return yield* insertMessages(id, messages, messages.map((_, i) => i))
        }
        if (previous.length > messages.length) {
          yield* sql`DELETE FROM ${messagesTable} WHERE conversation_id = ${id} AND position >= ${messages.length}`
        }
        yield* insertMessages(id, messages, Internal.changedPositions(previous, messages))
      })

    /** The stored messages as they are before this save writes its own (in its transaction, after its row is locked). */
    const storedMessages = (id: string) =>
      Effect.map(
        sql`SELECT position, body FROM ${messagesTable} WHERE conversation_id = ${id} ORDER BY position`,
        Internal.decodeBodies
      )

    /** Writes the notifications of a save that turned `before` into `messages` (in its transaction). */
    const writeOutbox = (id: string, version: number, updatedAt: number, before: Messages.Messages | undefined, messages: Messages.Messages) => {
      const [first, ...rest] = SqlOutbox.rowsOf(Notification.make(id, version, updatedAt, Notification.between(before, messages)))
      return first === undefined ? Effect.void : Effect.asVoid(sql`INSERT INTO ${sql(names.outbox)} ${sql.insert([first, ...rest])}`)
    }

    /** The compare-and-set of a save; `None` when the expected version or the lease did not hold. */
    const writeRow = (
      id: string,
      messages: Messages.Messages,
      updatedAt: number,
      saveOptions: ConversationStore.SaveOptions | undefined,
      incarnation: string | undefined,
      release: boolean
    ) => {
      const pending = ConversationStore.pendingIds(messages)
      const row = {
        id,
        incarnation: globalThis.crypto.randomUUID(),
        version: 1,
        message_count: messages.length,
        pending: JSON.stringify(pending),
        pending_count: pending.length,
        updated_at: updatedAt
      }
      const expected = saveOptions?.expectedVersion
      const token = saveOptions?.lease === undefined ? undefined : tokenOf(saveOptions.lease)
      const leased = token === undefined ? sql`1 = 1` : sql`${table}.lease_token = ${token}`
      const same = incarnation === undefined ? sql`1 = 1` : sql`incarnation = ${incarnation}`
      // The lease given up in the same write (only one the save is made under).
      const freed = release && token !== undefined
        ? sql`, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL`
        : sql``
      if (expected === 0) {
        return token !== undefined
          ? Effect.succeed([])
          : sql`INSERT INTO ${table} ${sql.insert(row)} ON CONFLICT (id) DO NOTHING RETURNING version, incarnation`
      }
      if (expected === undefined) {
        return sql`INSERT INTO ${table} ${sql.insert(row)} ON CONFLICT (id) DO UPDATE SET
          version = ${table}.version + 1, message_count = ${row.message_count}, pending = ${row.pending},
          pending_count = ${row.pending_count}, updated_at = ${updatedAt}${freed}
          WHERE ${leased} RETURNING version, incarnation`
      }
      return updateRow(id, expected, row, same, leased, freed)
    }

    /** The compare-and-set UPDATE of a conversation's row, from version `expected`. */
    const updateRow = (
      id: string,
      expected: number,
      row: { readonly message_count: number; readonly pending: string; readonly pending_count: number; readonly updated_at: number },
      same: Statement.Fragment,
      leased: Statement.Fragment,
      freed: Statement.Fragment
    ) =>
      sql`UPDATE ${table} SET version = ${expected + 1}, message_count = ${row.message_count},
          pending = ${row.pending}, pending_count = ${row.pending_count}, updated_at = ${row.updated_at}${freed}
          WHERE id = ${id} AND version = ${expected} AND ${same} AND ${leased} RETURNING version, incarnation`

    /**
     * Rows for `target` (`[column, SQL type]`s) as an `INSERT … SELECT` from a `VALUES` list that writes
     * them only when the CTE `written` gave a row (PostgreSQL).
     */
    const insertIfWritten = (
      target: string,
      columns: ReadonlyArray<readonly [string, string]>,
      rows: ReadonlyArray<ReadonlyArray<unknown>>
    ) => {
      const names = sql.literal(columns.map(([name]) => `"${name}"`).join(", "))
      const values = sql.join(", ", false)(rows.map((values) =>
        sql`(${sql.join(", ", false)(values.map((value, i) => sql`CAST(${value} AS ${sql.literal(columns[i]![1])})`))})`
      ))
      return sql`INSERT INTO ${sql(target)} (${names}) SELECT ${names} FROM (VALUES ${values}) AS v (${names})
        WHERE EXISTS (SELECT 1 FROM written)`
    }

    /**
     * A save of the changes since the state this store knows (`known`, at the expected version) in one
     * statement (PostgreSQL): the compare-and-set of the row, and, only when it matched, the changed
     * message rows and the notifications, one commit and one round trip. `undefined` when it does not
     * apply (a shorter conversation, many changed rows); no row when the compare-and-set did not hold
     * (nothing was written).
     */
    const saveInOne = (
      id: string,
      messages: Messages.Messages,
      updatedAt: number,
      saveOptions: ConversationStore.SaveOptions,
      known: Internal.Known,
      release: boolean
    ) => {
      const positions = Internal.changedPositions(known.messages, messages)
      if (messages.length < known.messages.length || positions.length > batchSize) return undefined
      return Effect.gen(function*() {
        const bodies = yield* Effect.forEach(positions, (position) => Effect.fromResult(Internal.encodeMessage(messages[position]!)))
        const expected = saveOptions.expectedVersion!
        const pending = ConversationStore.pendingIds(messages)
        const row = { message_count: messages.length, pending: JSON.stringify(pending), pending_count: pending.length, updated_at: updatedAt }
        const token = saveOptions.lease === undefined ? undefined : tokenOf(saveOptions.lease)
        const leased = token === undefined ? sql`1 = 1` : sql`${table}.lease_token = ${token}`
        const freed = release && token !== undefined
          ? sql`, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL`
          : sql``
        const inserts: Array<Statement.Fragment> = []
        if (positions.length > 0) {
          inserts.push(sql`, m AS (${
            insertIfWritten(names.messages, [["conversation_id", "TEXT"], ["position", "INTEGER"], ["body", "TEXT"]], positions.map((position, i) => [id, position, bodies[i]]))
          } ON CONFLICT (conversation_id, position) DO UPDATE SET body = excluded.body)`)
        }
        const notes = withOutbox
          ? SqlOutbox.rowsOf(Notification.make(id, expected + 1, updatedAt, Notification.between(known.messages, messages)))
          : []
        if (notes.length > 0) {
          inserts.push(sql`, o AS (${
            insertIfWritten(
              names.outbox,
              [["id", "TEXT"], ["conversation_id", "TEXT"], ["version", "INTEGER"], ["position", "INTEGER"], ["created_at", "BIGINT"], ["body", "TEXT"], ["status", "TEXT"], ["attempts", "INTEGER"]],
              notes.map((note) => [note.id, note.conversation_id, note.version, note.position, note.created_at, note.body, note.status, note.attempts])
            )
          })`)
        }
        const rows = yield* sql`WITH written AS (${updateRow(id, expected, row, sql`incarnation = ${known.incarnation}`, leased, freed)})${
          sql.join("", false)(inserts)
        } SELECT version, incarnation FROM written`
        return yield* Internal.decodeWritten(rows)
      })
    }

    /**
     * A conversation's version and its lease while someone holds it (on the store's clock): an
     * expired or released lease reads as none, so a refusal never claims another run has it.
     */
    const leaseRow = (id: string) =>
      Effect.flatMap(leaseTime(0), (now) =>
        sql`SELECT version, lease_owner, CASE WHEN lease_owner IS NOT NULL AND lease_expires_at > ${now}
            THEN lease_expires_at ELSE NULL END AS lease_expires_at FROM ${table} WHERE id = ${id}`)

    /** `ConversationBusy` for a lease that is not the caller's: another run's, with its end, or none at all. */
    const busy = (id: string, expiresAt: number | null | undefined) =>
      new ChatError.ConversationBusy(expiresAt === null || expiresAt === undefined ? { id } : { id, expiresAt })

    /** Why a save was refused: another version, or a lease that is not the caller's. */
    const refusal = (id: string, saveOptions: ConversationStore.SaveOptions | undefined) =>
      leaseRow(id).pipe(
        Effect.flatMap(Internal.decodeLeaseRows),
        retrying,
        Effect.mapError(storeError(`saving '${id}'`)),
        Effect.flatMap(([row]): Effect.Effect<never, ConversationStore.SaveError> => {
          const expected = saveOptions?.expectedVersion
          if (expected !== undefined && expected !== (row?.version ?? 0)) {
            return new ChatError.ConcurrentModification({
              id,
              expectedVersion: expected,
              ...(row === undefined ? {} : { actualVersion: row.version })
            })
          }
          return busy(id, row?.lease_expires_at)
        })
      )

    /** A save; with `release`, the lease it is made under is given up in the same write. */
    const write = (id: string, messages: Messages.Messages, saveOptions: ConversationStore.SaveOptions | undefined, release: boolean) =>
      Effect.gen(function*() {
        const updatedAt = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const expected = saveOptions?.expectedVersion
        const known = remembered.get(id)
        const delta = expected !== undefined && expected !== 0 && known?.version === expected ? known : undefined
        // On PostgreSQL the changes since a state this store knows are one statement; when its compare-and-set
        // does not hold (nothing written), the transaction below writes what it must, or finds the refusal.
        const inOne = isPostgres && delta !== undefined ? saveInOne(id, messages, updatedAt, saveOptions!, delta, release) : undefined
        const [quick] = inOne === undefined ? [] : yield* inOne.pipe(
          retrying,
          Effect.mapError((error) => error._tag === "StateEncodeError" ? error : storeError(`saving '${id}'`)(error))
        )
        if (quick !== undefined) {
          remembered.set(id, { incarnation: quick.incarnation, version: quick.version, messages })
          return { id, messages, version: quick.version, updatedAt }
        }
        const write = (base: Internal.Known | undefined) =>
          Effect.flatMap(writeRow(id, messages, updatedAt, saveOptions, base?.incarnation, release), Internal.decodeWritten)
        const written = yield* sql.withTransaction(Effect.gen(function*() {
          // Only the changed messages when the stored state is the one this store knows; otherwise all of them.
          const [changed] = delta === undefined ? [] : yield* write(delta)
          const [row] = changed === undefined ? yield* write(undefined) : [changed]
          if (row === undefined) return undefined
          if (withOutbox) {
            const before = changed !== undefined
              ? delta?.messages
              : row.version === 1
              ? undefined
              : yield* storedMessages(id)
            yield* writeOutbox(id, row.version, updatedAt, before, messages)
          }
          yield* writeMessages(id, messages, changed === undefined ? undefined : delta?.messages)
          return row
        })).pipe(
          lostRollbackAsFailure,
          retrying,
          Effect.mapError((error) => error._tag === "StateEncodeError" ? error : storeError(`saving '${id}'`)(error))
        )
        if (written === undefined) return yield* refusal(id, saveOptions)
        remembered.set(id, { incarnation: written.incarnation, version: written.version, messages })
        return { id, messages, version: written.version, updatedAt }
      })

    const save: ConversationStore.Service["save"] = (id, messages, saveOptions) => write(id, messages, saveOptions, false)

    const saveAndRelease: NonNullable<ConversationStore.Service["saveAndRelease"]> = (id, messages, saveOptions) =>
      write(id, messages, saveOptions, true)

    const listPending: ConversationStore.Service["listPending"] = (listOptions) =>
      Effect.gen(function*() {
        const { after, limit } = yield* ConversationStore.pageOptions(listOptions)
        const from = after === undefined
          ? sql`1 = 1`
          : sql`(updated_at > ${after[0]} OR (updated_at = ${after[0]} AND id > ${after[1]}))`
        const rows = yield* sql`SELECT id, version, updated_at, pending FROM ${table}
            WHERE pending_count > 0 AND ${from} ORDER BY updated_at, id LIMIT ${limit}`.pipe(
          retrying,
          Effect.mapError(storeError("listing pending conversations"))
        )
        const items = yield* Effect.forEach(rows, (row) =>
          Result.match(Internal.decodePending(row), {
            onFailure: ({ detail, id }) => Effect.fail(new ChatError.CorruptConversation({ id, detail })),
            onSuccess: Effect.succeed
          }))
        return { items, ...ConversationStore.nextCursor(items, limit) }
      })

    const remove: ConversationStore.Service["remove"] = (id) =>
      sql.withTransaction(
        Effect.andThen(
          sql`DELETE FROM ${messagesTable} WHERE conversation_id = ${id}`,
          sql`DELETE FROM ${table} WHERE id = ${id}`
        )
      ).pipe(
        lostRollbackAsFailure,
        Effect.tap(() => Effect.sync(() => remembered.delete(id))),
        Effect.asVoid,
        retrying,
        Effect.mapError(storeError(`removing '${id}'`))
      )

    const leaseOf = (id: string, owner: string, token: string) => (rows: ReadonlyArray<unknown>) =>
      Effect.map(Internal.decodeExpiries(rows), (decoded) =>
        decoded[0] === undefined ? undefined : { id, owner, token, expiresAt: decoded[0].lease_expires_at })

    const busyOrMissing = (id: string) =>
      leaseRow(id).pipe(
        Effect.flatMap(Internal.decodeLeaseRows),
        retrying,
        Effect.mapError(storeError(`leasing '${id}'`)),
        Effect.flatMap(([row]): Effect.Effect<never, ChatError.ConversationBusy | ChatError.ConversationNotFound> =>
          row === undefined
            ? Effect.fail(new ChatError.ConversationNotFound({ id }))
            : Effect.fail(busy(id, row.lease_expires_at))
        )
      )

    const acquire: ConversationStore.Service["acquire"] = (id, owner, ttl) =>
      Effect.gen(function*() {
        const millis = yield* ConversationStore.leaseMillis(ttl)
        const token = ConversationStore.makeToken()
        // Free or expired only: a lease held by any run (whatever its owner, or none known) keeps this one out.
        // "now" is read again on every attempt: a lease acquired after a lock's wait still lasts its ttl.
        const lease = yield* Effect.gen(function*() {
          const now = yield* leaseTime(0)
          const until = yield* leaseTime(millis)
          return yield* sql`UPDATE ${table} SET lease_owner = ${owner}, lease_token = ${token}, lease_expires_at = ${until}
            WHERE id = ${id} AND (lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= ${now})
            RETURNING lease_expires_at`
        }).pipe(
          Effect.flatMap(leaseOf(id, owner, token)),
          retrying,
          Effect.mapError(storeError(`leasing '${id}'`))
        )
        return lease ?? (yield* busyOrMissing(id))
      })

    /** The lease taken and the conversation read, in one statement (PostgreSQL); no row: busy or missing. */
    const leaseAndRead = (id: string, owner: string, token: string, millis: number) =>
      Effect.gen(function*() {
        const now = yield* leaseTime(0)
        const until = yield* leaseTime(millis)
        return yield* sql`WITH l AS (UPDATE ${table} SET lease_owner = ${owner}, lease_token = ${token}, lease_expires_at = ${until}
            WHERE id = ${id} AND (lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= ${now})
            RETURNING id, incarnation, version, updated_at, message_count, lease_expires_at)
          SELECT l.incarnation, l.version, l.updated_at, l.message_count, l.lease_expires_at, m.position, m.body
          FROM l LEFT JOIN ${messagesTable} m ON m.conversation_id = l.id AND m.position < l.message_count
          ORDER BY m.position`
      })

    const acquireAndLoad: NonNullable<ConversationStore.Service["acquireAndLoad"]> = (id, owner, ttl) =>
      Effect.gen(function*() {
        if (!isPostgres) return yield* ConversationStore.acquireAndLoad({ load, save, listPending, remove, acquire, renew, release }, id, owner, ttl)
        const millis = yield* ConversationStore.leaseMillis(ttl)
        const token = ConversationStore.makeToken()
        const rows = yield* leaseAndRead(id, owner, token, millis).pipe(retrying, Effect.mapError(storeError(`leasing '${id}'`)))
        if (rows.length === 0) return yield* busyOrMissing(id)
        const lease = yield* leaseOf(id, owner, token)(rows.slice(0, 1)).pipe(Effect.mapError(storeError(`leasing '${id}'`)))
        const decoded = Internal.decodeConversation(id, rows)
        if (lease === undefined || Result.isFailure(decoded) || Option.isNone(decoded.success)) {
          // Taken, but unreadable: given back at once, not left to expire.
          if (lease !== undefined) yield* Effect.ignore(release(lease))
          return yield* new ChatError.CorruptConversation({ id, detail: Result.isFailure(decoded) ? decoded.failure : "its row went away" })
        }
        const { incarnation, stored } = decoded.success.value
        remembered.set(id, { incarnation, version: stored.version, messages: stored.messages })
        return { lease, stored }
      })

    const renew: ConversationStore.Service["renew"] = (lease, ttl) =>
      Effect.gen(function*() {
        const millis = yield* ConversationStore.leaseMillis(ttl)
        const renewed = yield* Effect.flatMap(leaseTime(millis), (until) =>
          sql`UPDATE ${table} SET lease_expires_at = ${until}
            WHERE id = ${lease.id} AND lease_token = ${tokenOf(lease)} RETURNING lease_expires_at`).pipe(
          Effect.flatMap(leaseOf(lease.id, lease.owner, lease.token)),
          retrying,
          Effect.mapError(storeError(`renewing the lease of '${lease.id}'`))
        )
        return renewed ?? (yield* busyOrMissing(lease.id).pipe(
          Effect.catchTag("ConversationNotFound", () => busy(lease.id, undefined))
        ))
      })

    const release: ConversationStore.Service["release"] = (lease) =>
      sql`UPDATE ${table} SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
          WHERE id = ${lease.id} AND lease_token = ${tokenOf(lease)}`.pipe(
        Effect.asVoid,
        retrying,
        Effect.mapError(storeError(`releasing the lease of '${lease.id}'`))
      )

    const store: ConversationStore.Service = { load, save, listPending, remove, acquire, renew, release, acquireAndLoad, saveAndRelease }
    const outbox = SqlOutbox.make({ sql, table: names.outbox, leaseTime, retrying, storeError })
    return { store, outbox }
  })

/** Makes a store on the `SqlClient` in context; the tables must exist (see `migrate`). Runs no statement. */
export const make = (
  options: Options = {}
): Effect.Effect<ConversationStore.Service, never, SqlClient.SqlClient> => Effect.map(build(options, false), ({ store }) => store)

/**
 * Makes a store whose saves write their notifications to `<table>_outbox` in their transaction, and that
 * outbox (claimed on the store's lease clock); the tables must exist (see `migrate`). Runs no statement.
 */
export const makeWithOutbox = (
  options: Options = {}
): Effect.Effect<{ readonly store: ConversationStore.Service; readonly outbox: Outbox.Service }, never, SqlClient.SqlClient> =>
  build(options, true)

/** A layer providing `ConversationStore` on the `SqlClient` in context (the tables must exist: see `migrate`). */
export const layer = (
  options: Options = {}
): Layer.Layer<ConversationStore.ConversationStore, never, SqlClient.SqlClient> =>
  Layer.effect(ConversationStore.ConversationStore, make(options))

/** A layer providing `ConversationStore` and its `Outbox` on the `SqlClient` in context (see `makeWithOutbox`). */
export const layerWithOutbox = (
  options: Options = {}
): Layer.Layer<ConversationStore.ConversationStore | Outbox.Outbox, never, SqlClient.SqlClient> =>
  Layer.effectContext(Effect.map(makeWithOutbox(options), ({ outbox, store }) =>
    Context.make(ConversationStore.ConversationStore, store).pipe(Context.add(Outbox.Outbox, outbox))))
