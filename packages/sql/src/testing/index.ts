/**
 * Test support for `@chat-ts/sql`: a throwaway PostgreSQL server, and the
 * faults a fleet should survive (a stalling network, a server's connections
 * cut, a full disk).
 *
 * @since 0.1.0
 */

/** A real PostgreSQL server on 127.0.0.1, started and removed by tests and benchmarks. */
export * as EmbeddedPostgres from "./EmbeddedPostgres.js"

/**
 * Faults of a PostgreSQL server: its client connections terminated, a disk that cannot take more.
 *
 * @since 0.3.0
 */
export * as PostgresFaults from "./PostgresFaults.js"

/**
 * A loopback TCP proxy that stops forwarding and starts again.
 *
 * @since 0.3.0
 */
export * as StallingProxy from "./StallingProxy.js"
