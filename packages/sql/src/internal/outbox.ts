/**
 * The SQL store's outbox: the `<table>_outbox` rows its saves write (in the
 * save's transaction), claimed by dispatchers with a token and an expiry on
 * the store's lease clock (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite has
 * one writer at a time), marked delivered or failed.
 *
 * @since 0.3.0
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as Notification from "@chat-ts/core/Notification"
import * as Outbox from "@chat-ts/core/Outbox"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import { Whole } from "./rows.js"

const OutboxRow = Schema.Struct({
  id: Schema.String,
  body: Schema.String,
  status: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Whole,
  last_error: Schema.NullOr(Schema.String),
  delivered_at: Schema.NullOr(Whole),
  claim_expires_at: Schema.NullOr(Whole),
  created_at: Whole,
  conversation_id: Schema.String,
  version: Whole,
  position: Whole
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(OutboxRow))

/** What the outbox needs of its store. */
export interface Context {
  readonly sql: SqlClient.SqlClient
  /** The outbox table's name. */
  readonly table: string
  /** "now" plus `millis` on the store's lease clock, as SQL or a number. */
  readonly leaseTime: (millis: number) => Effect.Effect<Statement.Fragment | number>
  readonly storeError: (what: string) => (error: SqlError.SqlError | Schema.SchemaError) => ChatError.StoreError
  /** Runs a statement again while a lock refuses it, within the store's budget. */
  readonly retrying: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** The rows a save writes for its notifications (inserted in the save's transaction). */
export const rowsOf = (notifications: ReadonlyArray<Notification.Notification>) =>
  notifications.map((notification, position) => ({
    id: notification.id,
    conversation_id: notification.conversationId,
    version: notification.version,
    position,
    created_at: notification.at,
    body: Notification.toJson(notification),
    status: "pending",
    attempts: 0
  }))

const order = "created_at, conversation_id, version, position"

const columnNames = ["id", "body", "status", "attempts", "last_error", "delivered_at", "claim_expires_at", "created_at", "conversation_id", "version", "position"]

/** The columns of the row aliased `o` (an UPDATE … FROM has two tables with an `id`). */
const aliased = columnNames.map((column) => `o.${column}`).join(", ")

const entryOf = (row: typeof OutboxRow.Type) =>
  Effect.map(Notification.fromJson(row.body), (notification): Outbox.Entry => ({
    notification,
    status: row.status,
    attempts: row.attempts,
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    ...(row.delivered_at === null ? {} : { deliveredAt: row.delivered_at })
  }))

/** The outbox on the store's tables. */
export const make = ({ leaseTime, retrying, sql, storeError, table: name }: Context): Outbox.Service => {
  const table = sql(name)
  const columns = sql.literal(columnNames.join(", "))
  const refused = (detail: string) => new ChatError.StoreError({ detail })
  const entries = (rows: ReadonlyArray<unknown>) => Effect.flatMap(decodeRows(rows), Effect.forEach(entryOf))

  const claim: Outbox.Service["claim"] = (options) =>
    Effect.gen(function*() {
      const { limit, ttl } = yield* Effect.mapError(Outbox.checkClaim(options), refused)
      const now = yield* leaseTime(0)
      const until = yield* leaseTime(ttl)
      const token = globalThis.crypto.randomUUID()
      const due = sql`status = 'pending' AND (claim_expires_at IS NULL OR claim_expires_at <= ${now})`
      const set = sql`claim_token = ${token}, claim_expires_at = ${until}`
      const rows = yield* sql.onDialectOrElse({
        // Locked once, in a materialised CTE: another dispatcher's rows are skipped, never waited for or taken twice.
        pg: () =>
          sql`WITH picked AS (SELECT id FROM ${table} WHERE ${due} ORDER BY ${sql.literal(order)} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
              UPDATE ${table} AS o SET ${set} FROM picked WHERE o.id = picked.id RETURNING ${sql.literal(aliased)}`,
        // SQLite runs one writer at a time: the statement is the claim.
        orElse: () =>
          sql`UPDATE ${table} SET ${set} WHERE id IN (SELECT id FROM ${table} WHERE ${due} ORDER BY ${sql.literal(order)} LIMIT ${limit})
              RETURNING ${columns}`
      })
      // RETURNING gives no order: put the rows back in save order.
      const sorted = [...yield* decodeRows(rows)].sort((a, b) =>
        a.created_at - b.created_at || (a.conversation_id < b.conversation_id ? -1 : a.conversation_id > b.conversation_id ? 1 : 0) ||
        a.version - b.version || a.position - b.position
      )
      return yield* Effect.forEach(sorted, (row) =>
        Effect.map(entryOf(row), (entry): Outbox.Claim => ({ entry, token, expiresAt: row.claim_expires_at ?? 0 })))
    }).pipe(retrying, Effect.mapError((error) => error._tag === "StoreError" ? error : storeError("claiming notifications")(error)))

  const delivered: Outbox.Service["delivered"] = (claimed, attempts) =>
    Effect.flatMap(leaseTime(0), (now) =>
      sql`UPDATE ${table} SET status = 'delivered', attempts = attempts + ${attempts}, delivered_at = ${now},
          last_error = NULL, claim_token = NULL, claim_expires_at = NULL
          WHERE id = ${claimed.entry.notification.id} AND status = 'pending'`).pipe(
      Effect.asVoid,
      retrying,
      Effect.mapError(storeError(`marking notification '${claimed.entry.notification.id}' delivered`))
    )

  const failed: Outbox.Service["failed"] = (claimed, attempts, error) =>
    sql`UPDATE ${table} SET status = 'failed', attempts = attempts + ${attempts}, last_error = ${error},
        claim_token = NULL, claim_expires_at = NULL
        WHERE id = ${claimed.entry.notification.id} AND claim_token = ${claimed.token} AND status = 'pending'`.pipe(
      Effect.asVoid,
      retrying,
      Effect.mapError(storeError(`marking notification '${claimed.entry.notification.id}' failed`))
    )

  const requeue: Outbox.Service["requeue"] = (id) =>
    sql`UPDATE ${table} SET status = 'pending', claim_token = NULL, claim_expires_at = NULL
        WHERE id = ${id} AND status = 'failed' RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      retrying,
      Effect.mapError(storeError(`requeueing notification '${id}'`))
    )

  const list: Outbox.Service["list"] = (options) =>
    Effect.gen(function*() {
      const limit = yield* Effect.mapError(Outbox.listLimit(options), refused)
      const status = options?.status === undefined ? sql`1 = 1` : sql`status = ${options.status}`
      const conversation = options?.conversationId === undefined ? sql`1 = 1` : sql`conversation_id = ${options.conversationId}`
      const rows = yield* sql`SELECT ${columns} FROM ${table} WHERE ${status} AND ${conversation}
          ORDER BY ${sql.literal(order)} LIMIT ${limit}`
      return yield* entries(rows)
    }).pipe(retrying, Effect.mapError((error) => error._tag === "StoreError" ? error : storeError("listing notifications")(error)))

  return { claim, delivered, failed, requeue, list }
}
