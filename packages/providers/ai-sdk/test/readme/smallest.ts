/**
 * The README's smallest program, word for word between the region markers
 * (test/readme.test.ts compares them and runs it against a loopback server).
 */
// #region smallest
import { mistral } from "@ai-sdk/mistral"
import { AiSdkLanguageModel } from "@chat-ts/ai-sdk-provider"
import { Chat, Messages } from "@chat-ts/core"
import { Effect } from "effect"

const Mistral = AiSdkLanguageModel.layer({ model: mistral("mistral-large-latest") })

export const program = Effect.gen(function*() {
  const chat = yield* Chat.make()
  return yield* chat.complete(Messages.fromUser("Say hello in French."))
}).pipe(Effect.provide(Mistral))
// #endregion smallest
