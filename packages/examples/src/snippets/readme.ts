// The README's example: a tool that needs a person's approval, on OpenAI.
// Run it with OPENAI_API_KEY set: npx tsx src/snippets/readme.ts
// #region readme
import { Action, Chat, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { OpenAiChatCompletions, OpenAiClient, OpenAiDefaults } from "@chat-ts/openai"
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer, Schema } from "effect"
import { Prompt } from "effect/cli"

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files for good",
  parameters: { paths: Schema.Array(Schema.String) },
  metadata: { requiresApproval: true }
})
const tools = Toolkit.make(DeleteFiles).pipe(
  Toolkit.withStrategy((_call, meta) => (meta.requiresApproval ? Action.RequireApproval() : Action.Execute()))
)

const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools })
  let result = yield* chat.complete(Messages.fromUser("Delete the old logs: a.log and b.log"))
  while (result.outcome._tag === "Paused") { // the turn waits for a person
    let messages = result.messages
    for (const id of PauseReason.approvalIds(result.outcome.reason)) {
      const call = Messages.findTool(messages, id)!
      const ok = yield* Prompt.Confirm({ message: `Run ${call.name} ${call.arguments}?` })
      const decided = ok ? Messages.approve(messages, id) : Messages.reject(messages, id, "Not now")
      messages = yield* Effect.fromResult(decided)
    }
    result = yield* chat.resume(messages) // the same turn, picked back up
  }
  yield* Console.log(result.outcome.value)
})

const model = OpenAiChatCompletions.layer({ model: OpenAiDefaults.chatModel }).pipe(Layer.provide(OpenAiClient.layerConfig()))
const handlers = tools.toLayer({ delete_files: ({ paths }) => Console.log(`deleting ${paths.join(", ")}`) })

program.pipe(Effect.provide([model, handlers, NodeServices.layer]), NodeRuntime.runMain)
// #endregion readme
