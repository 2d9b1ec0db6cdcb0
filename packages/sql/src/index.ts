/**
 * chat-ts on SQL databases: store paused conversations through `effect/sql`,
 * on PostgreSQL (`@effect/sql-pg`) or SQLite (this package's `SqliteClient`,
 * on Node's `node:sqlite`).
 *
 * @since 0.1.0
 */

/** One migrating process at a time (a PostgreSQL advisory lock): the store's and the workflow cluster's migrations. */
export * as MigrationLock from "./MigrationLock.js"

/** A `ConversationStore` in a SQL database. */
export * as SqlConversationStore from "./SqlConversationStore.js"

/** A SQLite `SqlClient` on Node's built-in `node:sqlite`. */
export * as SqliteClient from "./SqliteClient.js"
