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

/** A tool returning a screenshot: its 6 MB of base64 taken out as a file by `splitFiles`. */
const Shot = Tool.make("shot", {
  description: "A screenshot.",
  parameters: {},
  success: Schema.Struct({ png: Schema.String }),
  splitFiles: ({ png }) => ({ result: { png: { file: 0 } }, files: [Messages.file({ mediaType: "image/png", base64: png })] })
})
const shots = Toolkit.withStrategy(Toolkit.make(Shot), () => Action.Execute())
const shotTurns = ChatWorkflow.make({ name: "big-files", tools: shots })
const bigPng = "QUJD".repeat(1_500_000)

describe("ChatWorkflow records a result's files within their cap", () => {
  it.effect("a 6 MB image: the next request and the stored conversation hold a note, the Store the image", () => {
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "s1", name: "shot", arguments: {} }]),
      MockLanguageModel.text("Seen.")
    ])
    return Effect.gen(function*() {
      const memory = yield* ToolResult.makeMemoryStore
      const layer = ChatWorkflow.layer(shotTurns).pipe(
        Layer.provideMerge(Layer.mergeAll(
          WorkflowEngine.layerMemory,
          ConversationStore.layerMemory,
          model.layer,
          shots.toLayer({ shot: () => Effect.succeed({ png: bigPng }) }),
          Layer.succeed(ToolResult.Store, memory.store)
        ))
      )
      yield* Effect.gen(function*() {
        const id = yield* shotTurns.start("conv-shot", Messages.fromUser("Look"))
        const done = yield* eventually(shotTurns.read(id), (view) => view.status._tag === "Complete" || view.status._tag === "Failed")
        expect(done.status._tag).toBe("Complete")
        const request = model.requests[model.requests.length - 1]!
        const shown = Messages.projectToolCall(Messages.findTool(request.messages, "s1")!).result!
        expect(Messages.resultFiles(shown)).toEqual([])
        expect(shown.text).toContain("not shown: over the limit of 5,242,880 bytes of files in one result")
        expect(JSON.stringify(request.messages).length).toBeLessThan(5_000)
        const stored = Option.getOrThrow(yield* (yield* ConversationStore.ConversationStore).load(id))
        expect(Result.getOrThrow(Messages.toJson(stored.messages)).length).toBeLessThan(5_000)
        const ref = /keeps it with the full result as \\"([^"\\]+)\\"/.exec(shown.text)?.[1]
        expect(memory.get(ref!)?.files).toEqual([Messages.file({ mediaType: "image/png", base64: bigPng })])
      }).pipe(Effect.provide(layer))
    })
  })
})
