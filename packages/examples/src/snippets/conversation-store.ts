// Persistence: paused turns in a ConversationStore (in memory here; SQL with @chat-ts/sql).
// #region imports
import { Chat, ConversationStore, Messages } from "@chat-ts/core"
import { Effect, Option } from "effect"
// #endregion imports

// #region store
/** Handling a request: run the turn; if it pauses, store it under `id` (a new conversation: version 0). */
export const start = (chat: Chat.Service, id: string, request: string) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const result = yield* chat.complete(Messages.fromUser(request))
    if (result.outcome._tag === "Paused") yield* store.save(id, result.messages, { expectedVersion: 0 })
    return result
  })

/** Later, in any process: approvals for conversation `id` arrive. */
export const approveAll = (chat: Chat.Service, id: string) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const stored = yield* Effect.flatten(store.load(id)) // NoSuchElementException if unknown
    let messages = stored.messages
    for (const call of Messages.pendingTools(messages).filter(Messages.isAwaitingDecision)) {
      messages = yield* Messages.approve(messages, call.id)
    }
    // Every state of the resumed turn is saved; a worker that loaded an older version stops.
    return yield* chat.resume(messages, { checkpoint: ConversationStore.checkpoint(store, id, stored.version) })
  })

/** After a restart: which conversations still wait, and on which calls. */
export const waiting = Effect.flatMap(ConversationStore.ConversationStore, (store) => store.listPending)
// #endregion store

/** The ids of the stored conversations that still wait. */
export const waitingIds = Effect.map(waiting, (pending) => pending.map((p) => p.id))

/** Whether a conversation is stored. */
export const isStored = (id: string) =>
  Effect.flatMap(ConversationStore.ConversationStore, (store) => Effect.map(store.load(id), Option.isSome))
