/**
 * `Worker.resume` in as few commits as its guarantees allow: the approval saved
 * with the call `Running`, the state the turn ends on saved with the lease's
 * release, and the predicate (`isFinal`) that says which state that is.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import { Action, Chat, ConversationStore, Messages, Tool, Toolkit, Worker } from "../src/index.js"
import * as LeasedRun from "../src/durable/internal/leasedRun.js"
import { MockLanguageModel } from "../src/testing/index.js"

const Pay = Tool.make("pay", {
  description: "Pay a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number })
})
const tools = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.RequireApproval())

const call = (id: string, status: Messages.ToolCallPart["status"]): Messages.ToolCallPart => ({
  _tag: "ToolCall",
  id,
  name: "pay",
  arguments: "{\"amount\":10}",
  status
})
const awaiting = (id: string) => call(id, { _tag: "AwaitingApproval" })
const response = (...calls: ReadonlyArray<Messages.ToolCallPart>): Messages.Message => ({ role: "assistant", parts: calls })

/** The memory store, recording the name of each lease and save method called. */
const counting = Effect.map(ConversationStore.makeMemory, (store) => {
  const calls: Array<string> = []
  const record = <A extends ReadonlyArray<unknown>, B>(name: string, f: (...args: A) => B) => (...args: A): B => {
    calls.push(name)
    return f(...args)
  }
  const counted: ConversationStore.Service = {
    ...store,
    save: record("save", store.save),
    release: record("release", store.release),
    acquireAndLoad: record("acquireAndLoad", store.acquireAndLoad!),
    saveAndRelease: record("saveAndRelease", store.saveAndRelease!)
  }
  return { store: counted, calls }
})

const approveAll = (stored: ConversationStore.Stored) =>
  Effect.reduce(
    Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
    () => stored.messages,
    (messages, c) => Effect.fromResult(Messages.approve(messages, c.id))
  )

const chatWith = (script: MockLanguageModel.Script, runs: Array<string>) =>
  Chat.make({ tools }).pipe(Effect.provide(Layer.merge(
    MockLanguageModel.make(script).layer,
    tools.toLayer({ pay: ({ amount }, info) => Effect.sync(() => (runs.push(info.id), { paid: amount })) })
  )))

describe("Worker.resume's commits", () => {
  it.effect("a turn that pauses on a new approval saves that pause with the release; nothing else releases", () =>
    Effect.gen(function*() {
      const { calls, store } = yield* counting
      yield* store.save("conv", [Messages.user("Pay."), response(awaiting("c1"))], { expectedVersion: 0 })
      calls.length = 0
      const runs: Array<string> = []
      const chat = yield* chatWith([MockLanguageModel.toolCalls([{ id: "c2", name: "pay", arguments: { amount: 5 } }])], runs)
      const result = yield* Worker.resume(chat, "conv", approveAll, { owner: "w" }).pipe(
        Effect.provideService(ConversationStore.ConversationStore, store)
      )
      expect(result.outcome._tag).toBe("Paused")
      expect(runs).toEqual(["c1"])
      // Running (with the approval), the result, the model's new call, and its pause with the release.
      expect(calls).toEqual(["acquireAndLoad", "save", "save", "save", "saveAndRelease"])
      const stored = Option.getOrThrow(yield* store.load("conv"))
      expect(stored.version).toBe(5)
      expect(Messages.lastCalls(stored.messages).map((c) => c.status._tag)).toEqual(["AwaitingApproval"])
      expect((yield* store.acquire("conv", "next", "1 second")).owner).toBe("next")
    }))

  it.effect("an approval whose turn fails before its first save is still saved, and the lease released", () =>
    Effect.gen(function*() {
      const { calls, store } = yield* counting
      // A call of an earlier response never resolved: the turn stops (PendingToolCalls) before any step.
      const stranded: Messages.Messages = [Messages.user("Pay."), response(awaiting("old")), Messages.user("And this."), response(awaiting("c1"))]
      yield* store.save("conv", stranded, { expectedVersion: 0 })
      calls.length = 0
      const runs: Array<string> = []
      const chat = yield* chatWith([MockLanguageModel.text("Done.")], runs)
      const approveLast = (s: ConversationStore.Stored) => Effect.fromResult(Messages.approve(s.messages, "c1"))
      const error = yield* Effect.flip(Worker.resume(chat, "conv", approveLast, { owner: "w" }).pipe(
        Effect.provideService(ConversationStore.ConversationStore, store)
      ))
      expect(error._tag).toBe("PendingToolCalls")
      expect(runs).toEqual([])
      const stored = Option.getOrThrow(yield* store.load("conv"))
      expect(stored.version).toBe(2)
      expect(Messages.lastCalls(stored.messages).map((c) => c.status._tag)).toEqual(["Approved"])
      expect(calls).toEqual(["acquireAndLoad", "save", "release"])
      expect((yield* store.acquire("conv", "next", "1 second")).owner).toBe("next")
    }))
})

describe("LeasedRun.isFinal", () => {
  const user = Messages.user("Pay.")
  it("is final on an answer with no call, or when every open call awaits a person with no deadline", () => {
    expect(LeasedRun.isFinal([user, Messages.assistant("Done.")])).toBe(true)
    expect(LeasedRun.isFinal([user, response(awaiting("a"), call("b", { _tag: "Rejected", by: "user" }))])).toBe(true)
  })
  it("is not final while anything is left to run, decide, deliver, expire or answer", () => {
    const cases: ReadonlyArray<Messages.Messages> = [
      [],
      [user],
      [user, response(call("a", { _tag: "Approved" }))],
      [user, response(call("a", { _tag: "Running" }))],
      [user, response(call("a", { _tag: "Proposed" }))],
      [user, response(call("a", { _tag: "Scheduled", at: 5 }))],
      [user, response(call("a", { _tag: "AwaitingApproval", expiresAt: 5 }))],
      // Every call resolved: the model is called with the results.
      [user, response(call("a", { _tag: "Completed", result: { paid: 1 } }))],
      // A message held during the pause is delivered once the calls are resolved.
      [user, { ...response(awaiting("a")), queued: [{ parts: [{ _tag: "Text", text: "Wait." }] }] }],
      [user, { ...Messages.assistant("Done."), queued: [{ parts: [{ _tag: "Text", text: "More." }] }] }]
    ]
    for (const messages of cases) expect(LeasedRun.isFinal(messages)).toBe(false)
  })
})
