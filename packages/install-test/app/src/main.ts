// A user's app, compiled with plain tsc under strict settings and run with plain node
// against the installed tarballs: one turn on the scripted test model, and the same
// turn on OpenAI Chat Completions when OPENAI_BASE_URL is set (the tests' fake server).
// Each turn pauses for an approval, goes through JSON, and resumes.
import { Action, Chat, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { OpenAiChatCompletions, OpenAiClient } from "@chat-ts/providers"
import { Effect, Layer, Schema } from "effect"

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files for good",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number }),
  metadata: { requiresApproval: true }
})
const tools = Toolkit.make(DeleteFiles).pipe(
  Toolkit.withStrategy((_call, meta) => (meta.requiresApproval ? Action.RequireApproval() : Action.Execute()))
)

const turn = Effect.gen(function*() {
  const deleted: Array<string> = []
  const handlers = tools.toLayer({
    delete_files: ({ paths }) => Effect.sync(() => deleted.push(...paths)).pipe(Effect.as({ deleted: paths.length }))
  })
  const chat = yield* Chat.make({ tools }).pipe(Effect.provide(handlers))
  const first = yield* chat.complete(Messages.fromUser("Delete the old logs: a.log and b.log"))
  if (first.outcome._tag !== "Paused") return yield* Effect.dieMessage(`expected a pause, got ${first.outcome._tag}`)
  const waiting = PauseReason.approvalIds(first.outcome.reason)
  const ranBeforeApproval = deleted.length
  // The pause is plain JSON: store it, read it back, approve, resume.
  let messages = yield* Messages.fromJson(Messages.toJson(first.messages))
  for (const id of waiting) messages = yield* Messages.approve(messages, id)
  const done = yield* chat.resume(messages)
  if (done.outcome._tag !== "Complete") return yield* Effect.dieMessage(`expected an answer, got ${done.outcome._tag}`)
  return { waiting, ranBeforeApproval, deleted, answer: done.outcome.value }
})

const scripted = MockLanguageModel.make([
  MockLanguageModel.toolCalls([{ id: "call_1", name: "delete_files", arguments: { paths: ["a.log", "b.log"] } }]),
  MockLanguageModel.text("Deleted a.log and b.log.")
])
const openAi = OpenAiChatCompletions.layer({ model: "fake-model" }).pipe(Layer.provide(OpenAiClient.layerConfig()))

const program = Effect.gen(function*() {
  const withScript = yield* turn.pipe(Effect.provide(scripted.layer))
  const withOpenAi = process.env["OPENAI_BASE_URL"] === undefined ? null : yield* turn.pipe(Effect.provide(openAi))
  console.log(JSON.stringify({ scripted: withScript, openAi: withOpenAi }))
})

Effect.runPromise(program).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
