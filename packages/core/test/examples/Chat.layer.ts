/** The `@example` of `Chat.layer` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { Effect, Schema } from "effect"

const Now = Tool.make("now", { description: "The current time.", parameters: {}, success: Schema.Number })
const ClockTools = Toolkit.make(Now)

// The chat as a service, for the program's other layers (needs a LanguageModel and the handlers).
const ChatLive = Chat.layer({ tools: ClockTools })

const ask = (question: string) =>
  Effect.gen(function*() {
    const chat = yield* Chat.Chat
    return yield* chat.complete(Messages.fromUser(question))
  })

const program = ask("What time is it?").pipe(Effect.provide(ChatLive))
// #endregion

export { ClockTools, program }
