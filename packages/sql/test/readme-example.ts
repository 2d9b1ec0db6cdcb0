import { type Chat, type ChatError, type ChatOutcome, ConversationStore, type Messages } from "@chat-ts/core"
import { SqlConversationStore } from "@chat-ts/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Option } from "effect"

// The table (default `chat_ts_conversations`) is created when the layer is built.
export const StoreLive = (filename: string) =>
  SqlConversationStore.layer().pipe(Layer.provideMerge(SqliteClient.layer({ filename })))

// A worker: take the oldest pending conversation, apply a person's decisions, resume with checkpoints.
export const resumeOldest = (
  chat: Chat.Service,
  decide: (messages: Messages.Messages) => Effect.Effect<Messages.Messages, ChatError.ResolveError>
): Effect.Effect<
  ChatOutcome.Result | undefined,
  ChatError.ChatError,
  ConversationStore.ConversationStore
> =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const [oldest] = yield* store.listPending
    if (oldest === undefined) return undefined
    const stored = Option.getOrThrow(yield* store.load(oldest.id))
    return yield* chat.resume(yield* decide(stored.messages), {
      // Saves every state of the turn; refuses to go on if another worker saved first.
      checkpoint: ConversationStore.checkpoint(store, stored.id, stored.version)
    })
  })
