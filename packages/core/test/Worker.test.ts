import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Action, Chat, ChatError, ConversationStore, Messages, Tool, Toolkit, Turn, Worker } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

const Pay = Tool.make("pay", {
  description: "Pay a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number })
})
const Sync = Tool.make("sync", {
  description: "Copy a file to the backup (idempotent: same key, same copy).",
  parameters: { path: Schema.String },
  success: Schema.Struct({ attempt: Schema.Number }),
  idempotent: true
})
const tools = Toolkit.withStrategy(Toolkit.make(Pay, Sync), () => Action.RequireApproval())

/** What the handlers saw: the call ids and attempts, in order. */
type Runs = Array<{ readonly id: string; readonly attempt: number }>

const chatWith = (runs: Runs, hold?: Deferred.Deferred<void>, replies = 1) =>
  Chat.make({ tools }).pipe(
    Effect.provide(Layer.merge(
      MockLanguageModel.make(Array.from({ length: replies }, () => MockLanguageModel.text("Done."))).layer,
      tools.toLayer({
        pay: ({ amount }, call) =>
          Effect.sync(() => runs.push({ id: call.id, attempt: call.attempt })).pipe(
            Effect.andThen(hold === undefined ? Effect.void : Deferred.await(hold)),
            Effect.as({ paid: amount })
          ),
        sync: (_, call) => Effect.sync(() => (runs.push({ id: call.id, attempt: call.attempt }), { attempt: call.attempt }))
      })
    ))
  )

const call = (id: string, name: "pay" | "sync", status: Messages.ToolCallPart["status"]): Messages.ToolCallPart => ({
  _tag: "ToolCall",
  id,
  name,
  arguments: name === "pay" ? "{\"amount\":10}" : "{\"path\":\"a.txt\"}",
  status
})

const conversation = (...calls: ReadonlyArray<Messages.ToolCallPart>): Messages.Messages => [
  Messages.user("Pay the bill."),
  { role: "assistant", parts: calls }
]

const approveAll = (stored: ConversationStore.Stored) =>
  Effect.reduce(
    Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
    () => stored.messages,
    (messages, c) => Effect.fromResult(Messages.approve(messages, c.id))
  )

const statuses = (messages: Messages.Messages) => Messages.toolCalls(messages).map((c) => c.status)

describe("Worker.resume", () => {
  it.effect("leases, decides, resumes with checkpoints and releases; a second worker is busy before anything runs", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", conversation(call("c1", "pay", { _tag: "AwaitingApproval" })), { expectedVersion: 0 })
      const runs: Runs = []
      const hold = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(Worker.resume(yield* chatWith(runs, hold), "conv", approveAll, { owner: "w1" }))
      yield* Effect.yieldNow.pipe(Effect.repeat({ times: 20 }))
      expect(runs).toEqual([{ id: "c1", attempt: 1 }])
      // Mid-call: the second worker gets ConversationBusy; nothing is marked failed, nothing runs again.
      const busy = yield* Effect.flip(Worker.resume(yield* chatWith(runs), "conv", approveAll, { owner: "w2" }))
      expect(busy).toMatchObject({ _tag: "ConversationBusy", id: "conv", expiresAt: 30_000 })
      const during = Option.getOrThrow(yield* store.load("conv"))
      expect(statuses(during.messages)).toEqual([{ _tag: "Running" }])
      // The lease is renewed while the call runs, far past its first expiry.
      yield* TestClock.adjust("100 seconds")
      expect(yield* Effect.flip(store.acquire("conv", "w2", "1 second"))).toMatchObject({ _tag: "ConversationBusy" })
      yield* Deferred.succeed(hold, undefined)
      const result = yield* Fiber.join(first)
      expect(result.outcome._tag).toBe("Complete")
      expect(runs).toEqual([{ id: "c1", attempt: 1 }])
      const final = Option.getOrThrow(yield* store.load("conv"))
      expect(final.messages).toEqual(result.messages)
      // Released at completion: the next worker takes it at once.
      expect((yield* store.acquire("conv", "w2", "1 second")).owner).toBe("w2")
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("two resumes with the same owner in one process: one runs the call, the other is busy and changes nothing", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", conversation(call("c1", "pay", { _tag: "AwaitingApproval" })), { expectedVersion: 0 })
      const runs: Runs = []
      const hold = yield* Deferred.make<void>()
      const resume = Effect.flatMap(chatWith(runs, hold), (chat) => Worker.resume(chat, "conv", approveAll, { owner: "proc-1" }))
      const [a, b] = [yield* Effect.forkChild(resume), yield* Effect.forkChild(resume)]
      // The refused one ends first, on its own, while the other waits in its call.
      const first = yield* Effect.raceFirst(Effect.as(Fiber.await(a), a), Effect.as(Fiber.await(b), b))
      const winner = first === a ? b : a
      expect(yield* Effect.flip(Fiber.join(first))).toMatchObject({ _tag: "ConversationBusy", id: "conv", expiresAt: 30_000 })
      yield* Effect.yieldNow.pipe(Effect.repeat({ while: () => runs.length === 0, times: 100 }))
      expect(runs).toEqual([{ id: "c1", attempt: 1 }])
      expect(statuses(Option.getOrThrow(yield* store.load("conv")).messages)).toEqual([{ _tag: "Running" }])
      // The winner still holds its lease and saves under it to the end.
      yield* TestClock.adjust("100 seconds")
      yield* Deferred.succeed(hold, undefined)
      const result = yield* Fiber.join(winner)
      expect(result.outcome._tag).toBe("Complete")
      expect(runs).toEqual([{ id: "c1", attempt: 1 }])
      const final = Option.getOrThrow(yield* store.load("conv"))
      expect(final.messages).toEqual(result.messages)
      expect(statuses(final.messages)).toEqual([{ _tag: "Completed", result: { paid: 10 } }])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a worker that loses its lease mid-call stops the turn with ConversationBusy", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", conversation(call("c1", "pay", { _tag: "AwaitingApproval" })), { expectedVersion: 0 })
      const runs: Runs = []
      const hold = yield* Deferred.make<void>() // never completed: the call would run forever
      // Another worker took the lease (this one stalled past its expiry): renewing it is refused.
      const stolen: ConversationStore.Service = {
        ...store,
        renew: (lease) => Effect.fail(new ChatError.ConversationBusy({ id: lease.id, expiresAt: 99_000 }))
      }
      const resuming = yield* Effect.forkChild(
        Worker.resume(yield* chatWith(runs, hold), "conv", approveAll, { leaseTtl: "30 seconds" }).pipe(
          Effect.provideService(ConversationStore.ConversationStore, stolen)
        )
      )
      yield* TestClock.adjust("10 seconds")
      const error = yield* Effect.flip(Fiber.join(resuming))
      expect(error).toMatchObject({ _tag: "ConversationBusy", expiresAt: 99_000 })
      expect(runs).toEqual([{ id: "c1", attempt: 1 }])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("releases the lease at a pause", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", conversation(call("c1", "pay", { _tag: "AwaitingApproval" })), { expectedVersion: 0 })
      const result = yield* Worker.resume(yield* chatWith([]), "conv", (stored) => Effect.succeed(stored.messages))
      expect(result.outcome._tag).toBe("Paused")
      expect((yield* store.acquire("conv", "next", "1 second")).owner).toBe("next")
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("an unknown conversation is ConversationNotFound, and the decisions' errors come back typed", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const chat = yield* chatWith([])
      expect(yield* Effect.flip(Worker.resume(chat, "ghost", approveAll))).toMatchObject({ _tag: "ConversationNotFound", id: "ghost" })
      yield* store.save("conv", conversation(call("c1", "pay", { _tag: "AwaitingApproval" })), { expectedVersion: 0 })
      const refused = yield* Effect.flip(Worker.resume(chat, "conv", (stored) => Effect.fromResult(Messages.approve(stored.messages, "nope"))))
      expect(refused).toMatchObject({ _tag: "UnknownToolCall", id: "nope" })
      // The failed resume gave its lease back and changed nothing.
      expect((yield* store.acquire("conv", "next", "1 second")).owner).toBe("next")
      expect(Option.map(yield* store.load("conv"), (s) => s.version)).toEqual(Option.some(1))
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  describe("a call left Running by a worker that died", () => {
    const crashed = Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save(
        "conv",
        conversation(call("c1", "pay", { _tag: "Running" }), call("c2", "sync", { _tag: "Running" })),
        { expectedVersion: 0 }
      )
      yield* store.acquire("conv", "dead worker", "30 seconds")
      return store
    })

    it.effect("is left alone while the lease lives; after it expires: interrupted, or run again if idempotent", () =>
      Effect.gen(function*() {
        const store = yield* crashed
        const runs: Runs = []
        const chat = yield* chatWith(runs)
        yield* TestClock.adjust("29 seconds")
        expect(yield* Effect.flip(Worker.resume(chat, "conv", approveAll))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 30_000 })
        expect(statuses(Option.getOrThrow(yield* store.load("conv")).messages)).toEqual([{ _tag: "Running" }, { _tag: "Running" }])
        yield* TestClock.adjust("1 second")
        const result = yield* Worker.resume(chat, "conv", approveAll)
        expect(result.outcome._tag).toBe("Complete")
        // The payment is never made twice; the idempotent copy runs again, as attempt 2.
        expect(runs).toEqual([{ id: "c2", attempt: 2 }])
        const [pay, sync] = Messages.toolCalls(result.messages)
        expect(pay!.status).toMatchObject({ _tag: "Failed", error: expect.stringContaining("interrupted") })
        expect(sync!.status).toEqual({ _tag: "Completed", result: { attempt: 2 } })
        expect(Option.getOrThrow(yield* store.load("conv")).messages).toEqual(result.messages)
      }).pipe(Effect.provide(ConversationStore.layerMemory)))

    it.effect("an idempotent call that reached its last attempt is reported interrupted", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", conversation(call("c2", "sync", { _tag: "Running", attempt: 3 })), { expectedVersion: 0 })
        const runs: Runs = []
        const result = yield* Worker.resume(yield* chatWith(runs), "conv", approveAll)
        expect(runs).toEqual([])
        expect(statuses(result.messages)).toMatchObject([{ _tag: "Failed" }])
      }).pipe(Effect.provide(ConversationStore.layerMemory)))
  })
})

describe("Turn: Resume with rerun", () => {
  it("starts the listed running calls again as their next attempt and fails the others", () => {
    const messages = conversation(
      call("c1", "pay", { _tag: "Running" }),
      call("c2", "sync", { _tag: "Running", editedArguments: "{\"path\":\"b.txt\"}", attempt: 2 })
    )
    const [next, outcome] = Turn.step(messages, Turn.Event.Resume({ now: 0, rerun: ["c2"] }))
    expect(outcome._tag).toBe("RunTools")
    expect(outcome._tag === "RunTools" ? outcome.calls.map((c) => [c.id, c.status]) : []).toEqual([
      ["c2", { _tag: "Running", editedArguments: "{\"path\":\"b.txt\"}", attempt: 3 }]
    ])
    expect(statuses(next)[0]).toMatchObject({ _tag: "Failed" })
    // Without `rerun`, as before: every running call is failed, none runs.
    const [, plain] = Turn.step(messages, Turn.Event.Resume({ now: 0 }))
    expect(plain._tag).not.toBe("RunTools")
  })
})
