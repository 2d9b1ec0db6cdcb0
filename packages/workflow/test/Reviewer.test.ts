/**
 * A reviewer model's verdict survives the durable shell: the decision the
 * strategy activity records keeps it, so the waiting call carries it as it
 * does in `Chat`.
 */
import { Chat, ConversationStore, Messages, Reviewer } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatWorkflow } from "../src/index.js"
import { eventually, files, handlers, recorder } from "./fixtures.js"

const ask = Messages.fromUser("What is in the logs folder?")

const script = () => [
  MockLanguageModel.toolCalls([{ id: "c1", name: "list_files", arguments: { folder: "logs" } }]),
  MockLanguageModel.text("Two logs.")
]

const review = { verdict: "needs-person", reason: "The folder may hold secrets.", confidence: 0.9 } as const

/** The reviewer always asks for a person. */
const reviewed = files.pipe(
  Reviewer.review({ model: MockLanguageModel.make(() => MockLanguageModel.text(JSON.stringify(review))) })
)

const reviewedTurns = ChatWorkflow.make({ name: "reviewed-turn", tools: reviewed })

describe("ChatWorkflow with a reviewer", () => {
  it.effect("the verdict is on the waiting call, as in Chat", () => {
    const rec = recorder()
    const model = MockLanguageModel.make(script())
    const layer = ChatWorkflow.layer(reviewedTurns).pipe(
      Layer.provideMerge(Layer.mergeAll(WorkflowEngine.layerMemory, ConversationStore.layerMemory, model.layer, handlers(rec)))
    )
    return Effect.gen(function*() {
      const id = yield* reviewedTurns.start("conv-r", ask)
      const paused = yield* eventually(reviewedTurns.read(id), (view) => view.status._tag === "Waiting")
      expect(paused.status).toEqual({ _tag: "Waiting", reason: { _tag: "AwaitingApproval", toolIds: ["c1"] } })
      expect(rec.calls).toEqual([])
      const expected = { _tag: "AwaitingApproval", review }
      expect((yield* reviewedTurns.pending(id)).map((call) => call.status)).toEqual([expected])

      // The in-process shell reaches the same status for the same script.
      const inProcess = MockLanguageModel.make(script())
      const chat = yield* Chat.make({ tools: reviewed }).pipe(Effect.provide(Layer.merge(inProcess.layer, handlers(recorder()))))
      const result = yield* chat.complete(ask)
      expect(Messages.findTool(result.messages, "c1")?.status).toEqual(expected)
    }).pipe(Effect.provide(layer))
  })
})
