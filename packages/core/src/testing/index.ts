/**
 * The chat-ts test kit: a scripted `LanguageModel` that records what it was
 * asked, for deterministic tests of agents built on chat-ts.
 *
 * @since 0.1.0
 */

/** A scripted model for tests. */
export * as MockLanguageModel from "./MockLanguageModel.js"
