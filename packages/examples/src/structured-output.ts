/**
 * Structured output: ask for a JSON answer that decodes with an Effect Schema
 * and get a typed value back.
 *
 *   npx tsx src/structured-output.ts
 */
// #region imports
import { Chat, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Effect, Schema } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

// #region program
const User = Schema.Struct({
  name: Schema.String,
  likes: Schema.Array(Schema.String)
}).annotate({ identifier: "User" })

export const program = Effect.gen(function*() {
  const chat = yield* Chat.make()
  const result = yield* chat.completeStructured(
    Messages.fromUser("Extract the user: “Hi, I'm Ada. I love mathematics, poetry and long walks.”"),
    User
  )
  if (result.outcome._tag === "Complete") {
    const user = result.outcome.value // typed: { name: string; likes: readonly string[] }
    yield* Console.log(`${user.name} likes ${user.likes.join(", ")}.`)
  }
  return result
})
// #endregion program

/** The offline model: answers JSON when asked for a response format. */
export const offline: MockLanguageModel.Script = (request) =>
  request.options.responseFormat === undefined
    ? MockLanguageModel.text("Ada likes mathematics, poetry and long walks.")
    : MockLanguageModel.text(JSON.stringify({ name: "Ada", likes: ["mathematics", "poetry", "long walks"] }))

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Models.languageModel(choice, offline))))
}
