/**
 * @chat-ts/ai-sdk-provider: any AI SDK provider as a chat-ts model. A
 * `@ai-sdk/provider` language model (specification V4 from AI SDK 7, or V3
 * from AI SDK 6) becomes a chat-ts `LanguageModel` layer, an AI SDK
 * embedding model a chat-ts `EmbeddingModel`.
 */
export {}
