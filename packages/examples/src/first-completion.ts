/**
 * A first completion: one question, one answer.
 *
 *   npx tsx src/first-completion.ts
 */
// #region imports
import { Chat, ChatOutcome, LanguageModel, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Effect } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

// #region program
export const program: Effect.Effect<
  ChatOutcome.Result,
  Chat.TurnError | Chat.MakeError,
  LanguageModel.LanguageModel
> = Effect.gen(function*() {
  const chat = yield* Chat.make()
  const result = yield* chat.complete(Messages.fromUser("In one sentence: what is a tool call?"))
  if (ChatOutcome.isComplete(result.outcome)) {
    const { inputTokens, outputTokens } = result.outcome.usage
    yield* Console.log(result.outcome.value)
    yield* Console.log(`(${inputTokens} tokens in, ${outputTokens} out)`)
  }
  return result
})
// #endregion program

/** The offline model's answer. */
export const offline: MockLanguageModel.Script = [
  MockLanguageModel.text(
    "A tool call is the model asking your program to run a named function with JSON arguments, " +
      "so it can read the result before it answers."
  )
]

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Models.languageModel(choice, offline))))
}
