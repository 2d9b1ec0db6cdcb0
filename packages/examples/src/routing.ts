/**
 * A chat through the model router: a primary model first, a fallback when the
 * primary fails on its side (rate limited, overloaded, down), a circuit
 * breaker that leaves a failing model out for a while, and the answering
 * model recorded in the conversation.
 *
 * With ANTHROPIC_API_KEY and OPENAI_API_KEY set it asks Claude first and falls
 * back to OpenAI; with OPENAI_API_KEY alone it routes between two OpenAI
 * models; offline, the primary is a scripted model that is overloaded, so the
 * fallback answers.
 *
 *   npx tsx src/routing.ts
 */
// #region imports
import { AnthropicClient, AnthropicDefaults, AnthropicLanguageModel } from "@chat-ts/anthropic"
import { Chat, ChatError, ChatOutcome, LanguageModel, Messages, Router } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { OpenAiChatCompletions, OpenAiClient, OpenAiDefaults } from "@chat-ts/openai"
import { Config, Console, Effect, Layer, Option } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import type * as Models from "./shared/Models.js"

// #region strategy
/** Long conversations go to the model with the larger window first; the rest keep the given order. */
export const longContextFirst: Router.Strategy = (request, models) =>
  Effect.sync(() => {
    const characters = request.messages.reduce((n, message) => n + Messages.textOf(message).length, 0)
    const byWindow = [...models].sort((a, b) => (b.contextWindow ?? 0) - (a.contextWindow ?? 0))
    return (characters > 200_000 ? byWindow : models).map((model) => model.name)
  })
// #endregion strategy

// #region router
/** Two models behind one `LanguageModel`: `primary` first, `fallback` when it fails on its side. */
export const routed = <E1, R1, E2, R2>(
  primary: Layer.Layer<LanguageModel.LanguageModel, E1, R1>,
  fallback: Layer.Layer<LanguageModel.LanguageModel, E2, R2>
) =>
  Router.layer({
    models: [
      { name: "primary", model: primary, contextWindow: 128_000 },
      { name: "fallback", model: fallback, contextWindow: 1_000_000 }
    ],
    // Stay on the model that answered while a turn goes on (a resumed turn too).
    strategy: Router.sticky(longContextFirst),
    breaker: { failureThreshold: 3, recoveryTime: "30 seconds" }
  })

/**
 * Claude first, OpenAI when Claude is rate limited, overloaded or down. The
 * providers' own retries are off (`retry: false`): the router moves on at
 * once instead of waiting out Claude's backoff.
 */
export const claudeFirst = routed(
  AnthropicLanguageModel.layer({ model: AnthropicDefaults.model, retry: false }).pipe(
    Layer.provide(AnthropicClient.layerConfig())
  ),
  OpenAiChatCompletions.layer({ model: OpenAiDefaults.chatModel, retry: false }).pipe(Layer.provide(OpenAiClient.layerConfig()))
)

/** The OpenAI pair: the default model first, a smaller one as the fallback. */
export const openAiPair = routed(
  OpenAiChatCompletions.layer({ model: OpenAiDefaults.chatModel }),
  OpenAiChatCompletions.layer({ model: "gpt-5.4-mini" })
).pipe(Layer.provide(OpenAiClient.layerConfig()))
// #endregion router

// #region program
export const program = Effect.gen(function*() {
  const chat = yield* Chat.make()
  const result = yield* chat.complete(Messages.fromUser("In one sentence: why route between two models?"))
  if (ChatOutcome.isComplete(result.outcome)) yield* Console.log(result.outcome.value)
  // Which model answered is in the assistant message's provider metadata.
  yield* Console.log(`(answered by ${Router.answeredBy(result.messages) ?? "?"})`)
  const breakers = yield* Effect.flatMap(Router.Router, (router) => router.breakers)
  yield* Console.log(`(breakers: ${[...breakers].map(([name, state]) => `${name} ${state._tag}`).join(", ")})`)
  return result
})
// #endregion program

/** Offline: the primary is overloaded, the fallback answers. */
export const offlinePrimary = () =>
  MockLanguageModel.make(() => Effect.fail(new ChatError.ServerError({ message: "Overloaded", status: 529 })))
export const offlineFallback = () =>
  MockLanguageModel.make(() =>
    MockLanguageModel.text("A router keeps the chat answering when one model is rate limited or down.")
  )

/** The router of a choice: Claude first when both keys are set, else the OpenAI pair, or the offline one. */
export const routerOf = (choice: Models.Choice) =>
  Layer.unwrap(Effect.map(
    Config.option(Config.NonEmptyString("ANTHROPIC_API_KEY")).pipe(Effect.orElseSucceed(() => Option.none())),
    (anthropicKey) =>
      choice._tag === "OpenAi"
        ? (Option.isSome(anthropicKey) ? claudeFirst : openAiPair)
        : routed(offlinePrimary().layer, offlineFallback().layer)
  ))

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(routerOf(choice))), { offlineName: "scripted models (primary overloaded)" })
}
