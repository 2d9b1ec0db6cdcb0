/**
 * chat-ts providers: the core `LanguageModel` and `EmbeddingModel` on the
 * official `openai` SDK (Chat Completions, Responses, Embeddings), for OpenAI
 * and OpenAI-compatible servers.
 *
 * @since 0.1.0
 */

/** The `openai` SDK client as an Effect service. */
export * as OpenAiClient from "./OpenAiClient.js"

/** `LanguageModel` on POST /chat/completions. */
export * as OpenAiChatCompletions from "./OpenAiChatCompletions.js"

/** `LanguageModel` on POST /responses. */
export * as OpenAiResponses from "./OpenAiResponses.js"

/** `EmbeddingModel` on POST /embeddings. */
export * as OpenAiEmbeddings from "./OpenAiEmbeddings.js"

/** Presets for OpenAI-compatible servers (Ollama, OpenRouter, DeepSeek, Groq, Together, Cerebras, Gemini, vLLM, llama.cpp). */
export * as OpenAiCompatible from "./OpenAiCompatible.js"

/** The defaults in one place: the model ids the docs and examples use, and the timeouts of every layer. */
export * as OpenAiDefaults from "./OpenAiDefaults.js"

/** Retry policies of model calls (core's `ProviderRetry`, shared by every provider). */
export * as Retry from "@chat-ts/core/ProviderRetry"
