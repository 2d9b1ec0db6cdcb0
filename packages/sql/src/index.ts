/**
 * chat-ts on SQL databases: store paused conversations through `@effect/sql`.
 *
 * @since 0.1.0
 */

/** A `ConversationStore` in a SQL database. */
export * as SqlConversationStore from "./SqlConversationStore.js"
