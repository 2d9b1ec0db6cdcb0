/**
 * @chat-ts/effect-ai: Effect's own AI module (`effect/ai`) and chat-ts
 * together: any `effect/ai` `LanguageModel` as a `@chat-ts/core`
 * `LanguageModel`, and any `effect/ai` `Toolkit` as a chat-ts toolkit.
 *
 * @since 0.1.0
 */

/** The bridge from an `effect/ai` `LanguageModel` to chat-ts's. */
export * as EffectAi from "./EffectAi.js"

/** An `effect/ai` `Toolkit` (tools and handlers) in a chat-ts `Chat`, its `needsApproval` failing closed. */
export * as EffectAiToolkit from "./EffectAiToolkit.js"
