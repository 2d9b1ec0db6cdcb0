/**
 * Where paused conversations live between a pause and its resume.
 *
 * A store keeps each conversation's messages under an id with a version
 * number. Saving with the version you loaded (`expectedVersion`) fails with
 * `ConcurrentModification` when someone saved in between, so two workers that
 * resume the same pause cannot both run its calls. `listPending` finds every
 * conversation waiting for a decision or a time, so approvals can be
 * rediscovered after a restart.
 *
 * This module holds the contract and an in-memory store; `@chat-ts/sql`
 * stores conversations in SQL databases.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ChatError from "./ChatError.js"
import * as Messages from "./Messages.js"

/** A stored conversation. */
export interface Stored {
  readonly id: string
  readonly messages: Messages.Messages
  /** Starts at 1 and grows by one on every save. */
  readonly version: number
  /** When it was last saved (epoch millis). */
  readonly updatedAt: number
}

/** A conversation waiting for decisions or times, as `listPending` reports it. */
export interface PendingSummary {
  readonly id: string
  readonly version: number
  readonly updatedAt: number
  /** The ids of its calls that wait (for approval, a time, or to run). */
  readonly pending: ReadonlyArray<string>
}

/** Options of `save`. */
export interface SaveOptions {
  /**
   * The version the messages were loaded at; `0` for a new conversation.
   * Without it the save overwrites whatever is stored (last write wins).
   */
  readonly expectedVersion?: number
}

/** The store contract. */
export interface Service {
  /** The conversation with this id, if stored. */
  readonly load: (id: string) => Effect.Effect<Option.Option<Stored>, ChatError.StoreError | ChatError.StateDecodeError>
  /**
   * Saves the messages; fails with `ConcurrentModification` when `expectedVersion` is not the stored one,
   * and with `StateEncodeError` (nothing written) when JSON cannot hold them.
   */
  readonly save: (
    id: string,
    messages: Messages.Messages,
    options?: SaveOptions
  ) => Effect.Effect<Stored, ChatError.StoreError | ChatError.ConcurrentModification | ChatError.StateEncodeError>
  /** Every conversation with calls still pending, oldest first. */
  readonly listPending: Effect.Effect<ReadonlyArray<PendingSummary>, ChatError.StoreError>
  /** Removes a conversation (nothing happens if it is not stored). */
  readonly remove: (id: string) => Effect.Effect<void, ChatError.StoreError>
}

/** The conversation store in use. */
export class ConversationStore extends Context.Tag("@chat-ts/core/ConversationStore")<ConversationStore, Service>() {}

/** The ids of the calls of a conversation that still wait. */
export const pendingIds = (messages: Messages.Messages): ReadonlyArray<string> =>
  Messages.pendingTools(messages).map((call) => call.id)

/** Checks an expected version against the stored one (`undefined` when nothing is stored). */
export const checkVersion = (
  id: string,
  stored: number | undefined,
  options: SaveOptions | undefined
): Effect.Effect<number, ChatError.ConcurrentModification> => {
  const expected = options?.expectedVersion
  if (expected === undefined || expected === (stored ?? 0)) return Effect.succeed((stored ?? 0) + 1)
  return Effect.fail(
    new ChatError.ConcurrentModification({
      id,
      expectedVersion: expected,
      ...(stored === undefined ? {} : { actualVersion: stored })
    })
  )
}

/** An in-memory store (for tests and single-process programs); stored documents are JSON, as in a database. */
export const makeMemory: Effect.Effect<Service> = Effect.sync(() => {
  const rows = new Map<string, { document: string; version: number; updatedAt: number; pending: ReadonlyArray<string> }>()
  return {
    load: (id) =>
      Effect.suspend(() => {
        const row = rows.get(id)
        if (row === undefined) return Effect.succeed(Option.none())
        return Effect.map(Messages.fromJson(row.document), (messages) =>
          Option.some({ id, messages, version: row.version, updatedAt: row.updatedAt }))
      }),
    save: (id, messages, options) =>
      Effect.gen(function*() {
        const document = yield* Messages.toJson(messages)
        const version = yield* checkVersion(id, rows.get(id)?.version, options)
        const updatedAt = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        rows.set(id, { document, version, updatedAt, pending: pendingIds(messages) })
        return { id, messages, version, updatedAt }
      }),
    listPending: Effect.sync(() =>
      [...rows.entries()]
        .filter(([, row]) => row.pending.length > 0)
        .map(([id, row]) => ({ id, version: row.version, updatedAt: row.updatedAt, pending: row.pending }))
        .sort((a, b) => a.updatedAt - b.updatedAt)
    ),
    remove: (id) => Effect.sync(() => void rows.delete(id))
  }
})

/** A layer providing an in-memory store. */
export const layerMemory: Layer.Layer<ConversationStore> = Layer.effect(ConversationStore, makeMemory)

/**
 * A `checkpoint` for `chat.complete` / `resume` / `stream` that saves every
 * state of the turn to the store, starting from `version` and checking each
 * save against the previous one. When another writer saved first, the turn
 * stops with `ConcurrentModification` (before anything runs, if it lost the
 * race to resume).
 */
export const checkpoint = (
  store: Service,
  id: string,
  version: number
): (messages: Messages.Messages) => Effect.Effect<void, ChatError.StoreError | ChatError.ConcurrentModification | ChatError.StateEncodeError> => {
  let current = version
  return (messages) =>
    store.save(id, messages, { expectedVersion: current }).pipe(
      Effect.tap((stored) => Effect.sync(() => (current = stored.version))),
      Effect.asVoid
    )
}
