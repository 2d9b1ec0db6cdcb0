/**
 * Tool results with a size in the workflow shell (issue 32, section 4): the
 * workflow records each call's result in its own activity and in the stored
 * conversation; both get the result as core's encoding cut it, so a 4 MB
 * result makes neither a 4 MB model request nor a 4 MB stored document, and
 * the full result goes to the `ToolResult.Store` of the layer's context.
 */
import { Action, ConversationStore, Messages, Tool, Toolkit, ToolResult } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Result, Schema } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatWorkflow } from "../src/index.js"
import { eventually } from "./fixtures.js"

const big = "a line of a large file\n".repeat(200_000).slice(0, 4_000_000)

const Read = Tool.make("read", { description: "Read a file.", parameters: { path: Schema.String }, success: Schema.String })
const tools = Toolkit.withStrategy(Toolkit.make(Read), () => Action.Execute())
const turns = ChatWorkflow.make({ name: "big-results", tools })

describe("ChatWorkflow records results within their cap", () => {
  it.effect("a 4 MB result: the next request, the stored conversation and the Store", () => {
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "c1", name: "read", arguments: { path: "big.txt" } }]),
      MockLanguageModel.text("Read it.")
    ])
    return Effect.gen(function*() {
      const memory = yield* ToolResult.makeMemoryStore
      const layer = ChatWorkflow.layer(turns).pipe(
        Layer.provideMerge(Layer.mergeAll(
          WorkflowEngine.layerMemory,
          ConversationStore.layerMemory,
          model.layer,
          tools.toLayer({ read: () => Effect.succeed(big) }),
          Layer.succeed(ToolResult.Store, memory.store)
        ))
      )
      yield* Effect.gen(function*() {
        const id = yield* turns.start("conv-big", Messages.fromUser("Read big.txt"))
        const done = yield* eventually(turns.read(id), (view) => view.status._tag === "Complete" || view.status._tag === "Failed")
        expect(done.status._tag).toBe("Complete")
        const request = model.requests[model.requests.length - 1]!
        const shown = Messages.projectToolCall(Messages.findTool(request.messages, "c1")!).result!.text
        expect(shown).toContain("shown 50,000 of 4,000,000 characters")
        expect(JSON.stringify(request.messages).length).toBeLessThan(60_000)
        expect(Result.getOrThrow(Messages.toJson(done.messages)).length).toBeLessThan(60_000)
        const stored = Option.getOrThrow(yield* (yield* ConversationStore.ConversationStore).load(id))
        expect(Result.getOrThrow(Messages.toJson(stored.messages)).length).toBeLessThan(60_000)
        const ref = /kept by the application as "([^"]+)"/.exec(shown)?.[1]
        expect(memory.get(ref!)?.value).toBe(big)
      }).pipe(Effect.provide(layer))
    })
  })
})
