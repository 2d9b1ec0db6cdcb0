import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Action, Chat, Messages, PauseReason, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number }),
  metadata: { requiresApproval: true }
})
const ListFiles = Tool.make("list_files", {
  description: "List files",
  parameters: {},
  success: Schema.Array(Schema.String),
  metadata: { requiresApproval: false }
})

const kit = Toolkit.withStrategy(
  Toolkit.make(DeleteFiles, ListFiles),
  (_call, meta) => (meta.requiresApproval ? Action.RequireApproval() : Action.Execute())
)

describe("seed flow", () => {
  it.effect("pauses, approves with edits, resumes to completion", () =>
    Effect.gen(function*() {
      const ran: Array<unknown> = []
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "c1", name: "list_files" }, { id: "c2", name: "delete_files", arguments: { paths: ["a.log", "b.log"] } }]),
        MockLanguageModel.text("Deleted.")
      ])
      const handlers = kit.toLayer({
        delete_files: ({ paths }) => Effect.sync(() => { ran.push(paths); return { deleted: paths.length } }),
        list_files: () => Effect.succeed(["a.log", "b.log"])
      })
      const chat = yield* Chat.make({ tools: [kit] }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      let result = yield* chat.complete(Messages.fromUser("Delete the old logs."))
      expect(result.outcome._tag).toBe("Paused")
      while (result.outcome._tag === "Paused") {
        let messages = result.messages
        for (const id of PauseReason.toolIds(result.outcome.reason)) {
          messages = yield* Messages.approve(messages, id, { paths: ["a.log"] })
        }
        result = yield* chat.resume(messages)
      }
      expect(result.outcome._tag).toBe("Complete")
      expect(ran).toEqual([["a.log"]])
      const json = Messages.toJson(result.messages)
      const back = yield* Messages.fromJson(json)
      expect(back).toEqual(result.messages)
    }))
})
