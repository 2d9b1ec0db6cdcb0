/**
 * chat-ts on Anthropic: the core `LanguageModel` on Claude's Messages API,
 * through the official `@anthropic-ai/sdk`.
 *
 * @since 0.1.0
 */

/** The `@anthropic-ai/sdk` client as an Effect service. */
export * as AnthropicClient from "./AnthropicClient.js"

/** `LanguageModel` on POST /v1/messages. */
export * as AnthropicLanguageModel from "./AnthropicLanguageModel.js"

/** The defaults in one place: the model id the docs and examples use, and the model layer's timeouts. */
export * as AnthropicDefaults from "./AnthropicDefaults.js"

/** Retry policies of model calls (core's `ProviderRetry`, shared by every provider). */
export * as Retry from "@chat-ts/core/ProviderRetry"
