/**
 * chat-ts on SQL databases: store paused conversations through `effect/sql`,
 * on PostgreSQL (`@effect/sql-pg`) or SQLite (this package's `SqliteClient`,
 * on Node's `node:sqlite`).
 *
 * @since 0.1.0
 */

/** A `ConversationStore` in a SQL database. */
export * as SqlConversationStore from "./SqlConversationStore.js"

/** A SQLite `SqlClient` on Node's built-in `node:sqlite`. */
export * as SqliteClient from "./SqliteClient.js"
