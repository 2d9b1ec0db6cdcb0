/**
 * The fleet's stored conversations. One turn is paused on its approval by
 * chat-ts and saved by the store (conversation 0); the other N − 1 are
 * copies of its rows made by the database in two statements, `#0#` replaced
 * by each conversation's number in its id, its call id, its path and its
 * incarnation, so that each decodes and resumes as one paused by chat-ts
 * would (the smoke test loads copies back and compares them).
 */
import { type ChatError, ConversationStore, Messages } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import * as EffectResult from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"
import * as FleetChat from "./chat.js"

/** The tables of the fleet's store. */
export const table = "fleet"
const messagesTable = `${table}_messages`

/** The paused state every conversation starts from (conversation 0's). */
export const pausedTemplate = async (): Promise<Messages.Messages> => {
  const chat = await FleetChat.make(() => undefined)
  const paused = await Effect.runPromise(chat.complete([Messages.user(FleetChat.prompt)]))
  if (paused.outcome._tag !== "Paused") throw new Error("fleet: the template turn did not pause")
  return paused.messages
}

/** What conversation `n` holds once seeded: the template with its marker. */
export const expectedOf = (template: Messages.Messages, n: number): EffectResult.Result<Messages.Messages, ChatError.StateEncodeError | ChatError.StateDecodeError> =>
  EffectResult.flatMap(Messages.toJson(template), (json) =>
    Messages.fromJson(json.replaceAll(FleetChat.marker, FleetChat.markerOf(n))))

/** Numbers 1..last as a recursive common table expression `g(n)` (both dialects). */
const numbers = (sql: SqlClient.SqlClient, last: number) =>
  sql`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${last})`

/** Replaces the marker in `column` by conversation `n`'s. */
const marked = (sql: SqlClient.SqlClient, column: string) =>
  sql`replace(${sql(column)}, ${FleetChat.marker}, '#' || CAST(g.n AS TEXT) || '#')`

/** Empties the tables and stores `conversations` paused conversations (0 … N − 1), all pending, no lease. */
export const seed = (template: Messages.Messages, conversations: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ConversationStore.ConversationStore
    yield* sql`DELETE FROM ${sql(messagesTable)}`
    yield* sql`DELETE FROM ${sql(table)}`
    const template0 = FleetChat.conversationId(0)
    yield* store.save(template0, template)
    // An incarnation with the marker, so each copy gets one of its own.
    yield* sql`UPDATE ${sql(table)} SET incarnation = ${`i${FleetChat.marker}`} WHERE id = ${template0}`
    if (conversations < 2) return
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO ${sql(table)} (id, version, incarnation, message_count, pending, pending_count, updated_at)
        ${numbers(sql, conversations - 1)}
        SELECT ${marked(sql, "id")}, version, ${marked(sql, "incarnation")}, message_count, ${marked(sql, "pending")},
          pending_count, updated_at
        FROM ${sql(table)}, g WHERE id = ${template0}`
      yield* sql`INSERT INTO ${sql(messagesTable)} (conversation_id, position, body)
        ${numbers(sql, conversations - 1)}
        SELECT ${marked(sql, "conversation_id")}, position, ${marked(sql, "body")}
        FROM ${sql(messagesTable)}, g WHERE conversation_id = ${template0}`
    }))
    // Every run starts from the same state of the database: statistics of the new rows (PostgreSQL), an empty
    // WAL (SQLite: the seed's pages copied into the database file now, not by the first commits of the run).
    yield* sql.onDialectOrElse({
      pg: () => sql`ANALYZE ${sql(table)}, ${sql(messagesTable)}`,
      orElse: () => sql`PRAGMA wal_checkpoint(TRUNCATE)`
    })
  })

/** Where the conversations stand: how many are still pending, how many hold a lease. */
export const census = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly total: unknown; readonly pending: unknown; readonly leased: unknown }>`SELECT
      COUNT(*) AS total,
      SUM(CASE WHEN pending_count > 0 THEN 1 ELSE 0 END) AS pending,
      SUM(CASE WHEN lease_owner IS NOT NULL THEN 1 ELSE 0 END) AS leased
    FROM ${sql(table)}`
  const row = rows[0]!
  return { total: Number(row.total), pending: Number(row.pending ?? 0), leased: Number(row.leased ?? 0) }
})

/** The ids of the conversations still pending. */
export const pendingIds = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly id: string }>`SELECT id FROM ${sql(table)} WHERE pending_count > 0`
  return new Set(rows.map((r) => r.id))
})
