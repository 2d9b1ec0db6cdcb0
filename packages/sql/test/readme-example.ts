import { ChatError, type ChatOutcome, type Chat, ConversationStore, type Messages, Worker } from "@chat-ts/core"
import { SqlConversationStore } from "@chat-ts/sql"
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer } from "effect"

// PostgreSQL, its URL a secret read from the environment (SQLite: SqliteClient.layer({ filename }) from @chat-ts/sql).
export const DatabaseLive = PgClient.layerConfig({ url: Config.Redacted("DATABASE_URL") })

// Run per deploy, by a role that may change the schema: creates or updates the tables (many at once is safe).
export const Migrate = SqlConversationStore.layerMigrate().pipe(Layer.provide(DatabaseLive))

// What every worker builds: the client and the store, no DDL.
export const StoreLive = SqlConversationStore.layer().pipe(Layer.provideMerge(DatabaseLive))

// A worker: resume the oldest waiting conversation no other worker is running, with a person's decisions.
export const resumeOldest = (
  chat: Chat.Service,
  decide: (messages: Messages.Messages) => Effect.Effect<Messages.Messages, ChatError.ResolveError>
): Effect.Effect<ChatOutcome.Result | undefined, ChatError.ChatError, ConversationStore.ConversationStore> =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const { items } = yield* store.listPending({ limit: 10 })
    for (const waiting of items) {
      // Leases, loads, decides, resumes saving every state, releases; busy: nothing ran, try the next one.
      // A StoreError worth retrying (a lock held past the store's budget, a lost connection): the stored
      // state is the last good one; try the next one, and this one again on a later round.
      const result = yield* Worker.resume(chat, waiting.id, (stored) => decide(stored.messages)).pipe(
        Effect.catchIf(
          (error) => Worker.isBusy(error) || ChatError.isRetryableStoreError(error),
          () => Effect.succeed(undefined)
        )
      )
      if (result !== undefined) return result
    }
    return undefined
  })
