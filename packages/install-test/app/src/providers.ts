import { Action, Chat, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { OpenAiChatCompletions, OpenAiClient, OpenAiDefaults } from "@chat-ts/openai"
import { Console, Effect, Layer, Schema } from "effect"

// A tool, and a strategy that asks a person before any call that needs approval.
const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files for good",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number }),
  metadata: { requiresApproval: true }
})
const tools = Toolkit.make(DeleteFiles).pipe(
  Toolkit.withStrategy((_call, meta) => (meta.requiresApproval ? Action.RequireApproval() : Action.Execute()))
)
const handlers = tools.toLayer({
  delete_files: ({ paths }) => Console.log(`deleting ${paths.join(", ")}`).pipe(Effect.as({ deleted: paths.length }))
})

// OpenAI's Chat Completions; OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible server) from the environment.
const model = OpenAiChatCompletions.layer({ model: OpenAiDefaults.chatModel }).pipe(Layer.provide(OpenAiClient.layerConfig()))

const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools })
  const first = yield* chat.complete(Messages.fromUser("Delete a.log and b.log"))
  if (first.outcome._tag !== "Paused") return
  const ids = PauseReason.approvalIds(first.outcome.reason)
  yield* Console.log(`paused for ${ids.join(", ")}`)
  // A pause is plain JSON: store it anywhere, read it back later.
  let messages = yield* Effect.fromResult(Messages.fromJson(yield* Effect.fromResult(Messages.toJson(first.messages))))
  for (const id of ids) messages = yield* Effect.fromResult(Messages.approve(messages, id)) // a person said yes
  const done = yield* chat.resume(messages)
  if (done.outcome._tag === "Complete") yield* Console.log(done.outcome.value)
})

Effect.runPromise(program.pipe(Effect.provide([model, handlers])))
