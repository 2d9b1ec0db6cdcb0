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
 * A run of a turn of a conversation holds its lease (`acquire`, `renew`,
 * `release`): a token of its own (a new one at every `acquire`), the owner's
 * name and an expiry on the store's clock. Any other run that tries to take it
 * (another worker, or another resume in the same process with the same owner)
 * gets `ConversationBusy` before it runs or changes anything; renewing,
 * releasing and saving check the token, so a run never renews, saves under or
 * removes another run's lease. A lease whose run died expires and can be
 * taken. `Worker.resume` does all of this in one call.
 *
 * A store may keep an outbox (`Outbox`): the notifications of each save
 * (`Notification.between` the stored state and the new one), written in the
 * same save, for a `Notifier` to be told once the state is safe.
 *
 * This module holds the contract and an in-memory store; `@chat-ts/sql`
 * stores conversations in SQL databases.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ChatError from "../data/ChatError.js"
import * as MemoryOutbox from "./internal/memoryOutbox.js"
import * as Messages from "../turn/Messages.js"
import * as Notification from "./Notification.js"
import * as Outbox from "./Outbox.js"

/**
 * A stored conversation.
 *
 * @category models
 * @since 0.1.0
 */
export interface Stored {
  readonly id: string
  readonly messages: Messages.Messages
  /** Starts at 1 and grows by one on every save. */
  readonly version: number
  /** When it was last saved (epoch millis). */
  readonly updatedAt: number
}

/**
 * A conversation waiting for decisions or times, as `listPending` reports it.
 *
 * @category models
 * @since 0.1.0
 */
export interface PendingSummary {
  readonly id: string
  readonly version: number
  readonly updatedAt: number
  /** The ids of its calls that wait (for approval, a time, or to run). */
  readonly pending: ReadonlyArray<string>
}

/**
 * One page of `listPending`.
 *
 * @category models
 * @since 0.1.0
 */
export interface PendingPage {
  readonly items: ReadonlyArray<PendingSummary>
  /** Where the next page starts (give it back as `cursor`); absent on the last page. */
  readonly cursor?: string
}

/**
 * Options of `listPending`.
 *
 * @category models
 * @since 0.1.0
 */
export interface ListOptions {
  /** The most conversations in the page: an integer from 1 to `maxPageSize` (default `defaultPageSize`). */
  readonly limit?: number
  /** The `cursor` of the previous page. */
  readonly cursor?: string
}

/**
 * The page size of `listPending` when none is given.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultPageSize = 100

/**
 * The largest page `listPending` gives.
 *
 * @category constants
 * @since 0.1.0
 */
export const maxPageSize = 1000

/**
 * One run's hold on a conversation while it runs a turn of it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Lease {
  readonly id: string
  /** Who took it (a name for people and logs, e.g. one id per process); two runs of one owner are still two leases. */
  readonly owner: string
  /** This acquisition's own id (unique per `acquire`, even for the same owner): `renew`, `release` and `save` check it, not the owner. */
  readonly token: string
  /** When it ends unless renewed (epoch millis, on the store's clock). */
  readonly expiresAt: number
}

/**
 * Options of `save`.
 *
 * @category models
 * @since 0.1.0
 */
export interface SaveOptions {
  /**
   * The version the messages were loaded at; `0` for a new conversation.
   * Without it the save overwrites whatever is stored (last write wins).
   */
  readonly expectedVersion?: number
  /** Saves only while this lease (its `token`) is still the conversation's; otherwise `ConversationBusy`. */
  readonly lease?: Lease
}

/**
 * The store contract.
 *
 * @category models
 * @since 0.1.0
 */
export interface Service {
  /** The conversation with this id, if stored; damaged data is `CorruptConversation`. */
  readonly load: (id: string) => Effect.Effect<Option.Option<Stored>, ChatError.StoreError | ChatError.CorruptConversation>
  /**
   * Saves the messages; fails with `ConcurrentModification` when `expectedVersion` is not the stored one,
   * with `ConversationBusy` when `lease` is given and is no longer the conversation's, and with
   * `StateEncodeError` (nothing written) when JSON cannot hold the messages.
   */
  readonly save: (
    id: string,
    messages: Messages.Messages,
    options?: SaveOptions
  ) => Effect.Effect<Stored, SaveError>
  /** The conversations with calls still pending, oldest first, one page at a time. */
  readonly listPending: (
    options?: ListOptions
  ) => Effect.Effect<PendingPage, ChatError.StoreError | ChatError.CorruptConversation>
  /** Removes a conversation (nothing happens if it is not stored). */
  readonly remove: (id: string) => Effect.Effect<void, ChatError.StoreError>
  /**
   * Takes the lease of a stored conversation for `ttl` when it is free or expired (its run died), with a new
   * `token`. Held by any run, even one of the same `owner`: `ConversationBusy`, and nothing changes.
   */
  readonly acquire: (
    id: string,
    owner: string,
    ttl: Duration.Input
  ) => Effect.Effect<Lease, ChatError.ConversationBusy | ChatError.ConversationNotFound | ChatError.StoreError>
  /** Extends a lease (its `token`) still held by `ttl` from now; released, or taken by another run: `ConversationBusy`. */
  readonly renew: (lease: Lease, ttl: Duration.Input) => Effect.Effect<Lease, ChatError.ConversationBusy | ChatError.StoreError>
  /** Gives a lease up (nothing happens if it is no longer the conversation's: another run's lease is never removed). */
  readonly release: (lease: Lease) => Effect.Effect<void, ChatError.StoreError>
  /**
   * Optional: `acquire` and `load` in one step (one statement on PostgreSQL), failing as they do; a
   * conversation that does not decode is `CorruptConversation` with the lease given back. Without it,
   * `acquireAndLoad` (the function) runs `acquire`, then `load`.
   */
  readonly acquireAndLoad?: (
    id: string,
    owner: string,
    ttl: Duration.Input
  ) => Effect.Effect<Leased, AcquireLoadError>
  /**
   * Optional: `save` under `options.lease` that gives the lease up in the same write (one commit); a
   * refused save writes nothing and the lease stays held. Without it, `saveAndRelease` (the function)
   * runs `save`, then `release`.
   */
  readonly saveAndRelease?: (
    id: string,
    messages: Messages.Messages,
    options: SaveOptions & { readonly lease: Lease }
  ) => Effect.Effect<Stored, SaveError>
}

/**
 * A lease just taken and the conversation as it was loaded under it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Leased {
  readonly lease: Lease
  readonly stored: Stored
}

/**
 * What `acquireAndLoad` may fail with.
 *
 * @category errors
 * @since 0.3.0
 */
export type AcquireLoadError =
  | ChatError.ConversationBusy
  | ChatError.ConversationNotFound
  | ChatError.CorruptConversation
  | ChatError.StoreError

/**
 * Takes the lease of conversation `id` and loads it: in one step when the store offers
 * `acquireAndLoad`, else `acquire` then `load` (a load that fails gives the lease back first).
 *
 * @category utils
 * @since 0.3.0
 */
export const acquireAndLoad = (
  store: Service,
  id: string,
  owner: string,
  ttl: Duration.Input
): Effect.Effect<Leased, AcquireLoadError> =>
  store.acquireAndLoad !== undefined
    ? store.acquireAndLoad(id, owner, ttl)
    : Effect.flatMap(store.acquire(id, owner, ttl), (lease) =>
      store.load(id).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new ChatError.ConversationNotFound({ id })),
          onSome: (stored) => Effect.succeed({ lease, stored })
        })),
        Effect.onError(() => Effect.ignore(store.release(lease)))
      ))

/**
 * Saves under `options.lease` and gives the lease up: in the same write when the store offers
 * `saveAndRelease`, else `save` then `release` (a release that fails is left to expire). A refused
 * save keeps the lease.
 *
 * @category utils
 * @since 0.3.0
 */
export const saveAndRelease = (
  store: Service,
  id: string,
  messages: Messages.Messages,
  options: SaveOptions & { readonly lease: Lease }
): Effect.Effect<Stored, SaveError> =>
  store.saveAndRelease !== undefined
    ? store.saveAndRelease(id, messages, options)
    : Effect.tap(store.save(id, messages, options), () => Effect.ignore(store.release(options.lease)))

/**
 * What `save` may fail with.
 *
 * @category errors
 * @since 0.1.0
 */
export type SaveError =
  | ChatError.StoreError
  | ChatError.ConcurrentModification
  | ChatError.ConversationBusy
  | ChatError.StateEncodeError

/**
 * The conversation store in use.
 *
 * @category services
 * @since 0.1.0
 */
export class ConversationStore extends Context.Service<ConversationStore, Service>()("@chat-ts/core/ConversationStore") {}

/**
 * The ids of the calls of a conversation that still wait.
 *
 * @category utils
 * @since 0.1.0
 */
export const pendingIds = (messages: Messages.Messages): ReadonlyArray<string> =>
  Messages.pendingTools(messages).map((call) => call.id)

/**
 * Checks an expected version against the stored one (`undefined` when nothing is stored).
 *
 * @category utils
 * @since 0.1.0
 */
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

/**
 * Checks `listPending`'s options, giving the page size and where the page starts.
 *
 * @category utils
 * @since 0.1.0
 */
export const pageOptions = (
  options: ListOptions | undefined
): Effect.Effect<{ readonly limit: number; readonly after?: readonly [number, string] }, ChatError.StoreError> => {
  const limit = options?.limit ?? defaultPageSize
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
    return Effect.fail(new ChatError.StoreError({ detail: `listPending: limit must be an integer from 1 to ${maxPageSize}, not ${limit}` }))
  }
  if (options?.cursor === undefined) return Effect.succeed({ limit })
  const match = /^(\d{1,16}):([^\u0000]+)$/s.exec(options.cursor)
  if (match === null) return Effect.fail(new ChatError.StoreError({ detail: "listPending: the cursor is not one this store gave" }))
  return Effect.succeed({ limit, after: [Number(match[1]), match[2]!] as const })
}

/**
 * The cursor after the last item of a page (when the page is full).
 *
 * @category utils
 * @since 0.1.0
 */
export const nextCursor = (items: ReadonlyArray<PendingSummary>, limit: number): { cursor?: string } => {
  const last = items[limit - 1]
  return items.length < limit || last === undefined ? {} : { cursor: `${last.updatedAt}:${last.id}` }
}

/** A lease's length in milliseconds: a whole number from 1 ms to a year; anything else is refused (a zero or
 * endless lease would let two workers in, or none ever again).
 *
 * @category utils
 * @since 0.1.0
 */
export const leaseMillis = (ttl: Duration.Input): Effect.Effect<number, ChatError.StoreError> => {
  const millis = Duration.fromInput(ttl).pipe(Option.map(Duration.toMillis), Option.getOrElse(() => Number.NaN))
  return Number.isFinite(millis) && millis >= 1 && millis <= 366 * 24 * 3600 * 1000
    ? Effect.succeed(Math.floor(millis))
    : Effect.fail(new ChatError.StoreError({ detail: `a lease lasts from 1 ms to a year, not ${String(ttl)}` }))
}

/**
 * A new lease token: unique per acquisition, in every process.
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeToken = (): string => globalThis.crypto.randomUUID()

/** A conversation's lease as a store keeps it. */
interface Held {
  readonly owner: string
  readonly token: string
  readonly expiresAt: number
}

const isHeld = (held: Held | undefined, now: number): boolean => held !== undefined && held.expiresAt > now

const isOf = (held: Held | undefined, lease: Lease): boolean => held !== undefined && held.token === lease.token

/** The in-memory store, writing the notifications of its saves to `outbox` when given. */
const memory = (outbox: ReturnType<typeof MemoryOutbox.make> | undefined): Service => {
  const rows = new Map<
    string,
    {
      document: string
      messages: Messages.Messages
      version: number
      updatedAt: number
      pending: ReadonlyArray<string>
      lease?: Held
    }
  >()
  const now = Effect.clockWith((clock) => clock.currentTimeMillis)
  /** Refused: another run's lease, with its end, while it lasts; else no lease at all (released or expired). */
  const busy = (id: string, held: Held | undefined, at: number) =>
    new ChatError.ConversationBusy(held !== undefined && held.expiresAt > at ? { id, expiresAt: held.expiresAt } : { id })
  const load: Service["load"] = (id) =>
    Effect.suspend(() => {
      const row = rows.get(id)
      if (row === undefined) return Effect.succeed(Option.none())
      return Effect.fromResult(Messages.fromJson(row.document)).pipe(
        Effect.mapError((error) => new ChatError.CorruptConversation({ id, detail: error.detail })),
        Effect.map((messages) => Option.some({ id, messages, version: row.version, updatedAt: row.updatedAt }))
      )
    })
  /** A save; with `release`, the lease it was made under is given up in the same step. */
  const write = (id: string, messages: Messages.Messages, options: SaveOptions | undefined, release: boolean) =>
    Effect.gen(function*() {
      const document = yield* Effect.fromResult(Messages.toJson(messages))
      const row = rows.get(id)
      const version = yield* checkVersion(id, row?.version, options)
      const updatedAt = yield* now
      const lease = options?.lease
      if (lease !== undefined && !isOf(row?.lease, lease)) {
        return yield* busy(id, row?.lease, updatedAt)
      }
      outbox?.append(Notification.make(id, version, updatedAt, Notification.between(row?.messages, messages)))
      rows.set(id, {
        document,
        messages,
        version,
        updatedAt,
        pending: pendingIds(messages),
        ...(row?.lease === undefined || release ? {} : { lease: row.lease })
      })
      return { id, messages, version, updatedAt }
    })
  const acquire: Service["acquire"] = (id, owner, ttl) =>
    Effect.flatMap(Effect.zip(leaseMillis(ttl), now), ([millis, at]): Effect.Effect<
      Lease,
      ChatError.ConversationBusy | ChatError.ConversationNotFound
    > => {
      const row = rows.get(id)
      if (row === undefined) return Effect.fail(new ChatError.ConversationNotFound({ id }))
      if (isHeld(row.lease, at)) return Effect.fail(busy(id, row.lease, at))
      const lease = { id, owner, token: makeToken(), expiresAt: at + millis }
      rows.set(id, { ...row, lease: { owner, token: lease.token, expiresAt: lease.expiresAt } })
      return Effect.succeed(lease)
    })
  const release = (lease: Lease): Effect.Effect<void> =>
    Effect.sync(() => {
      const row = rows.get(lease.id)
      if (row === undefined || !isOf(row.lease, lease)) return
      const { lease: _, ...rest } = row
      rows.set(lease.id, rest)
    })
  return {
    load,
    save: (id, messages, options) => write(id, messages, options, false),
    saveAndRelease: (id, messages, options) => write(id, messages, options, true),
    // One step: nothing else runs between the lease and the load.
    acquireAndLoad: (id, owner, ttl) =>
      Effect.flatMap(acquire(id, owner, ttl), (lease) =>
        load(id).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new ChatError.ConversationNotFound({ id })),
            onSome: (stored) => Effect.succeed({ lease, stored })
          })),
          Effect.onError(() => release(lease))
        )),
    listPending: (options) =>
      Effect.map(pageOptions(options), ({ after, limit }) => {
        const items = [...rows.entries()]
          .filter(([, row]) => row.pending.length > 0)
          .map(([id, row]) => ({ id, version: row.version, updatedAt: row.updatedAt, pending: row.pending }))
          .sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .filter((item) => after === undefined || item.updatedAt > after[0] || (item.updatedAt === after[0] && item.id > after[1]))
          .slice(0, limit)
        return { items, ...nextCursor(items, limit) }
      }),
    remove: (id) => Effect.sync(() => void rows.delete(id)),
    acquire,
    renew: (lease, ttl) =>
      Effect.flatMap(Effect.zip(leaseMillis(ttl), now), ([millis, at]) => {
        const row = rows.get(lease.id)
        if (row === undefined || !isOf(row.lease, lease)) {
          return Effect.fail(busy(lease.id, row?.lease, at))
        }
        const renewed = { ...lease, expiresAt: at + millis }
        rows.set(lease.id, { ...row, lease: { owner: lease.owner, token: lease.token, expiresAt: renewed.expiresAt } })
        return Effect.succeed(renewed)
      }),
    release
  }
}

/**
 * An in-memory store (for tests and single-process programs); stored documents are JSON, as in a database.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeMemory: Effect.Effect<Service> = Effect.sync(() => memory(undefined))

/**
 * A layer providing an in-memory store.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<ConversationStore> = Layer.effect(ConversationStore, makeMemory)

/**
 * An in-memory store with an outbox: each save writes its notifications with the state, in one step.
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeMemoryWithOutbox: Effect.Effect<{ readonly store: Service; readonly outbox: Outbox.Service }> = Effect.sync(
  () => {
    const outbox = MemoryOutbox.make()
    return { store: memory(outbox), outbox: outbox.service }
  }
)

/**
 * A layer providing an in-memory store and its outbox.
 *
 * @category layers
 * @since 0.3.0
 */
export const layerMemoryWithOutbox: Layer.Layer<ConversationStore | Outbox.Outbox> = Layer.effectContext(
  Effect.map(makeMemoryWithOutbox, ({ outbox, store }) =>
    Context.make(ConversationStore, store).pipe(Context.add(Outbox.Outbox, outbox)))
)

/**
 * A `checkpoint` for `chat.complete` / `resume` / `stream` that saves every
 * state of the turn to the store, starting from `version` and checking each
 * save against the previous one. When another writer saved first, the turn
 * stops with `ConcurrentModification` (before anything runs, if it lost the
 * race to resume); with a `lease`, a save after another run took the lease
 * (or after it was released) stops it with `ConversationBusy`.
 *
 * @category utils
 * @since 0.1.0
 */
export const checkpoint = (
  store: Service,
  id: string,
  version: number,
  lease?: Lease
): (messages: Messages.Messages) => Effect.Effect<void, SaveError> => {
  let current = version
  return (messages) =>
    store.save(id, messages, { expectedVersion: current, ...(lease === undefined ? {} : { lease }) }).pipe(
      Effect.tap((stored) => Effect.sync(() => (current = stored.version))),
      Effect.asVoid
    )
}
