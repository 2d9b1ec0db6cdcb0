/**
 * The notifications a store wrote with the states that caused them, until
 * they are delivered.
 *
 * A `ConversationStore` with an outbox (`ConversationStore.layerMemoryWithOutbox`,
 * `SqlConversationStore.layerWithOutbox`) writes the notifications of a save
 * (`Notification.between`) in that same save: in one transaction on SQL. So
 * a notification exists exactly when its state was stored, and a process
 * that dies after the save and before sending loses nothing: the next
 * dispatcher finds the row and sends it (`OutboxDispatcher`).
 *
 * Delivery is at least once. A dispatcher `claim`s pending rows for a while
 * (a claim of its own, as a lease: other dispatchers skip the row until the
 * claim expires), sends each, and marks it `delivered`, or `failed` with the
 * attempts it made and the last error (the row is kept: nothing is lost, an
 * operator can `requeue` it). A dispatcher that dies holding claims leaves
 * them to expire, and the rows are sent again: receivers deduplicate on the
 * notification's `id`.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as ChatError from "../data/ChatError.js"
import type * as Notification from "./Notification.js"

/**
 * Where a row is: waiting to be sent (maybe claimed), sent, or given up on.
 *
 * @category models
 * @since 0.3.0
 */
export type Status = "pending" | "delivered" | "failed"

/**
 * One row of the outbox.
 *
 * @category models
 * @since 0.3.0
 */
export interface Entry {
  readonly notification: Notification.Notification
  readonly status: Status
  /** How many times it was sent, every try counted (the one that was delivered too). */
  readonly attempts: number
  /** The last failure's text, when it failed. */
  readonly lastError?: string
  /** When it was delivered (epoch millis, store's clock). */
  readonly deliveredAt?: number
}

/**
 * A dispatcher's hold on a pending row.
 *
 * @category models
 * @since 0.3.0
 */
export interface Claim {
  readonly entry: Entry
  /** This claim's own id: `failed` checks it, so a dispatcher whose claim expired changes nothing. */
  readonly token: string
  /** When the claim ends (epoch millis, store's clock). */
  readonly expiresAt: number
}

/**
 * Options of `claim`.
 *
 * @category models
 * @since 0.3.0
 */
export interface ClaimOptions {
  /** The most rows to claim: an integer from 1 to `maxClaim`. */
  readonly limit: number
  /** How long the claim lasts (from 1 ms to a day): longer than sending the rows may take with every retry. */
  readonly ttl: number
}

/**
 * The most rows one `claim` takes.
 *
 * @category constants
 * @since 0.3.0
 */
export const maxClaim = 1000

/**
 * Options of `list`.
 *
 * @category models
 * @since 0.3.0
 */
export interface ListOptions {
  readonly status?: Status
  /** The conversation's rows only. */
  readonly conversationId?: string
  /** The most rows (default 100, at most `maxClaim`). */
  readonly limit?: number
}

/**
 * The outbox contract.
 *
 * @category models
 * @since 0.3.0
 */
export interface Service {
  /**
   * Claims up to `limit` pending rows that no live claim holds, oldest first (in save order), for `ttl`
   * milliseconds. Two dispatchers never hold the same row at once.
   */
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<Claim>, ChatError.StoreError>
  /** Marks a pending row delivered after `attempts` tries (whoever's claim it is now: it was sent); a row delivered or failed stays so. */
  readonly delivered: (claim: Claim, attempts: number) => Effect.Effect<void, ChatError.StoreError>
  /**
   * Marks a claimed row failed after `attempts` more tries, keeping `error`; only under this claim
   * (an expired claim, taken by another dispatcher, changes nothing). The row stays, with its attempts.
   */
  readonly failed: (claim: Claim, attempts: number, error: string) => Effect.Effect<void, ChatError.StoreError>
  /** Puts a failed row back to pending (an operator's retry); `false` when no failed row has this id. */
  readonly requeue: (id: string) => Effect.Effect<boolean, ChatError.StoreError>
  /** Rows, oldest first (for operators and tests). */
  readonly list: (options?: ListOptions) => Effect.Effect<ReadonlyArray<Entry>, ChatError.StoreError>
}

/**
 * The outbox of the conversation store in use.
 *
 * @category services
 * @since 0.3.0
 */
export class Outbox extends Context.Service<Outbox, Service>()("@chat-ts/core/Outbox") {}

/**
 * Checks `claim`'s options (a claim of zero rows or zero time is a mistake, never "no limit").
 *
 * @category utils
 * @since 0.3.0
 */
export const checkClaim = (options: ClaimOptions): Effect.Effect<ClaimOptions, string> =>
  Number.isInteger(options.limit) && options.limit >= 1 && options.limit <= maxClaim &&
    Number.isInteger(options.ttl) && options.ttl >= 1 && options.ttl <= 24 * 3600 * 1000
    ? Effect.succeed(options)
    : Effect.fail(`an outbox claim takes 1 to ${maxClaim} rows for 1 ms to a day, not ${options.limit} rows for ${options.ttl} ms`)

/**
 * `list`'s page size, checked.
 *
 * @category utils
 * @since 0.3.0
 */
export const listLimit = (options: ListOptions | undefined): Effect.Effect<number, string> => {
  const limit = options?.limit ?? 100
  return Number.isInteger(limit) && limit >= 1 && limit <= maxClaim
    ? Effect.succeed(limit)
    : Effect.fail(`an outbox list takes 1 to ${maxClaim} rows, not ${limit}`)
}
