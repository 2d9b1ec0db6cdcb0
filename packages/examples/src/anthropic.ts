/**
 * Claude through `@chat-ts/anthropic`: a tool that needs approval pauses the
 * turn, a person approves it with edited arguments, the turn resumes. With
 * extended thinking on, Claude's signed thinking blocks are kept in the
 * messages and sent back unchanged when the turn resumes.
 *
 *   ANTHROPIC_API_KEY=… npx tsx src/anthropic.ts
 */
// #region imports
import { AnthropicClient, AnthropicDefaults, AnthropicLanguageModel } from "@chat-ts/anthropic"
import { Action, Chat, ChatOutcome, type LanguageModel, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { Console, Effect, Layer, Schema } from "effect"
// #endregion imports
import { MockLanguageModel } from "@chat-ts/core/testing"
import { isMain } from "./shared/main.js"

// #region layer
// Reads ANTHROPIC_API_KEY (required, as a redacted secret) and the optional ANTHROPIC_BASE_URL.
export const Claude = AnthropicLanguageModel.layer({
  model: AnthropicDefaults.model,
  maxTokens: 4096,
  thinking: { type: "enabled", budgetTokens: 2048 },
  promptCaching: true
}).pipe(Layer.provide(AnthropicClient.layerConfig()))
// #endregion layer

// #region program
const SendEmail = Tool.make("send_email", {
  description: "Sends an email.",
  parameters: { to: Schema.String, body: Schema.String },
  success: Schema.Struct({ sent: Schema.Boolean })
})

const toolkit = Toolkit.make(SendEmail).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

export const handlers = toolkit.toLayer({ send_email: () => Effect.succeed({ sent: true }) })

export const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: toolkit, system: "You write short emails." })
  const first = yield* chat.complete(Messages.fromUser("Tell bob@example.com the build is green."))
  if (!ChatOutcome.isPaused(first.outcome)) return first
  // A person approves the call, with a friendlier text.
  let messages = first.messages
  for (const id of PauseReason.approvalIds(first.outcome.reason)) {
    const edited = { to: "bob@example.com", body: "Good news: the build is green!" }
    messages = yield* Effect.fromResult(Messages.approve(messages, id, edited))
  }
  const done = yield* chat.resume(messages)
  if (ChatOutcome.isComplete(done.outcome)) yield* Console.log(done.outcome.value)
  return done
})
// #endregion program

/** The offline model's answers, used when no ANTHROPIC_API_KEY is set. */
export const offline: MockLanguageModel.Script = [
  MockLanguageModel.toolCalls([{ name: "send_email", arguments: { to: "bob@example.com", body: "The build is green." } }]),
  MockLanguageModel.text("Sent.")
]

/** Claude when ANTHROPIC_API_KEY is set, else the scripted model. */
const model: Layer.Layer<LanguageModel.LanguageModel, unknown> = process.env["ANTHROPIC_API_KEY"] === undefined
  ? MockLanguageModel.make(offline).layer
  : Claude

if (isMain(import.meta.url)) {
  Effect.runPromise(program.pipe(Effect.provide(Layer.merge(model, handlers)))).catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
