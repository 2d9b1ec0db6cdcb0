/**
 * chat-ts for Google Gemini: the core `LanguageModel` and `EmbeddingModel` on
 * the official `@google/genai` SDK (the Gemini API's generateContent and
 * embeddings), with thought signatures, thinking, function-calling modes and
 * structured output.
 *
 * @since 0.1.0
 */

/** The `@google/genai` SDK client as an Effect service. */
export * as GoogleClient from "./GoogleClient.js"

/** `LanguageModel` on Gemini's generateContent. */
export * as GoogleLanguageModel from "./GoogleLanguageModel.js"

/** `EmbeddingModel` on Gemini's embeddings. */
export * as GoogleEmbeddings from "./GoogleEmbeddings.js"

/** JSON Schema to Gemini's schema subset. */
export * as GoogleSchema from "./GoogleSchema.js"

/** The defaults in one place: the model ids the docs and examples use, and the layers' timeouts. */
export * as GoogleDefaults from "./GoogleDefaults.js"

/** Retry policies of model calls (core's `ProviderRetry`, shared by every provider). */
export * as Retry from "@chat-ts/core/ProviderRetry"
