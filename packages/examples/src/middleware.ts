/**
 * A custom `LanguageModel` middleware as a Layer: one that logs every model
 * call (messages in, finish reason and tokens out) and one that adds a system
 * prompt to every request. The chat does not know they are there.
 *
 *   npx tsx src/middleware.ts
 */
// #region imports
import { Chat, ChatOutcome, LanguageModel, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Effect, Layer, Stream } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

// #region logging
/** Logs each model call: how many messages went in, how it finished, the tokens used. */
export const logging = LanguageModel.middleware((model) => ({
  generate: (request) =>
    model.generate(request).pipe(
      Effect.tap((response) =>
        Console.log(
          `[model] ${request.messages.length} messages -> ${response.finishReason}, ` +
            `${response.usage.inputTokens} in / ${response.usage.outputTokens} out`
        )
      )
    ),
  stream: (request) =>
    model.stream(request).pipe(
      Stream.tap((part) =>
        part._tag === "Finish"
          ? Console.log(`[model] ${request.messages.length} messages -> ${part.finishReason} (streamed)`)
          : Effect.void
      )
    )
}))
// #endregion logging

// #region system
/** Puts a system prompt in front of every request. */
export const pirateVoice = LanguageModel.mapRequest((request) => ({
  ...request,
  messages: [Messages.system("Answer like a friendly pirate, in one sentence."), ...request.messages]
}))
// #endregion system

// #region layer
/** The middlewares over any model: the system prompt is added first, then the call is logged. */
export const withMiddleware = <E, R>(
  model: Layer.Layer<LanguageModel.LanguageModel, E, R>
): Layer.Layer<LanguageModel.LanguageModel, E, R> =>
  pirateVoice.pipe(Layer.provide(logging), Layer.provide(model))
// #endregion layer

export const program = Effect.gen(function*() {
  const chat = yield* Chat.make()
  const result = yield* chat.complete(Messages.fromUser("Where should I keep my savings?"))
  if (ChatOutcome.isComplete(result.outcome)) yield* Console.log(result.outcome.value)
  return result
})

/** The offline model: talks like a pirate only when a system prompt asks it to. */
export const offline: MockLanguageModel.Script = (request) =>
  request.messages.some((m) => m.role === "system" && Messages.textOf(m).includes("pirate"))
    ? MockLanguageModel.text("Arr, a sturdy bank beats a buried chest, matey: it pays interest and no parrot can dig it up!")
    : MockLanguageModel.text("A savings account at a well-regulated bank is a safe place.")

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(withMiddleware(Models.languageModel(choice, offline)))))
}
