/**
 * Issue 32, section 1: the decision policy a call must meet is fixed on the
 * call when it is sent to a person, so that no status written afterwards (a
 * `Worker.resume` decide, `Messages.updateTool`, a stored document's status)
 * can drop it; a decision names the exact text that runs; four-eyes counts
 * every sender of the user messages the call answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Result, Schema } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { Action, Chat, ConversationStore, DecisionPolicy, Messages, Steering, Tool, Toolkit, Turn, Worker } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

// Two people of finance approve a payment, and not the one who asked.
const Pay = Tool.make("pay", {
  description: "Pay someone.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number }),
  idempotent: true,
  decisionPolicy: { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 }
})
// Only bob decides a transfer.
const Transfer = Tool.make("transfer", {
  description: "Transfer money.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ sent: Schema.Number }),
  decisionPolicy: { approve: { ids: ["bob"] } }
})
// A payment one person of finance approves, not one who asked.
const Settle = Tool.make("settle", {
  description: "Settle a bill.",
  parameters: { amount: Schema.Number, to: Schema.String },
  success: Schema.Struct({ settled: Schema.Number }),
  decisionPolicy: { approve: { roles: ["finance"] }, notRequester: true }
})
const Note = Tool.make("note", { description: "Take a note.", parameters: { text: Schema.String }, success: Schema.String })

const tools = Toolkit.withStrategy(Toolkit.make(Pay, Transfer, Settle, Note), () => Action.RequireApproval())

const alice: Messages.Identity = { id: "alice", roles: ["finance"] }
const bob: Messages.Identity = { id: "bob", roles: ["finance"] }
const carol: Messages.Identity = { id: "carol", roles: ["finance"] }

/** A chat over a scripted model; `runs` records each handler run as `name:amount`. */
const chatWith = (runs: Array<string>, script: ReadonlyArray<MockLanguageModel.ScriptedResponse>) =>
  Chat.make({ tools }).pipe(
    Effect.provide(Layer.merge(
      MockLanguageModel.make(script).layer,
      tools.toLayer({
        pay: ({ amount }) => Effect.sync(() => (runs.push(`pay:${amount}`), { paid: amount })),
        transfer: ({ amount }) => Effect.sync(() => (runs.push(`transfer:${amount}`), { sent: amount })),
        settle: ({ amount, to }) => Effect.sync(() => (runs.push(`settle:${amount}:${to}`), { settled: amount })),
        note: ({ text }) => Effect.sync(() => (runs.push(`note:${text}`), "noted"))
      })
    ))
  )

const statusOf = (messages: Messages.Messages, id: string) => Messages.findTool(messages, id)!.status

/** Writes `status` on call `id`, the way a decide step or a hand-written update would. */
const write = (messages: Messages.Messages, id: string, status: Messages.ToolCallStatus) =>
  Messages.updateTool(messages, id, (call) => ({ ...call, status }))

describe("a decision policy no status write can drop", () => {
  it.effect("a Worker.resume decide that writes a fresh { _tag: 'Approved' } runs nothing: the call waits again under its policy", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, [
        MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { amount: 900 } }]),
        MockLanguageModel.text("Paid.")
      ])
      const paused = yield* chat.complete(Messages.fromUser("Pay 900.", { sender: alice }))
      expect(Messages.findTool(paused.messages, "p1")!.decidedUnder).toStrictEqual({
        policy: { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 }
      })
      yield* store.save("conv", paused.messages, { expectedVersion: 0 })

      const forged = yield* Worker.resume(chat, "conv", (stored) =>
        Effect.succeed(Messages.updateTool(stored.messages, "p1", (c) => ({ ...c, status: { _tag: "Approved" } }))))
      expect(forged.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])
      expect(statusOf(forged.messages, "p1")).toStrictEqual({
        _tag: "AwaitingApproval",
        policy: { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 }
      })

      // A call rebuilt from scratch by the update (its fixed policy left out) keeps it all the same.
      const rebuilt = yield* Worker.resume(chat, "conv", (stored) =>
        Effect.succeed(Messages.updateTool(stored.messages, "p1", (c) => ({
          _tag: "ToolCall",
          id: c.id,
          name: c.name,
          arguments: c.arguments,
          status: { _tag: "Approved" }
        }))))
      expect(rebuilt.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])

      // The people the policy names still decide it: two of finance, not alice.
      const decideAs = (decider: Messages.Identity) => (stored: ConversationStore.Stored) =>
        Effect.fromResult(Messages.approve(stored.messages, "p1", undefined, { decider, at: 1 }))
      expect((yield* Effect.flip(Worker.resume(chat, "conv", decideAs(alice))))._tag).toBe("DecisionNotAllowed")
      expect((yield* Worker.resume(chat, "conv", decideAs(bob))).outcome._tag).toBe("Paused")
      const done = yield* Worker.resume(chat, "conv", decideAs(carol))
      expect(done.outcome._tag).toBe("Complete")
      expect(runs).toEqual(["pay:900"])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("through Chat: a fresh approval, a scheduled time it was never deferred to, or a claimed run does not run the call", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, [
        MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { amount: 900 } }]),
        MockLanguageModel.text("Paid.")
      ])
      const paused = yield* chat.complete(Messages.fromUser("Pay 900.", { sender: alice }))
      yield* TestClock.adjust(10_000)

      const approved = yield* chat.resume(write(paused.messages, "p1", { _tag: "Approved" }))
      expect(approved.outcome._tag).toBe("Paused")
      // Due since the epoch: it was sent to a person, not deferred, so the time runs nothing.
      const scheduled = yield* chat.resume(write(paused.messages, "p1", { _tag: "Scheduled", at: 0 }))
      expect(scheduled.outcome._tag).toBe("Paused")
      expect(statusOf(scheduled.messages, "p1")._tag).toBe("AwaitingApproval")
      // "Left running by a crash" on an idempotent tool: it is not run again without the approvals.
      const running = yield* chat.resume(write(paused.messages, "p1", { _tag: "Running" }))
      expect(statusOf(running.messages, "p1")._tag).toBe("Failed")
      // A status claiming a looser policy of its own: the fixed one is the one checked.
      const looser = yield* chat.resume(write(paused.messages, "p1", { _tag: "Approved", policy: {} }))
      expect(looser.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])
    }))

  it("a model response that claims a decision policy of its own enters without it", () => {
    const [messages] = Turn.run(Messages.fromUser("Pay."), [
      Turn.Event.Resume({ now: 0 }),
      Turn.Event.ModelResponded({
        message: {
          role: "assistant",
          parts: [{ _tag: "ToolCall", id: "p1", name: "pay", arguments: "{}", status: { _tag: "Proposed" }, decidedUnder: { policy: {} } }]
        }
      })
    ])
    expect(Messages.findTool(messages, "p1")).toStrictEqual({ _tag: "ToolCall", id: "p1", name: "pay", arguments: "{}", status: { _tag: "Proposed" } })
  })

  it("a document written before the policy was fixed on the call keeps its waiting status's policy through a status write", () => {
    // As 0.2 stored it: the policy on the waiting status only.
    const policy: Messages.DecisionPolicy = { approve: { ids: ["carol"] } }
    const stored: Messages.Messages = [
      Messages.user("Refund it."),
      {
        role: "assistant",
        parts: [{ _tag: "ToolCall", id: "r1", name: "transfer", arguments: "{\"amount\":5}", status: { _tag: "AwaitingApproval", policy } }]
      }
    ]
    const forged = write(stored, "r1", { _tag: "Approved" })
    expect(Messages.findTool(forged, "r1")!.decidedUnder).toStrictEqual({ policy })
    const [next, outcome] = Turn.step(forged, Turn.Event.Resume({ now: 1 }))
    expect(outcome._tag).toBe("Pause")
    expect(statusOf(next, "r1")).toStrictEqual({ _tag: "AwaitingApproval", policy })
    // Carol's approval, through the same entry, still runs it.
    const decided = Result.getOrThrow(Messages.approve(stored, "r1", undefined, { decider: { id: "carol" }, at: 1 }))
    expect(Turn.step(decided, Turn.Event.Resume({ now: 2 }))[1]._tag).toBe("RunTools")
  })
})

describe("documents stored before the policy was fixed on the call", () => {
  it.effect("a 0.2 document (the policy on the waiting status only), decoded and resumed by Worker.resume with a fresh approval: the policy holds", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, [
        MockLanguageModel.toolCalls([{ id: "t1", name: "transfer", arguments: { amount: 7 } }]),
        MockLanguageModel.text("Sent.")
      ])
      const paused = yield* chat.complete(Messages.fromUser("Send 7."))
      // What 0.2 wrote: no `decidedUnder`, the policy on `AwaitingApproval`.
      const json = Result.getOrThrow(Messages.toJson(paused.messages)).replace(/,"decidedUnder":\{"policy":\{"approve":\{"ids":\["bob"\]\}\}\}/, "")
      expect(json).not.toContain("decidedUnder")
      expect(json).toContain("\"status\":{\"_tag\":\"AwaitingApproval\",\"policy\":{\"approve\":{\"ids\":[\"bob\"]}}}")
      yield* store.save("old", Result.getOrThrow(Messages.fromJson(json)), { expectedVersion: 0 })

      const forged = yield* Worker.resume(chat, "old", (stored) => Effect.succeed(write(stored.messages, "t1", { _tag: "Approved" })))
      expect(forged.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])
      expect(Messages.findTool(forged.messages, "t1")!.decidedUnder).toStrictEqual({ policy: { approve: { ids: ["bob"] } } })
      const done = yield* Worker.resume(chat, "old", (stored) =>
        Effect.fromResult(Messages.approve(stored.messages, "t1", undefined, { decider: bob, at: 1 })))
      expect(done.outcome._tag).toBe("Complete")
      expect(runs).toEqual(["transfer:7"])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})

describe("a decision names the exact text that runs", () => {
  const script = (amount: number) => [
    MockLanguageModel.toolCalls([{ id: "t1", name: "transfer", arguments: { amount } }]),
    MockLanguageModel.text("Sent.")
  ]

  it.effect("arguments edited into a stored approval afterwards: the call waits again and the edited text never runs", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, script(10))
      const paused = yield* chat.complete(Messages.fromUser("Send 10."))
      // Bob approves 10; the approval is stored before any worker resumes it.
      const approved = Result.getOrThrow(Messages.approve(paused.messages, "t1", undefined, { decider: bob, at: 1 }))
      yield* store.save("conv", approved, { expectedVersion: 0 })

      const swapped = yield* Worker.resume(chat, "conv", (stored) =>
        Effect.succeed(Messages.updateTool(stored.messages, "t1", (c) => ({
          ...c,
          status: { ...(c.status as Extract<Messages.ToolCallStatus, { _tag: "Approved" }>), editedArguments: "{\"amount\":1000000}" }
        }))))
      expect(swapped.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])
      expect(statusOf(swapped.messages, "t1")).toStrictEqual({ _tag: "AwaitingApproval", policy: { approve: { ids: ["bob"] } } })
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a real edit swapped later does not run; the edit as decided runs, its record hashing its canonical text as an edit", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, script(10))
      const paused = yield* chat.complete(Messages.fromUser("Send 10."))
      const edited = yield* chat.approveJson(paused.messages, "t1", "{ \"amount\" : 20 }", { decider: bob })
      const status = statusOf(edited, "t1") as Extract<Messages.ToolCallStatus, { _tag: "Approved" }>
      expect(status.decision).toMatchObject({ by: "bob", kind: "edit", argumentsHash: DecisionPolicy.argumentsHash("{\"amount\":20}") })

      const swapped = yield* chat.resume(write(edited, "t1", { ...status, editedArguments: "{\"amount\":1000000}" }))
      expect(swapped.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])
      // The record of an edit never counts as an approval of the model's own arguments, nor of another edit.
      const dropped = yield* chat.resume(write(edited, "t1", { _tag: "Approved", decision: status.decision!, policy: status.policy! }))
      expect(dropped.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])

      const done = yield* chat.resume(edited)
      expect(done.outcome._tag).toBe("Complete")
      expect(runs).toEqual(["transfer:20"])
    }))

  it("an approval's record names the model's arguments; an edit's the edited text; a rejection's counts for nothing", () => {
    const call = Messages.toolCall({ id: "t1", name: "transfer", arguments: "{\"amount\":10}" })
    const waiting: Messages.Messages = [Messages.user("Send."), {
      role: "assistant",
      parts: [{ ...call, status: { _tag: "AwaitingApproval", policy: { approve: { ids: ["bob"] } } }, decidedUnder: { policy: { approve: { ids: ["bob"] } } } }]
    }]
    const approved = Result.getOrThrow(Messages.approve(waiting, "t1", undefined, { decider: bob, at: 1 }))
    expect(statusOf(approved, "t1")).toMatchObject({ decision: { kind: "approve", argumentsHash: DecisionPolicy.argumentsHash("{\"amount\":10}") } })
    // Bob's rejection, copied onto an approval: not a yes.
    const rejected = Result.getOrThrow(Messages.reject(waiting, "t1", "no", { decider: bob, at: 1 }))
    const decision = (statusOf(rejected, "t1") as { decision: Messages.Decision }).decision
    const forged = write(waiting, "t1", { _tag: "Approved", decision })
    expect(Turn.step(forged, Turn.Event.Resume({ now: 2 }))[1]._tag).toBe("Pause")
    expect(Turn.step(approved, Turn.Event.Resume({ now: 2 }))[1]._tag).toBe("RunTools")
  })
})

describe("four-eyes: every sender of the user messages the call answers asked for it", () => {
  it.effect("alice's queued 'Pay 900 to alice' and bob's 'Thanks', delivered together: neither may approve, carol may", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, [
        MockLanguageModel.toolCalls([{ id: "n1", name: "note", arguments: { text: "start" } }]),
        MockLanguageModel.toolCalls([{ id: "s1", name: "settle", arguments: { amount: 900, to: "alice" } }]),
        MockLanguageModel.text("Paid.")
      ])
      const first = yield* chat.complete(Messages.fromUser("Take a note.", { sender: { id: "dave" } }))
      // Two messages queued during the pause (`rule: "queue"`), from two people.
      const queued = Result.getOrThrow(Result.flatMap(
        Steering.steer(first.messages, Messages.user("Pay 900 to alice", { sender: alice }), { rule: "queue" }),
        (messages) => Steering.steer(messages, Messages.user("Thanks", { sender: bob }), { rule: "queue" })
      ))
      const second = yield* chat.resume(yield* chat.approve(queued, "n1"))
      expect(second.outcome._tag).toBe("Paused")
      expect(DecisionPolicy.requestersOf(second.messages, "s1")).toStrictEqual([alice, bob])
      yield* store.save("conv", second.messages, { expectedVersion: 0 })

      for (const decider of [alice, bob]) {
        const refused = yield* Effect.flip(chat.approve(second.messages, "s1", undefined, { decider }))
        expect(refused._tag).toBe("DecisionNotAllowed")
        expect(DecisionPolicy.mayDecide(second.messages, Messages.findTool(second.messages, "s1")!, "approve", decider).allowed).toBe(false)
      }
      // Alice's approval written past the check by a decide step: the reducer refuses it too.
      const call = Messages.findTool(second.messages, "s1")!
      const forged = yield* Worker.resume(chat, "conv", (stored) =>
        Effect.succeed(write(stored.messages, "s1", {
          _tag: "Approved",
          decision: { by: "alice", at: 1, roles: ["finance"], kind: "approve", argumentsHash: DecisionPolicy.argumentsHash(call.arguments) }
        })))
      expect(forged.outcome._tag).toBe("Paused")
      expect(runs).toEqual(["note:start"])

      const done = yield* Worker.resume(chat, "conv", (stored) =>
        Effect.fromResult(Messages.approve(stored.messages, "s1", undefined, { decider: carol, at: 2 })))
      expect(done.outcome._tag).toBe("Complete")
      expect(runs).toEqual(["note:start", "settle:900:alice"])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it("the requesters are the run of user messages before the response: an earlier turn's sender is not one; a message without a sender makes them unknown", () => {
    const response = (id: string): Messages.Message => ({
      role: "assistant",
      parts: [{ _tag: "ToolCall", id, name: "settle", arguments: "{}", status: { _tag: "AwaitingApproval", policy: { notRequester: true } } }]
    })
    const messages: Messages.Messages = [
      Messages.user("Hi", { sender: alice }),
      Messages.assistant("Hello."),
      Messages.user("Pay", { sender: bob }),
      Messages.user("Now", { sender: carol }),
      Messages.assistant("Thinking."),
      response("s1")
    ]
    expect(DecisionPolicy.requestersOf(messages, "s1")).toStrictEqual([bob, carol])
    expect(DecisionPolicy.requesterOf(messages, "s1")).toStrictEqual(carol)
    const call = Messages.findTool(messages, "s1")!
    expect(DecisionPolicy.mayDecide(messages, call, "approve", alice).allowed).toBe(true)
    expect(DecisionPolicy.mayDecide(messages, call, "approve", bob).allowed).toBe(false)

    const anonymous: Messages.Messages = [Messages.user("Pay", { sender: bob }), Messages.user("Thanks"), response("s2")]
    expect(DecisionPolicy.requestersOf(anonymous, "s2")).toStrictEqual([bob, undefined])
    const verdict = DecisionPolicy.mayDecide(anonymous, Messages.findTool(anonymous, "s2")!, "approve", alice)
    expect(verdict).toMatchObject({ allowed: false, detail: expect.stringContaining("not known") })
  })
})

describe("stored documents", () => {
  it.effect("a paused call stores its fixed policy; the document decodes, and the policy still holds after a status write", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      const chat = yield* chatWith(runs, [MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { amount: 1 } }])])
      const paused = yield* chat.complete(Messages.fromUser("Pay 1.", { sender: alice }))
      const json = Result.getOrThrow(Messages.toJson(paused.messages))
      expect(json).toContain("\"decidedUnder\":{\"policy\":")
      const loaded = Result.getOrThrow(Messages.fromJson(json))
      expect(loaded).toStrictEqual(paused.messages)
      expect(Option.some(Result.getOrThrow(Messages.decode(JSON.parse(json))))).toStrictEqual(Option.some(loaded))
      const resumed = yield* chat.resume(write(loaded, "p1", { _tag: "Approved" }))
      expect(resumed.outcome._tag).toBe("Paused")
      expect(runs).toEqual([])
    }))
})
