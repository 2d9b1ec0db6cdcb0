/**
 * Test support for `@chat-ts/sql`: a throwaway PostgreSQL server.
 *
 * @since 0.1.0
 */

/** A real PostgreSQL server on 127.0.0.1, started and removed by tests and benchmarks. */
export * as EmbeddedPostgres from "./EmbeddedPostgres.js"
