/**
 * @chat-ts/effect-ai: any `@effect/ai` language model (OpenAI, Anthropic,
 * Google, Bedrock…) as a `@chat-ts/core` `LanguageModel`.
 *
 * @since 0.1.0
 */

/** The bridge from an `@effect/ai` `LanguageModel` to chat-ts's. */
export * as EffectAi from "./EffectAi.js"
