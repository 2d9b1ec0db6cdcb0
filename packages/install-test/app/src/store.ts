import type { ConversationStore, ChatError } from "@chat-ts/core"
import { SqlConversationStore } from "@chat-ts/sql"
import type { SqlClient } from "effect/sql"
import type { Layer } from "effect"

// The store's layer, typed as a user would write it: it needs the app's SqlClient.
export const storeLayer: Layer.Layer<ConversationStore.ConversationStore, ChatError.StoreError, SqlClient.SqlClient> =
  SqlConversationStore.layer({ table: "conversations" })

console.log(JSON.stringify({ store: typeof SqlConversationStore.make }))
