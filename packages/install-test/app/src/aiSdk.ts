import { AiSdkLanguageModel } from "@chat-ts/ai-sdk-provider"
import { Action, Chat, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { Console, Effect, Schema } from "effect"

// An AI SDK model (specification v4) written inline, as a provider package would ship it:
// it asks to delete two files, then answers once the call's result came back.
type Model = AiSdkLanguageModel.Options["model"]
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}
const answerTo = (prompt: ReadonlyArray<{ readonly role: string }>) =>
  prompt.some((message) => message.role === "tool")
    ? { content: [{ type: "text" as const, text: "Deleted a.log and b.log." }], finishReason: { unified: "stop" as const, raw: "stop" } }
    : {
      content: [{ type: "tool-call" as const, toolCallId: "call_1", toolName: "delete_files", input: JSON.stringify({ paths: ["a.log", "b.log"] }) }],
      finishReason: { unified: "tool-calls" as const, raw: "tool_calls" }
    }
const model: Model = {
  specificationVersion: "v4",
  provider: "inline",
  modelId: "inline-1",
  supportedUrls: {},
  doGenerate: async ({ prompt }) => ({ ...answerTo(prompt), usage, warnings: [] }),
  doStream: async ({ prompt }) => {
    const { content, finishReason } = answerTo(prompt)
    return {
      stream: new ReadableStream({
        start(controller) {
          for (const part of content) {
            if (part.type === "text") controller.enqueue({ type: "text-delta", id: "0", delta: part.text })
            else controller.enqueue(part)
          }
          controller.enqueue({ type: "finish", usage, finishReason })
          controller.close()
        }
      })
    }
  }
}

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

const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools })
  const first = yield* chat.complete(Messages.fromUser("Delete a.log and b.log"))
  if (first.outcome._tag !== "Paused") return
  const ids = PauseReason.approvalIds(first.outcome.reason)
  yield* Console.log(`paused for ${ids.join(", ")}`)
  let messages = yield* Effect.fromResult(Messages.fromJson(yield* Effect.fromResult(Messages.toJson(first.messages))))
  for (const id of ids) messages = yield* Effect.fromResult(Messages.approve(messages, id))
  const done = yield* chat.resume(messages)
  if (done.outcome._tag === "Complete") yield* Console.log(done.outcome.value)
})

Effect.runPromise(program.pipe(Effect.provide([AiSdkLanguageModel.layer({ model }), handlers])))
