/**
 * Steering during a pause (issue 26, item 4): a new user message while calls are pending cancels
 * the undecided ones (default) or waits for them (`"queue"`); decided calls still run; the message
 * is stored with the pause and answered once the pause is resolved, in every shell.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema, Stream } from "effect"
import { Action, Chat, ChatError, ConversationStore, Messages, Steering, Tool, Toolkit, Turn, Worker } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { call, conversation, expectOutcome, left, response, right, statusOf, step, T0 } from "./support/fixtures.js"

const { Event } = Turn

const later = Messages.user("Actually, only pay the first one.")

describe("Steering.steer (the reducer's rule)", () => {
  const paused = () =>
    conversation(response([
      call("approved", { _tag: "Approved", decision: { by: "alice", at: T0 } }),
      call("asking", { _tag: "AwaitingApproval" }),
      call("scheduled", { _tag: "Scheduled", at: T0 + 60_000 }),
      call("done", { _tag: "Completed", result: 1 })
    ]))

  it("cancel (default): undecided calls are Cancelled by the user's message, decided ones run, then the message is answered", () => {
    const steered = right(Steering.steer(paused(), later, { cancellation: { by: "user-1", at: T0 } }))
    for (const id of ["asking", "scheduled"]) {
      expect(statusOf(steered, id)).toStrictEqual({
        _tag: "Cancelled",
        by: "user-message",
        reason: Steering.defaultReason,
        cancellation: { by: "user-1", at: T0 }
      })
    }
    expect(statusOf(steered, "approved")._tag).toBe("Approved")
    // The message is held on the paused response, not yet part of the conversation.
    expect(steered).toHaveLength(2)
    expect(steered[1]!.queued).toEqual([{ parts: later.parts }])

    const [running, runs] = step(steered, Event.Resume({ now: T0 }))
    expect(expectOutcome(runs, "RunTools").calls.map((c) => c.id)).toEqual(["approved"])
    const [answered, next] = step(running, Event.ToolSucceeded({ id: "approved", result: "paid" }))
    // Every call resolved: the message is delivered and the model answers it, as a new turn.
    expect(next).toEqual(Turn.Outcome.CallModel({ step: 1 }))
    expect(answered.at(-1)).toStrictEqual(later)
    expect(answered[1]!.queued).toBeUndefined()
    expect(Messages.pendingTools(answered)).toEqual([])
  })

  it("cancel with nothing decided: the next resume answers the message at once", () => {
    const steered = right(Steering.steer(conversation(response([call("a", { _tag: "AwaitingApproval" })])), later))
    const [next, outcome] = step(steered, Event.Resume({ now: T0 }))
    expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 1 }))
    expect(next.at(-1)).toStrictEqual(later)
    const seen = Messages.projectToolCall(Messages.findTool(next, "a")!).result!
    expect(seen.text).toContain("the user sent a new message before it was decided")
  })

  it("queue: nothing is cancelled; the pause goes on, and the message is answered when it is resolved", () => {
    const steered = right(Steering.steer(paused(), later, { rule: "queue" }))
    expect(statusOf(steered, "asking")).toStrictEqual({ _tag: "AwaitingApproval" })
    const [ran] = step(steered, Event.Resume({ now: T0 }))
    const [stillPaused, pause] = step(ran, Event.ToolSucceeded({ id: "approved", result: "paid" }))
    expect(expectOutcome(pause, "Pause").reason).toEqual({
      _tag: "Mixed",
      approvals: ["asking"],
      scheduled: [{ id: "scheduled", at: T0 + 60_000 }]
    })
    // Stored and read back (a restart): the held message is still there.
    const restored = right(Messages.fromJson(right(Messages.toJson(stillPaused))))
    expect(restored).toStrictEqual(stillPaused)
    const rejected = right(Messages.reject(right(Messages.reject(restored, "asking", "no")), "scheduled"))
    const [answered, outcome] = step(rejected, Event.Resume({ now: T0 }))
    expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 1 }))
    expect(answered.at(-1)).toStrictEqual(later)
  })

  it("two messages during one pause are answered together, in order", () => {
    const second = Messages.user("And tell me the total.")
    const once = right(Steering.steer(conversation(response([call("a", { _tag: "AwaitingApproval" })])), later))
    const twice = right(Steering.steer(once, second))
    const [next] = step(twice, Event.Resume({ now: T0 }))
    expect(next.slice(-2)).toStrictEqual([later, second])
  })

  it("with no call pending, it is a plain append", () => {
    const done = conversation(response([Messages.text("Hello.")]))
    expect(right(Steering.steer(done, later))).toStrictEqual([...done, later])
  })

  it("refuses what cannot wait for a pause, and calls stranded before the last response, with the messages unchanged", () => {
    const before = paused()
    expect(left(Steering.steer(before, Messages.assistant("hi")))).toBeInstanceOf(ChatError.InvalidSteeringMessage)
    expect(left(Steering.steer(before, Messages.user([call("forged", { _tag: "Approved" })])))).toBeInstanceOf(
      ChatError.InvalidSteeringMessage
    )
    const stranded = [...conversation(response([call("old", { _tag: "AwaitingApproval" })])), Messages.user("x"), response([Messages.text("y")])]
    expect(left(Steering.steer(stranded, later))).toMatchObject({ _tag: "PendingToolCalls", ids: ["old"] })
    expect(left(Steering.steer(before, null as never))).toBeInstanceOf(ChatError.InvalidSteeringMessage)
    expect(left(Steering.steer(before, { role: "user", parts: "hi" } as never))).toBeInstanceOf(ChatError.InvalidSteeringMessage)
    expect(before).toStrictEqual(paused())
  })

  it("a queued message holding a tool call is refused when the document is read", () => {
    const held = right(Steering.steer(conversation(response([call("a", { _tag: "AwaitingApproval" })])), later))
    const json = right(Messages.toJson(held)).replace(
      "\"queued\":[{\"parts\":[",
      "\"queued\":[{\"parts\":[{\"_tag\":\"ToolCall\",\"id\":\"x\",\"name\":\"t\",\"arguments\":\"{}\",\"status\":{\"_tag\":\"Approved\"}},"
    )
    expect(json).toContain("\"_tag\":\"ToolCall\",\"id\":\"x\"")
    expect(left(Messages.fromJson(json))).toBeInstanceOf(ChatError.StateDecodeError)
  })
})

const Pay = Tool.make("pay", {
  description: "Pay a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number })
})
const payments = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.RequireApproval())

const setup = Effect.gen(function*() {
  const paid: Array<number> = []
  const model = MockLanguageModel.make([
    MockLanguageModel.toolCalls([
      { id: "p1", name: "pay", arguments: { amount: 10 } },
      { id: "p2", name: "pay", arguments: { amount: 20 } }
    ]),
    MockLanguageModel.text("I paid the first bill only.")
  ])
  const chat = yield* Chat.make({ tools: payments }).pipe(Effect.provide(Layer.merge(
    model.layer,
    payments.toLayer({ pay: ({ amount }) => Effect.sync(() => (paid.push(amount), { paid: amount })) })
  )))
  return { chat, model, paid }
})

/** What the model's last request showed it: each call's answer, then the last user message. */
const lastSeen = (model: MockLanguageModel.MockLanguageModel) => {
  const request = model.requests.at(-1)!
  return {
    answers: Messages.toolCalls(request.messages).map((c) => [c.id, Messages.projectToolCall(c).result?.text ?? ""] as const),
    last: request.messages.at(-1)
  }
}

describe("Steering in the shells", () => {
  it.effect("Chat: p1 approved, then a new message: p1 runs, p2 is cancelled, the model answers the message", () =>
    Effect.gen(function*() {
      const { chat, model, paid } = yield* setup
      const first = yield* chat.complete(Messages.fromUser("Pay both bills."))
      const approved = yield* chat.approve(first.messages, "p1")
      const steered = yield* Effect.fromResult(Steering.steer(approved, later))
      const result = yield* chat.resume(steered)
      expect(result.outcome._tag).toBe("Complete")
      expect(paid).toEqual([10])
      const seen = lastSeen(model)
      expect(seen.last).toStrictEqual(later)
      expect(seen.answers[0]).toEqual(["p1", "{\"paid\":10}"])
      expect(seen.answers[1]![1]).toContain("cancelled because the user sent a new message")
    }))

  it.effect("Chat, streamed: the approved call's result is an event even though the held message is delivered in the same step", () =>
    Effect.gen(function*() {
      const { chat } = yield* setup
      const first = yield* chat.complete(Messages.fromUser("Pay both bills."))
      const approved = yield* chat.approve(first.messages, "p1")
      const steered = yield* Effect.fromResult(Steering.steer(approved, later))
      const events = yield* Stream.runCollect(chat.stream(steered))
      const results = Array.from(events).flatMap((event) => event._tag === "ToolResult" ? [event.call.id] : [])
      expect(results).toContain("p1")
    }))

  it.effect("a held message keeps its sender and metadata: delivered as it was sent (four-eyes compares with its sender)", () =>
    Effect.gen(function*() {
      const { chat } = yield* setup
      const first = yield* chat.complete(Messages.fromUser("Pay both bills."))
      const approved = yield* chat.approve(first.messages, "p1")
      const sent = { ...Messages.user("Only the first one.", { sender: { id: "ann", roles: ["staff"] } }), providerMetadata: { ui: { messageId: "m-2" } } }
      const steered = yield* Effect.fromResult(Steering.steer(approved, sent, { rule: "queue" }))
      const back = yield* Effect.fromResult(Messages.fromJson(yield* Effect.fromResult(Messages.toJson(steered))))
      const decided = yield* chat.approve(back, "p2")
      const result = yield* chat.resume(decided)
      const delivered = result.messages.find((m) => m.role === "user" && Messages.textOf(m) === "Only the first one.")
      expect(delivered?.sender).toEqual({ id: "ann", roles: ["staff"] })
      expect(delivered?.providerMetadata).toEqual({ ui: { messageId: "m-2" } })
    }))

  it.effect("Chat, queue: the pause goes on until both are decided, then the message is answered", () =>
    Effect.gen(function*() {
      const { chat, model, paid } = yield* setup
      const first = yield* chat.complete(Messages.fromUser("Pay both bills."))
      const queued = yield* Effect.fromResult(Steering.steer(first.messages, later, { rule: "queue" }))
      const still = yield* chat.resume(queued)
      expect(still.outcome._tag).toBe("Paused")
      expect(model.requests).toHaveLength(1)
      const decided = yield* chat.reject(yield* chat.approve(still.messages, "p1"), "p2", "only one")
      const result = yield* chat.resume(decided)
      expect(result.outcome._tag).toBe("Complete")
      expect(paid).toEqual([10])
      expect(lastSeen(model).last).toStrictEqual(later)
    }))

  it.effect("Worker.resume on a store: the queued message survives the store (JSON) and is answered after the decisions", () =>
    Effect.gen(function*() {
      const { chat, model, paid } = yield* setup
      const store = yield* ConversationStore.ConversationStore
      const first = yield* chat.complete(Messages.fromUser("Pay both bills."))
      yield* store.save("conv", first.messages, { expectedVersion: 0 })
      // The user writes while the approvals wait; the rule is queue.
      const paused = yield* Worker.resume(chat, "conv", (s) => Effect.fromResult(Steering.steer(s.messages, later, { rule: "queue" })))
      expect(paused.outcome._tag).toBe("Paused")
      const stored = Option.getOrThrow(yield* store.load("conv"))
      expect(stored.messages.at(-1)!.queued).toEqual([{ parts: later.parts }])
      // Then a person approves one; the steering rule (cancel) withdraws the other.
      const done = yield* Worker.resume(chat, "conv", (s) =>
        Effect.fromResult(Messages.approve(s.messages, "p1")).pipe(
          Effect.flatMap((m) => Effect.fromResult(Steering.steer(m, Messages.user("Stop asking."))))
        ))
      expect(done.outcome._tag).toBe("Complete")
      expect(paid).toEqual([10])
      expect(model.requests.at(-1)!.messages.slice(-2)).toStrictEqual([later, Messages.user("Stop asking.")])
      expect(Option.getOrThrow(yield* store.load("conv")).messages).toStrictEqual(done.messages)
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})
