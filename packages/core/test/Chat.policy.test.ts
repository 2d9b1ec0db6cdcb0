import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { Action, Chat, ConversationStore, DecisionPolicy, Messages, Tool, Toolkit, Worker } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

// A tool whose calls two people of finance must approve, not the one who asked.
const Pay = Tool.make("pay", {
  description: "Pay a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number }),
  metadata: { risky: true },
  decisionPolicy: { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 }
})
// A tool whose strategy picks the policy per call from the arguments.
const Refund = Tool.make("refund", {
  description: "Refund a customer.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ refunded: Schema.Number })
})
const tools = Toolkit.withStrategy(Toolkit.make(Pay, Refund), (call) =>
  call.name === "refund" && (call.params as { amount: number }).amount > 100
    ? Action.RequireApproval({ policy: { approve: { ids: ["carol"] } } })
    : Action.RequireApproval())

const alice: Messages.Identity = { id: "alice", roles: ["finance"] }
const bob: Messages.Identity = { id: "bob", roles: ["finance"] }
const carol: Messages.Identity = { id: "carol", roles: ["finance"] }

const chatWith = (runs: Array<string>, calls: ReadonlyArray<MockLanguageModel.ScriptedToolCall>) =>
  Chat.make({ tools }).pipe(
    Effect.provide(Layer.merge(
      MockLanguageModel.make([MockLanguageModel.toolCalls(calls), MockLanguageModel.text("Done.")]).layer,
      tools.toLayer({
        pay: ({ amount }, call) => Effect.sync(() => (runs.push(call.id), { paid: amount })),
        refund: ({ amount }, call) => Effect.sync(() => (runs.push(call.id), { refunded: amount }))
      })
    ))
  )

const statusOf = (messages: Messages.Messages, id: string) => Messages.findTool(messages, id)!.status

describe("Chat: decision policies", () => {
  it.effect("a tool's policy: four-eyes and a quorum of two through chat.approve, with the clock's time recorded", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, [{ id: "p1", name: "pay", arguments: { amount: 10 } }])
      const paused = yield* chat.complete(Messages.fromUser("Pay it.", { sender: alice }))
      expect(paused.outcome._tag).toBe("Paused")
      expect(statusOf(paused.messages, "p1")).toMatchObject({ _tag: "AwaitingApproval", policy: { quorum: 2, notRequester: true } })
      yield* TestClock.adjust(5_000)

      // The requester, a decider without an identity: refused, the messages as they were.
      const own = yield* Effect.flip(chat.approve(paused.messages, "p1", undefined, { decider: alice }))
      expect(own._tag).toBe("DecisionNotAllowed")
      expect((yield* Effect.flip(chat.approve(paused.messages, "p1")))._tag).toBe("DecisionNotAllowed")
      expect((yield* Effect.flip(chat.reject(paused.messages, "p1")))._tag).toBe("DecisionNotAllowed")

      const one = yield* chat.approve(paused.messages, "p1", undefined, { decider: bob })
      expect(DecisionPolicy.progress(Messages.findTool(one, "p1")!)).toMatchObject({ quorum: 2, votes: [{ by: "bob", at: 5_000 }] })
      expect((yield* Effect.flip(chat.approve(one, "p1", undefined, { decider: bob })))._tag).toBe("DuplicateVote")
      // One yes is not enough: resuming runs nothing and pauses again.
      const still = yield* chat.resume(one)
      expect(still.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])

      const two = yield* chat.approve(still.messages, "p1", undefined, { decider: carol })
      const done = yield* chat.resume(two)
      expect(done.outcome._tag).toBe("Complete")
      expect(runs).toEqual(["p1"])
      expect(statusOf(done.messages, "p1")).toMatchObject({
        _tag: "Completed",
        decision: { by: "carol", kind: "approve", votes: [{ by: "bob" }, { by: "carol" }] }
      })
    }))

  it.effect("a strategy's policy per call: only carol may decide a large refund; a small one works as before", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, [
        { id: "big", name: "refund", arguments: { amount: 500 } },
        { id: "small", name: "refund", arguments: { amount: 5 } }
      ])
      const paused = yield* chat.complete(Messages.fromUser("Refund them."))
      expect(statusOf(paused.messages, "small")).toStrictEqual({ _tag: "AwaitingApproval" })
      expect((yield* Effect.flip(chat.approveJson(paused.messages, "big", `{"amount":500}`, { decider: bob })))._tag).toBe(
        "DecisionNotAllowed"
      )
      const big = yield* chat.approve(paused.messages, "big", undefined, { decider: carol })
      const small = yield* chat.approve(big, "small")
      const done = yield* chat.resume(small)
      expect(done.outcome._tag).toBe("Complete")
      expect(runs.sort()).toEqual(["big", "small"])
    }))

  it.effect("a policy governs calls that wait for a person: a strategy's Execute runs the call", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      const kit = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.Execute())
      const chat = yield* Chat.make({ tools: kit }).pipe(
        Effect.provide(Layer.merge(
          MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { amount: 1 } }]), MockLanguageModel.text("Done.")]).layer,
          kit.toLayer({ pay: ({ amount }, call) => Effect.sync(() => (runs.push(call.id), { paid: amount })) })
        ))
      )
      const done = yield* chat.complete(Messages.fromUser("Pay it."))
      expect(done.outcome._tag).toBe("Complete")
      expect(runs).toEqual(["p1"])
    }))

  it.effect("a strategy's action that is not valid keeps the policy it named (and the tool's otherwise): never a call anyone may decide", () =>
    Effect.gen(function*() {
      const kit = Toolkit.withStrategy(Toolkit.make(Pay, Refund), (call) =>
        call.name === "refund"
          ? Action.RequireApproval({ expiresAt: Number.NaN, policy: { approve: { ids: ["carol"] } } })
          : Action.Defer({ after: -1 }))
      const chat = yield* Chat.make({ tools: kit }).pipe(
        Effect.provide(Layer.merge(
          MockLanguageModel.make([MockLanguageModel.toolCalls([
            { id: "r1", name: "refund", arguments: { amount: 1 } },
            { id: "p1", name: "pay", arguments: { amount: 1 } }
          ])]).layer,
          kit.toLayer({ pay: ({ amount }) => Effect.succeed({ paid: amount }), refund: ({ amount }) => Effect.succeed({ refunded: amount }) })
        ))
      )
      const paused = yield* chat.complete(Messages.fromUser("Go."))
      expect(statusOf(paused.messages, "r1")).toStrictEqual({ _tag: "AwaitingApproval", policy: { approve: { ids: ["carol"] } } })
      expect(statusOf(paused.messages, "p1")).toMatchObject({ _tag: "AwaitingApproval", policy: { quorum: 2 } })
    }))

  it.effect("Worker.resume: a refused decider fails the resume with nothing saved or run; an allowed one runs the call", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, [{ id: "big", name: "refund", arguments: { amount: 500 } }])
      const paused = yield* chat.complete(Messages.fromUser("Refund them."))
      yield* store.save("conv", paused.messages, { expectedVersion: 0 })
      const decideAs = (decider: Messages.Identity) => (stored: ConversationStore.Stored) =>
        Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (at) =>
          Effect.fromResult(Messages.approve(stored.messages, "big", undefined, { decider, at })))

      const refused = yield* Effect.flip(Worker.resume(chat, "conv", decideAs(bob)))
      expect(refused._tag).toBe("DecisionNotAllowed")
      const after = Option.getOrThrow(yield* store.load("conv"))
      expect(after.version).toBe(1)
      expect(after.messages).toStrictEqual(paused.messages)
      expect(runs).toEqual([])

      // A decide that writes an approval past the policy (no decision record) runs nothing: the call waits again.
      const forged = yield* Worker.resume(chat, "conv", (stored) =>
        Effect.succeed(Messages.updateTool(stored.messages, "big", (call) => ({
          ...call,
          status: { _tag: "Approved", policy: { approve: { ids: ["carol"] } } }
        }))))
      expect(forged.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])

      const done = yield* Worker.resume(chat, "conv", decideAs(carol))
      expect(done.outcome._tag).toBe("Complete")
      expect(runs).toEqual(["big"])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})
