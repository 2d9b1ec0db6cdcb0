/**
 * The chat-ts test kit: a scripted `LanguageModel` that records what it was
 * asked, for deterministic tests of agents built on chat-ts.
 *
 * @since 0.1.0
 */

/**
 * A scripted model for tests.
 *
 * @category testing
 * @since 0.1.0
 */
export * as MockLanguageModel from "./MockLanguageModel.js"

/**
 * A loopback HTTP server replaying recorded API traffic to a provider's real SDK, recording its requests.
 *
 * @category testing
 * @since 0.1.0
 */
export * as ReplayServer from "./ReplayServer.js"

/**
 * The provider conformance suite: scenarios every `LanguageModel` must pass against its replay server.
 *
 * @category testing
 * @since 0.1.0
 */
export * as Conformance from "./Conformance.js"
