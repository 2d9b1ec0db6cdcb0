/**
 * The rows of the SQL store: decoding what the database returns (every
 * malformed row a typed refusal naming what is wrong), encoding messages one
 * by one, and the small helpers of delta writes.
 *
 * @since 0.1.0
 * @internal
 */
import { type ConversationStore, Messages } from "@chat-ts/core"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A whole number from the database (PostgreSQL returns BIGINT columns as strings). */
const Whole = Schema.Union(Schema.Int, Schema.compose(Schema.NumberFromString, Schema.Int))

const formatError = (error: ParseResult.ParseError): string => ParseResult.TreeFormatter.formatErrorSync(error)

/** Decodes the versions returned by a save. */
export const decodeVersions = Schema.decodeUnknown(Schema.Array(Schema.Struct({ version: Whole })))

/** Decodes the lease expiries returned by `acquire` / `renew`. */
export const decodeExpiries = Schema.decodeUnknown(Schema.Array(Schema.Struct({ lease_expires_at: Whole })))

/** Decodes a conversation's version and lease. */
export const decodeLeaseRows = Schema.decodeUnknown(Schema.Array(Schema.Struct({
  version: Whole,
  lease_owner: Schema.NullOr(Schema.String),
  lease_expires_at: Schema.NullOr(Whole)
})))

const PendingRow = Schema.Struct({
  id: Schema.String,
  version: Whole,
  updated_at: Whole,
  pending: Schema.parseJson(Schema.NonEmptyArray(Schema.String))
})
const decodePendingRow = Schema.decodeUnknownEither(PendingRow)

/** Decodes one row of `listPending`; a damaged row names its conversation. */
export const decodePending = (
  row: unknown
): Either.Either<ConversationStore.PendingSummary, { readonly id: string; readonly detail: string }> =>
  Either.mapBoth(decodePendingRow(row), {
    onLeft: (error) => ({
      id: typeof row === "object" && row !== null && "id" in row ? String(row.id) : "(unknown)",
      detail: `its pending calls cannot be read: ${formatError(error)}`
    }),
    onRight: (r) => ({ id: r.id, version: r.version, updatedAt: r.updated_at, pending: r.pending })
  })

const ConversationRow = Schema.Struct({
  version: Whole,
  updated_at: Whole,
  message_count: Whole,
  position: Schema.NullOr(Whole),
  body: Schema.NullOr(Schema.String)
})
const decodeConversationRows = Schema.decodeUnknownEither(Schema.Array(ConversationRow))

/** Puts a conversation back together from its row joined with its message rows; `Left` says what is damaged. */
export const decodeConversation = (
  id: string,
  rows: ReadonlyArray<unknown>
): Either.Either<Option.Option<ConversationStore.Stored>, string> =>
  Either.flatMap(Either.mapLeft(decodeConversationRows(rows), formatError), (decoded) => {
    const head = decoded[0]
    if (head === undefined) return Either.right(Option.none())
    const bodies: Array<string> = []
    for (const row of decoded) {
      if (row.position === null || row.body === null) continue
      if (row.position !== bodies.length) return Either.left(`message ${bodies.length} is missing`)
      bodies.push(row.body)
    }
    if (bodies.length !== head.message_count) {
      return Either.left(`it has ${bodies.length} of its ${head.message_count} messages`)
    }
    const document = `{"format":"chat-ts/messages","version":${Messages.currentVersion},"messages":[${bodies.join(",")}]}`
    return Either.mapBoth(Messages.fromJson(document), {
      onLeft: (error) => error.detail,
      onRight: (messages) => Option.some({ id, messages, version: head.version, updatedAt: head.updated_at })
    })
  })

/** One message as the JSON its row holds (the same as its entry in `Messages.toJson`). */
export const encodeMessage = (message: Messages.Messages[number]): string =>
  JSON.stringify(Messages.encode([message]).messages[0])

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
