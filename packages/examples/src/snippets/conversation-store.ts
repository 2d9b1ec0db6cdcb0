// Persistence: paused turns in a ConversationStore (in memory here; SQL with @chat-ts/sql).
// #region imports
import { Chat, ConversationStore, Messages, Worker } from "@chat-ts/core"
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

/**
 * Later, in any process: approvals for conversation `id` arrive. `Worker.resume` leases the
 * conversation (another worker running it: `ConversationBusy`, before anything runs), loads it,
 * applies the decisions, resumes the turn saving every state, and gives the lease back.
 */
export const approveAll = (chat: Chat.Service, id: string) =>
  Worker.resume(chat, id, (stored) =>
    Effect.reduce(
      Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
      () => stored.messages,
      (messages, call) => Effect.fromResult(Messages.approve(messages, call.id))
    ))

/** After a restart: which conversations still wait (oldest first, a page at a time), and on which calls. */
export const waiting = Effect.flatMap(ConversationStore.ConversationStore, (store) => store.listPending({ limit: 100 }))
// #endregion store

/** The ids of the stored conversations that still wait. */
export const waitingIds = Effect.map(waiting, (page) => page.items.map((p) => p.id))

/** Whether a conversation is stored. */
export const isStored = (id: string) =>
  Effect.flatMap(ConversationStore.ConversationStore, (store) => Effect.map(store.load(id), Option.isSome))
