/**
 * The in-memory store's outbox: rows appended by its `save`, claimed and
 * marked by dispatchers, on Effect's `Clock`.
 */
import * as Effect from "effect/Effect"
import * as ChatError from "../../data/ChatError.js"
import type * as Notification from "../Notification.js"
import * as Outbox from "../Outbox.js"

interface Row {
  entry: Outbox.Entry
  claim?: { readonly token: string; readonly expiresAt: number }
}

/** An outbox in memory, and how a save adds to it. */
export const make = () => {
  const rows = new Map<string, Row>()
  const now = Effect.clockWith((clock) => clock.currentTimeMillis)
  const refused = (detail: string) => new ChatError.StoreError({ detail })
  const append = (notifications: ReadonlyArray<Notification.Notification>): void => {
    for (const notification of notifications) rows.set(notification.id, { entry: { notification, status: "pending", attempts: 0 } })
  }
  const service: Outbox.Service = {
    claim: (options) =>
      Effect.gen(function*() {
        const { limit, ttl } = yield* Effect.mapError(Outbox.checkClaim(options), refused)
        const at = yield* now
        const claims: Array<Outbox.Claim> = []
        for (const row of rows.values()) {
          if (claims.length >= limit) break
          if (row.entry.status !== "pending" || (row.claim !== undefined && row.claim.expiresAt > at)) continue
          row.claim = { token: globalThis.crypto.randomUUID(), expiresAt: at + ttl }
          claims.push({ entry: row.entry, ...row.claim })
        }
        return claims
      }),
    delivered: (claim, attempts) =>
      Effect.map(now, (at) => {
        const row = rows.get(claim.entry.notification.id)
        if (row === undefined || row.entry.status !== "pending") return
        const { lastError: _, ...entry } = row.entry
        rows.set(entry.notification.id, {
          entry: { ...entry, status: "delivered", attempts: row.entry.attempts + attempts, deliveredAt: at }
        })
      }),
    failed: (claim, attempts, error) =>
      Effect.sync(() => {
        const row = rows.get(claim.entry.notification.id)
        if (row === undefined || row.claim?.token !== claim.token || row.entry.status !== "pending") return
        rows.set(claim.entry.notification.id, {
          entry: { ...row.entry, status: "failed", attempts: row.entry.attempts + attempts, lastError: error }
        })
      }),
    requeue: (id) =>
      Effect.sync(() => {
        const row = rows.get(id)
        if (row === undefined || row.entry.status !== "failed") return false
        rows.set(id, { entry: { ...row.entry, status: "pending" } })
        return true
      }),
    list: (options) =>
      Effect.map(Effect.mapError(Outbox.listLimit(options), refused), (limit) =>
        [...rows.values()]
          .map((row) => row.entry)
          .filter((entry) =>
            (options?.status === undefined || entry.status === options.status) &&
            (options?.conversationId === undefined || entry.notification.conversationId === options.conversationId)
          )
          .slice(0, limit))
  }
  return { service, append }
}
