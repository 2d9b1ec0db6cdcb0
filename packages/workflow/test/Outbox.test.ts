/**
 * The workflow shell over a store with an outbox: its saves give the same notifications as the
 * in-process shells' (a pause, a decision, the resume, the completion), each written with its state.
 */
import { ConversationStore, Messages, Outbox } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatWorkflow, Decision } from "../src/index.js"
import { eventually, handlers, recorder, turns } from "./fixtures.js"

describe("ChatWorkflow with an outbox", () => {
  it.effect("pause, decision, resume and completion are notifications of the turn's conversation", () => {
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([
        { id: "c1", name: "list_files", arguments: { folder: "logs" } },
        { id: "c2", name: "delete_files", arguments: { paths: ["a.log"] } }
      ]),
      MockLanguageModel.text("Deleted.")
    ])
    const layer = ChatWorkflow.layer(turns).pipe(
      Layer.provideMerge(Layer.mergeAll(WorkflowEngine.layerMemory, ConversationStore.layerMemoryWithOutbox, model.layer, handlers(recorder())))
    )
    return Effect.gen(function*() {
      const outbox = yield* Outbox.Outbox
      const id = yield* turns.start("conv-1", Messages.fromUser("Delete the old logs."))
      yield* eventually(turns.read(id), (view) => view.status._tag === "Waiting")
      const kinds = () => Effect.map(outbox.list({ conversationId: id }), (entries) => entries.map((entry) => entry.notification.kind))
      expect(yield* kinds()).toEqual(["Paused"])
      const [paused] = yield* outbox.list({ conversationId: id })
      expect(paused!.notification.calls).toEqual([{ id: "c2", name: "delete_files", status: "AwaitingApproval" }])
      yield* turns.decide(id, "c2", Decision.approve())
      yield* eventually(turns.read(id), (view) => view.status._tag === "Complete")
      expect(yield* kinds()).toEqual(["Paused", "Decided", "Resumed", "Completed"])
    }).pipe(Effect.provide(layer))
  })
})
