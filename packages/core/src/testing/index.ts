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

/**
 * An agent as the property kit sees it: toolkit, handlers, deciders and what you promise.
 *
 * @category testing
 * @since 0.3.0
 */
export * as Agent from "./Agent.js"

/**
 * A scenario driving one turn: the model's script, then decisions, clock moves, resumes and crashes.
 *
 * @category testing
 * @since 0.3.0
 */
export * as Scenario from "./Scenario.js"

/**
 * Runs a scenario against an agent and records its runs, decisions, checkpoints and model requests.
 *
 * @category testing
 * @since 0.3.0
 */
export * as Trace from "./Trace.js"

/**
 * The laws of the loop, checked on traces, and a failure as a readable report.
 *
 * @category testing
 * @since 0.3.0
 */
export * as Law from "./Law.js"
