/**
 * @chat-ts/ai-sdk-provider: any AI SDK provider as a chat-ts model, and AI SDK
 * tools as a chat-ts toolkit. A `@ai-sdk/provider` language model
 * (specification v4 from AI SDK 7, or v3 from AI SDK 6) becomes the chat-ts
 * `LanguageModel`, an AI SDK embedding model the chat-ts `EmbeddingModel`, and
 * `tool({ inputSchema, execute, needsApproval })` values a `Toolkit` whose
 * approvals are chat-ts's durable pauses.
 *
 * @since 0.2.0
 */

/** Any AI SDK language model (v4 or v3) as the chat-ts `LanguageModel`. */
export * as AiSdkLanguageModel from "./AiSdkLanguageModel.js"

/** Any AI SDK embedding model (v4 or v3) as the chat-ts `EmbeddingModel`. */
export * as AiSdkEmbeddingModel from "./AiSdkEmbeddingModel.js"

/** The error of building a model on a value that is not an AI SDK model this package speaks. */
export * as AiSdkModelError from "./AiSdkModelError.js"

/** Retry policies of model calls (core's `ProviderRetry`, shared by every provider). */
export * as Retry from "@chat-ts/core/ProviderRetry"

/** AI SDK tools (`tool({ inputSchema, execute, needsApproval })`) as a chat-ts `Toolkit`. */
export * as AiSdkToolkit from "./AiSdkToolkit.js"
