/**
 * A `ConversationStore` in a SQL database, through `@effect/sql`'s
 * `SqlClient` (SQLite with `@effect/sql-sqlite-node`, PostgreSQL with
 * `@effect/sql-pg`, …: any dialect with `ON CONFLICT` and `RETURNING`; tested on SQLite).
 *
 * One row per conversation: its versioned JSON document, its version, the
 * ids of its pending calls and when it was saved. Saves with an
 * `expectedVersion` are compare-and-set in one statement, so two workers
 * resuming the same pause cannot both go on.
 *
 * @since 0.1.0
 */
import { ChatError, ConversationStore, Messages } from "@chat-ts/core"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** Settings of the store. */
export interface Options {
  /** The table's name (default `chat_ts_conversations`); created if missing. */
  readonly table?: string
}

const Row = Schema.Struct({
  id: Schema.String,
  version: Schema.Number,
  document: Schema.String,
  pending: Schema.String,
  // PostgreSQL returns BIGINT columns as strings.
  updated_at: Schema.Union(Schema.Number, Schema.NumberFromString)
})

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
const decodeVersions = Schema.decodeUnknown(Schema.Array(Schema.Struct({ version: Schema.Number })))

const storeError = (error: SqlError.SqlError | { readonly message: string }): ChatError.StoreError =>
  new ChatError.StoreError({ detail: error.message })

/** Makes a store on the `SqlClient` in context, creating its table if it does not exist. */
export const make = (
  options: Options = {}
): Effect.Effect<ConversationStore.Service, ChatError.StoreError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = sql(options.table ?? "chat_ts_conversations")
    yield* sql`CREATE TABLE IF NOT EXISTS ${table} (
      id TEXT PRIMARY KEY,
      version INTEGER NOT NULL,
      document TEXT NOT NULL,
      pending TEXT NOT NULL,
      updated_at BIGINT NOT NULL
    )`.pipe(Effect.mapError(storeError))

    const currentVersion = (id: string) =>
      Effect.map(
        Effect.flatMap(sql`SELECT version FROM ${table} WHERE id = ${id}`, decodeVersions),
        (rows) => rows[0]?.version
      )

    const load: ConversationStore.Service["load"] = (id) =>
      sql`SELECT id, version, document, pending, updated_at FROM ${table} WHERE id = ${id}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.mapError(storeError),
        Effect.flatMap((rows) => {
          const row = rows[0]
          if (row === undefined) return Effect.succeed(Option.none())
          return Effect.map(Messages.fromJson(row.document), (messages) =>
            Option.some({ id, messages, version: row.version, updatedAt: row.updated_at }))
        })
      )

    const save: ConversationStore.Service["save"] = (id, messages, saveOptions) =>
      Effect.gen(function*() {
        const document = yield* Messages.toJson(messages)
        const pending = JSON.stringify(ConversationStore.pendingIds(messages))
        const updatedAt = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const expected = saveOptions?.expectedVersion
        const written = yield* (
          expected === undefined
            ? sql`INSERT INTO ${table} (id, version, document, pending, updated_at)
                VALUES (${id}, 1, ${document}, ${pending}, ${updatedAt})
                ON CONFLICT (id) DO UPDATE SET version = ${table}.version + 1, document = ${document},
                  pending = ${pending}, updated_at = ${updatedAt}
                RETURNING version`
            : expected === 0
            ? sql`INSERT INTO ${table} (id, version, document, pending, updated_at)
                VALUES (${id}, 1, ${document}, ${pending}, ${updatedAt})
                ON CONFLICT (id) DO NOTHING
                RETURNING version`
            : sql`UPDATE ${table} SET version = ${expected + 1}, document = ${document}, pending = ${pending},
                updated_at = ${updatedAt}
                WHERE id = ${id} AND version = ${expected}
                RETURNING version`
        ).pipe(Effect.flatMap(decodeVersions), Effect.mapError(storeError))
        const version = written[0]?.version
        if (version === undefined) {
          const actual = yield* currentVersion(id).pipe(Effect.mapError(storeError))
          return yield* new ChatError.ConcurrentModification({
            id,
            expectedVersion: expected ?? 0,
            ...(actual === undefined ? {} : { actualVersion: actual })
          })
        }
        return { id, messages, version, updatedAt }
      })

    const listPending: ConversationStore.Service["listPending"] =
      sql`SELECT id, version, document, pending, updated_at FROM ${table} WHERE pending <> '[]' ORDER BY updated_at, id`
        .pipe(
          Effect.flatMap(decodeRows),
          Effect.map((rows) =>
            rows.map((row) => ({
              id: row.id,
              version: row.version,
              updatedAt: row.updated_at,
              pending: JSON.parse(row.pending) as ReadonlyArray<string>
            }))
          ),
          Effect.mapError(storeError)
        )

    const remove: ConversationStore.Service["remove"] = (id) =>
      sql`DELETE FROM ${table} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.mapError(storeError))

    return { load, save, listPending, remove }
  })

/** A layer providing `ConversationStore` on the `SqlClient` in context. */
export const layer = (
  options: Options = {}
): Layer.Layer<ConversationStore.ConversationStore, ChatError.StoreError, SqlClient.SqlClient> =>
  Layer.effect(ConversationStore.ConversationStore, make(options))
