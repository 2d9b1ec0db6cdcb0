/**
 * docs/coming-from-ai-sdk.md: the same agent on the AI SDK (`streamText` + `needsApproval`, its own
 * test model) and on chat-ts (scripted model, a store in memory). What the page says changes is
 * what these tests see: a replayed approval runs the transfer again on the AI SDK, once on chat-ts.
 */
import { ConversationStore, Messages, Worker } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import type { ModelMessage } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect, Fiber, Layer, Result } from "effect"
import * as Snippet from "../src/snippets/coming-from-ai-sdk.js"

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

type StreamPart = { readonly type: string } & Record<string, unknown>

const streamOf = (parts: ReadonlyArray<StreamPart>) =>
  new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part)
      controller.close()
    }
  })

const transferArgs = { from: "PT0001", to: "PT0002", amount: 500 }

/** The AI SDK's test model: asks for the transfer when the last message is the user's, else answers. */
const aiSdkModel = () =>
  new MockLanguageModelV4({
    doStream: async ({ prompt }) => ({
      stream: streamOf(
        prompt[prompt.length - 1]?.role === "user"
          ? [
            { type: "stream-start", warnings: [] },
            { type: "tool-call", toolCallId: "t1", toolName: "transfer", input: JSON.stringify(transferArgs) },
            { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage }
          ]
          : [
            { type: "stream-start", warnings: [] },
            { type: "text-start", id: "a" },
            { type: "text-delta", id: "a", delta: "Sent." },
            { type: "text-end", id: "a" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage }
          ]
      ) as never
    })
  })

const chatTsScript = () =>
  MockLanguageModel.make([
    MockLanguageModel.toolCalls([{ id: "t1", name: "transfer", arguments: transferArgs }]),
    MockLanguageModel.text("Sent.")
  ])

describe("coming from the AI SDK", () => {
  it("the AI SDK: needsApproval pauses; the approval in the client's history runs the transfer, and again when the same history is sent again", async () => {
    Snippet.bank.transfers.length = 0
    const model = aiSdkModel()
    const user: Array<ModelMessage> = [{ role: "user", content: "Send 500 euros from PT0001 to PT0002." }]
    const paused = await Snippet.aiSdkRequest(model, user)
    const [approvalId] = Snippet.approvalRequests(paused)
    expect(approvalId).toBeDefined()
    expect(Snippet.bank.transfers).toEqual([])

    const approved = Snippet.approveInAiSdk(paused, approvalId!)
    await Snippet.aiSdkRequest(model, approved)
    expect(Snippet.bank.transfers).toEqual([transferArgs])
    // A second tab (or a retried request) sends the same history: the server has no record of it, the transfer runs again.
    await Snippet.aiSdkRequest(model, approved)
    expect(Snippet.bank.transfers).toEqual([transferArgs, transferArgs])
  })

  it("the AI SDK: the input that runs is the one in the history the client sends (checked against the schema, not against what was asked)", async () => {
    const model = aiSdkModel()
    const paused = await Snippet.aiSdkRequest(model, [{ role: "user", content: "Send 500 euros from PT0001 to PT0002." }])
    /** The client's copy with the transfer's input rewritten before it is approved. */
    const rewritten = (amount: number): Array<ModelMessage> =>
      paused.map((message) =>
        message.role === "assistant" && typeof message.content !== "string"
          ? { ...message, content: message.content.map((part) => (part.type === "tool-call" ? { ...part, input: { ...transferArgs, amount } } : part)) }
          : message
      )
    Snippet.bank.transfers.length = 0
    await Snippet.aiSdkRequest(model, Snippet.approveInAiSdk(rewritten(50), Snippet.approvalRequests(paused)[0]!))
    expect(Snippet.bank.transfers).toEqual([{ ...transferArgs, amount: 50 }])
    // A rewrite the zod schema refuses does not run.
    Snippet.bank.transfers.length = 0
    await Snippet.aiSdkRequest(model, Snippet.approveInAiSdk(rewritten(9_000_000), Snippet.approvalRequests(paused)[0]!))
    expect(Snippet.bank.transfers).toEqual([])
  })

  it.effect("chat-ts: the pause is stored; a bad edit is refused; the approval runs the transfer once, however often it is sent", () =>
    Effect.gen(function*() {
      Snippet.bank.transfers.length = 0
      const model = chatTsScript()
      const chat = yield* Snippet.makeAgent.pipe(Effect.provide(model.layer))
      const first = yield* Snippet.ask(chat, "conv-1", "Send 500 euros from PT0001 to PT0002.")
      expect(first.outcome._tag).toBe("Paused")
      const store = yield* ConversationStore.ConversationStore
      expect(Messages.findTool((yield* store.load("conv-1")).pipe(Result.fromOption(() => "none"), Result.getOrThrow).messages, "t1")?.status._tag)
        .toBe("AwaitingApproval")

      // An edit the zod schema refuses (an account number that is not one): nothing stored, nothing run.
      const bad = yield* Effect.flip(Snippet.approve(chat, "conv-1", "t1", { ...transferArgs, to: "my friend" }))
      expect(bad._tag).toBe("InvalidEditedArguments")
      expect(Snippet.bank.transfers).toEqual([])

      // The decision comes later, to another process: a new chat reads the stored conversation.
      const later = yield* Snippet.makeAgent.pipe(Effect.provide(model.layer))
      // Two tabs approve at once: one run holds the conversation, the other is refused before it runs anything.
      const tabs = yield* Effect.forkChild(
        Effect.all([Snippet.approve(later, "conv-1", "t1", { ...transferArgs, amount: 90 }), Snippet.approve(later, "conv-1", "t1")].map(Effect.result), {
          concurrency: "unbounded"
        })
      )
      const [a, b] = yield* Fiber.join(tabs)
      const outcomes = [a!, b!].map((r) => (Result.isSuccess(r) ? r.success.outcome._tag : r.failure._tag))
      expect([...outcomes].sort()).toEqual(["Complete", "ConversationBusy"])
      expect(Snippet.bank.transfers).toHaveLength(1)
      // The same approval sent again later (a retry, a reload): the call was decided and ran; nothing runs again.
      const again = yield* Effect.result(Snippet.approve(later, "conv-1", "t1"))
      expect(Result.isFailure(again) && again.failure._tag).toBe("ToolCallAlreadyResolved")
      const replay = yield* Worker.resume(later, "conv-1", (stored) => Effect.succeed(stored.messages))
      expect(replay.outcome._tag).toBe("Complete")
      expect(Snippet.bank.transfers).toHaveLength(1)
      expect(model.requests).toHaveLength(2)
    }).pipe(Effect.provide(Layer.mergeAll(ConversationStore.layerMemory))))
})
