/**
 * The rows of the SQL store: decoding what the database returns (every
 * malformed row a typed refusal naming what is wrong), encoding messages one
 * by one, and the small helpers of delta writes.
 *
 * @since 0.1.0
 * @internal
 */
import type { ChatError, ConversationStore } from "@chat-ts/core"
import * as Messages from "@chat-ts/core/Messages"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** A `bigint` (PostgreSQL's BIGINT, SQLite's safe integers) as a number. */
const BigIntAsNumber = Schema.BigInt.pipe(Schema.decodeTo(
  Schema.Int,
  SchemaTransformation.transform({ decode: (n: bigint) => Number(n), encode: (n: number) => BigInt(n) })
))

/** A whole number from the database (exported for the outbox's rows): a number, a numeric string or a `bigint`, as drivers return BIGINT columns. */
export const Whole = Schema.Union([Schema.Int, Schema.NumberFromString.check(Schema.isInt()), BigIntAsNumber])

const formatIssue = SchemaIssue.makeFormatterDefault()

const formatError = (error: Schema.SchemaError): string => formatIssue(error.issue)

/** Decodes what a save returns: the new version and the conversation's incarnation. */
export const decodeWritten = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ version: Whole, incarnation: Schema.String })))

/** What a store knows of a conversation it read or wrote. */
export interface Known {
  readonly incarnation: string
  readonly version: number
  readonly messages: Messages.Messages
}

/** Decodes the lease expiries returned by `acquire` / `renew`. */
export const decodeExpiries = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ lease_expires_at: Whole })))

/** Decodes a conversation's version and lease. */
export const decodeLeaseRows = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({
  version: Whole,
  lease_owner: Schema.NullOr(Schema.String),
  lease_expires_at: Schema.NullOr(Whole)
})))

const PendingRow = Schema.Struct({
  id: Schema.String,
  version: Whole,
  updated_at: Whole,
  pending: Schema.fromJsonString(Schema.NonEmptyArray(Schema.String))
})
const decodePendingRow = Schema.decodeUnknownResult(PendingRow)

/** Decodes one row of `listPending`; a damaged row names its conversation. */
export const decodePending = (
  row: unknown
): Result.Result<ConversationStore.PendingSummary, { readonly id: string; readonly detail: string }> =>
  Result.mapBoth(decodePendingRow(row), {
    onFailure: (error) => ({
      id: typeof row === "object" && row !== null && "id" in row ? String(row.id) : "(unknown)",
      detail: `its pending calls cannot be read: ${formatError(error)}`
    }),
    onSuccess: (r) => ({ id: r.id, version: r.version, updatedAt: r.updated_at, pending: r.pending })
  })

const ConversationHead = Schema.Struct({
  incarnation: Schema.String,
  version: Whole,
  updated_at: Whole,
  message_count: Whole
})
const decodeHead = Schema.decodeUnknownResult(ConversationHead)

/** A message row's position and body; checked by hand, as a conversation may have many thousands. */
const messageRow = (row: unknown): { readonly position: number; readonly body: string } | null | undefined => {
  if (typeof row !== "object" || row === null) return undefined
  const { body, position } = row as { readonly position?: unknown; readonly body?: unknown }
  if (position === null && body === null) return null
  const at = typeof position === "string" && /^\d+$/.test(position)
    ? Number(position)
    : typeof position === "bigint"
    ? Number(position)
    : position
  return typeof at === "number" && Number.isSafeInteger(at) && typeof body === "string" ? { position: at, body } : undefined
}

/** Puts a conversation back together from its row joined with its message rows; a failure says what is damaged. */
export const decodeConversation = (
  id: string,
  rows: ReadonlyArray<unknown>
): Result.Result<Option.Option<{ readonly incarnation: string; readonly stored: ConversationStore.Stored }>, string> => {
  if (rows.length === 0) return Result.succeed(Option.none())
  return Result.flatMap(Result.mapError(decodeHead(rows[0]), formatError), (head) => {
    const bodies: Array<string> = []
    for (const row of rows) {
      const message = messageRow(row)
      if (message === null) continue
      if (message === undefined) return Result.fail(`message row ${bodies.length} is malformed`)
      if (message.position !== bodies.length) return Result.fail(`message ${bodies.length} is missing`)
      bodies.push(message.body)
    }
    if (bodies.length !== head.message_count) {
      return Result.fail(`it has ${bodies.length} of its ${head.message_count} messages`)
    }
    const document = `{"format":"chat-ts/messages","version":${Messages.currentVersion},"messages":[${bodies.join(",")}]}`
    return Result.mapBoth(Messages.fromJson(document), {
      onFailure: (error) => error.detail,
      onSuccess: (messages) =>
        Option.some({ incarnation: head.incarnation, stored: { id, messages, version: head.version, updatedAt: head.updated_at } })
    })
  })
}

/** One message as the JSON its row holds (the same as its entry in `Messages.toJson`), or why JSON cannot hold it. */
export const encodeMessage = (message: Messages.Messages[number]): Result.Result<string, ChatError.StateEncodeError> =>
  Result.map(Messages.encode([message]), (document) => JSON.stringify(document.messages[0]))

/** The positions whose message is not the one stored (messages are immutable: a kept message is the same object). */
export const changedPositions = (stored: Messages.Messages, next: Messages.Messages): ReadonlyArray<number> => {
  const changed: Array<number> = []
  for (let i = 0; i < next.length; i++) {
    if (stored[i] !== next[i]) changed.push(i)
  }
  return changed
}

/** Splits an array into arrays of at most `size`. */
export const chunks = <A>(items: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** A map that forgets its least recently used entries beyond `capacity`. */
export const lru = <K, V>(capacity: number) => {
  const entries = new Map<K, V>()
  return {
    get: (key: K): V | undefined => {
      const value = entries.get(key)
      if (value !== undefined) {
        entries.delete(key)
        entries.set(key, value)
      }
      return value
    },
    set: (key: K, value: V): void => {
      entries.delete(key)
      entries.set(key, value)
      if (entries.size > capacity) entries.delete(entries.keys().next().value as K)
    },
    delete: (key: K): void => void entries.delete(key)
  }
}

/** The stored messages from their rows (`position`, `body`, in order); `undefined` when they do not decode. */
export const decodeBodies = (rows: ReadonlyArray<unknown>): Messages.Messages | undefined => {
  const bodies: Array<string> = []
  for (const row of rows) {
    const message = messageRow(row)
    if (message === null || message === undefined || message.position !== bodies.length) return undefined
    bodies.push(message.body)
  }
  const document = `{"format":"chat-ts/messages","version":${Messages.currentVersion},"messages":[${bodies.join(",")}]}`
  return Result.getOrUndefined(Messages.fromJson(document))
}
