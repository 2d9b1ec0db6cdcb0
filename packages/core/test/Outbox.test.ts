import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import {
  Action,
  Chat,
  ChatError,
  ConversationStore,
  Messages,
  type Notification,
  Notifier,
  Outbox,
  OutboxDispatcher,
  Tool,
  Toolkit,
  Worker
} from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

const Pay = Tool.make("pay", {
  description: "Pay a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number })
})
const tools = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.RequireApproval())

const chat = () => Chat.make({ tools }).pipe(
  Effect.provide(Layer.merge(
    MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "c1", name: "pay", arguments: { amount: 10 } }]),
      MockLanguageModel.text("Paid.")
    ]).layer,
    tools.toLayer({ pay: ({ amount }) => Effect.succeed({ paid: amount }) })
  ))
)

const approveAll = (stored: ConversationStore.Stored) =>
  Effect.reduce(
    Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
    () => stored.messages,
    (messages, c) => Effect.fromResult(Messages.approve(messages, c.id))
  )

/** A notifier recording what it was told, failing the first `failures` sends of each notification. */
const recording = (failures = 0, retryable = true) => {
  const seen: Array<Notification.Notification> = []
  const tries = new Map<string, number>()
  const layer = Notifier.layer((notification) =>
    Effect.suspend(() => {
      const n = (tries.get(notification.id) ?? 0) + 1
      tries.set(notification.id, n)
      if (n <= failures) return Effect.fail(new ChatError.NotificationFailed({ id: notification.id, detail: "HTTP 500", status: 500, retryable }))
      seen.push(notification)
      return Effect.void
    })
  )
  return { seen, tries, layer }
}

/** Pauses conversation `id` (saved as a new conversation), then resumes it with every call approved. */
const pauseThenResume = (id: string) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const c = yield* chat()
    const first = yield* store.save(id, Messages.fromUser("Pay the bill."), { expectedVersion: 0 })
    const result = yield* c.complete(first.messages, { checkpoint: ConversationStore.checkpoint(store, id, first.version) })
    expect(result.outcome._tag).toBe("Paused")
    const pausedKinds = (yield* (yield* Outbox.Outbox).list()).map((entry) => entry.notification.kind)
    const resumed = yield* Worker.resume(c, id, approveAll)
    expect(resumed.outcome._tag).toBe("Complete")
    return pausedKinds
  })

describe("the memory store's outbox", () => {
  it.effect("each save writes its notifications with the state: pause, decision, resume, completion, in order", () =>
    Effect.gen(function*() {
      const pausedKinds = yield* pauseThenResume("conv")
      expect(pausedKinds).toEqual(["Paused"])
      const entries = yield* (yield* Outbox.Outbox).list()
      expect(entries.map((entry) => [entry.notification.kind, entry.status])).toEqual([
        ["Paused", "pending"],
        ["Decided", "pending"],
        ["Resumed", "pending"],
        ["Completed", "pending"]
      ])
      expect(entries[0]!.notification).toMatchObject({ conversationId: "conv", calls: [{ id: "c1", status: "AwaitingApproval" }] })
      expect(new Set(entries.map((entry) => entry.notification.id)).size).toBe(4)
    }).pipe(Effect.provide(ConversationStore.layerMemoryWithOutbox)))

  it.effect("a refused save writes no notification", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const state: Messages.Messages = [Messages.user("Pay."), Messages.assistant([
        { ...Messages.toolCall({ id: "c1", name: "pay", arguments: "{}" }), status: { _tag: "AwaitingApproval" } }
      ])]
      yield* store.save("conv", state, { expectedVersion: 0 })
      const refused = yield* Effect.flip(store.save("conv", state, { expectedVersion: 0 }))
      expect(refused._tag).toBe("ConcurrentModification")
      expect((yield* (yield* Outbox.Outbox).list()).length).toBe(1)
      // A save under a lease another run took: ConversationBusy, and no notification either.
      const lease = yield* store.acquire("conv", "w1", "1 second")
      yield* TestClock.adjust("2 seconds")
      yield* store.acquire("conv", "w2", "1 minute")
      const done = [...state.slice(0, 1), Messages.assistant("Done.")]
      expect((yield* Effect.flip(store.save("conv", done, { expectedVersion: 1, lease })))._tag).toBe("ConversationBusy")
      expect((yield* (yield* Outbox.Outbox).list()).length).toBe(1)
    }).pipe(Effect.provide(ConversationStore.layerMemoryWithOutbox)))

  it.effect("claims: two dispatchers never hold one row; an expired claim is taken again; bad options are refused", () =>
    Effect.gen(function*() {
      yield* pauseThenResume("conv")
      const outbox = yield* Outbox.Outbox
      const a = yield* outbox.claim({ limit: 3, ttl: 1_000 })
      const b = yield* outbox.claim({ limit: 10, ttl: 1_000 })
      expect(a.length).toBe(3)
      expect(b.length).toBe(1)
      expect(b.map((c) => c.entry.notification.id)).not.toContain(a[0]!.entry.notification.id)
      expect(yield* outbox.claim({ limit: 10, ttl: 1_000 })).toEqual([])
      yield* TestClock.adjust("1001 millis")
      const again = yield* outbox.claim({ limit: 10, ttl: 1_000 })
      expect(again.length).toBe(4)
      // The old claim no longer marks anything failed.
      yield* outbox.failed(a[0]!, 1, "late")
      expect((yield* outbox.list({ status: "failed" })).length).toBe(0)
      for (const bad of [{ limit: 0, ttl: 1 }, { limit: Number.NaN, ttl: 1 }, { limit: 1, ttl: 0 }, { limit: 1.5, ttl: 1 }]) {
        expect((yield* Effect.flip(outbox.claim(bad)))._tag).toBe("StoreError")
      }
    }).pipe(Effect.provide(ConversationStore.layerMemoryWithOutbox)))

  it.effect("the plain memory store keeps no outbox", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.makeMemory
      yield* store.save("conv", Messages.fromUser("Hi"))
      expect((yield* Effect.serviceOption(Outbox.Outbox))._tag).toBe("None")
    }))
})

describe("OutboxDispatcher", () => {
  it.effect("delivers every row once and marks it delivered; a second pass sends nothing", () => {
    const notifier = recording()
    return Effect.gen(function*() {
      yield* pauseThenResume("conv")
      expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 4, failed: 0 })
      expect(notifier.seen.map((n) => n.kind)).toEqual(["Paused", "Decided", "Resumed", "Completed"])
      expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 0, failed: 0 })
      const entries = yield* (yield* Outbox.Outbox).list({ status: "delivered" })
      expect(entries.map((e) => e.attempts)).toEqual([1, 1, 1, 1])
    }).pipe(Effect.provide(Layer.merge(ConversationStore.layerMemoryWithOutbox, notifier.layer)))
  })

  it.effect("retries a failing receiver on the schedule (test clock), then delivers", () => {
    const notifier = recording(2)
    return Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", [Messages.user("Hi"), Messages.assistant("Hello.")])
      const pass = yield* Effect.forkChild(OutboxDispatcher.deliverPending())
      yield* TestClock.adjust("1 second") // first retry
      expect(notifier.seen).toEqual([])
      yield* TestClock.adjust("2 seconds") // second retry succeeds
      expect(yield* Fiber.join(pass)).toEqual({ delivered: 1, failed: 0 })
      expect(notifier.seen.map((n) => n.kind)).toEqual(["Completed"])
      expect((yield* (yield* Outbox.Outbox).list())[0]).toMatchObject({ status: "delivered", attempts: 3 })
    }).pipe(Effect.provide(Layer.merge(ConversationStore.layerMemoryWithOutbox, notifier.layer)))
  })

  it.effect("a receiver that fails forever: bounded tries, the row kept as failed with its attempts; requeue sends it again", () => {
    const notifier = recording(Number.POSITIVE_INFINITY)
    return Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", [Messages.user("Hi"), Messages.assistant("Hello.")])
      const pass = yield* Effect.forkChild(OutboxDispatcher.deliverPending())
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.join(pass)).toEqual({ delivered: 0, failed: 1 })
      expect(notifier.tries.size).toBe(1)
      expect([...notifier.tries.values()]).toEqual([5])
      const outbox = yield* Outbox.Outbox
      const [failed] = yield* outbox.list()
      expect(failed).toMatchObject({ status: "failed", attempts: 5, lastError: "HTTP 500" })
      // A failed row is not claimed again by itself…
      expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 0, failed: 0 })
      // …until an operator requeues it (an unknown id: false).
      expect(yield* outbox.requeue("nope")).toBe(false)
      expect(yield* outbox.requeue(failed!.notification.id)).toBe(true)
      const again = yield* Effect.forkChild(OutboxDispatcher.deliverPending({ retry: OutboxDispatcher.defaultRetry }))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(again)
      expect((yield* outbox.list())[0]).toMatchObject({ status: "failed", attempts: 10 })
    }).pipe(Effect.provide(Layer.merge(ConversationStore.layerMemoryWithOutbox, notifier.layer)))
  })

  it.effect("a failure that is not retryable (a 4xx) is tried once", () => {
    const notifier = recording(Number.POSITIVE_INFINITY, false)
    return Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", [Messages.user("Hi"), Messages.assistant("Hello.")])
      expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 0, failed: 1 })
      expect((yield* (yield* Outbox.Outbox).list())[0]).toMatchObject({ status: "failed", attempts: 1 })
    }).pipe(Effect.provide(Layer.merge(ConversationStore.layerMemoryWithOutbox, notifier.layer)))
  })

  it.effect("a receiver that hangs is cut off at the claim's time and marked failed", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", [Messages.user("Hi"), Messages.assistant("Hello.")])
      const pass = yield* Effect.forkChild(OutboxDispatcher.deliverPending({ claimTtl: "10 seconds" }))
      yield* TestClock.adjust("9 seconds")
      expect(yield* Fiber.join(pass)).toEqual({ delivered: 0, failed: 1 })
      expect((yield* (yield* Outbox.Outbox).list())[0]).toMatchObject({ status: "failed", attempts: 1 })
    }).pipe(Effect.provide(Layer.merge(ConversationStore.layerMemoryWithOutbox, Notifier.layer(() => Effect.never)))))

  it.effect("a notifier that fails does not touch the turn: it completes, and its state is stored", () => {
    const notifier = recording(Number.POSITIVE_INFINITY)
    return Effect.gen(function*() {
      const dispatcher = yield* Effect.forkChild(OutboxDispatcher.run({ pollInterval: "1 second" }))
      yield* pauseThenResume("conv")
      yield* TestClock.adjust("5 minutes")
      const stored = yield* (yield* ConversationStore.ConversationStore).load("conv")
      expect(stored._tag === "Some" && Messages.toolCalls(stored.value.messages)[0]!.status._tag).toBe("Completed")
      const entries = yield* (yield* Outbox.Outbox).list()
      expect(entries.map((e) => [e.status, e.attempts])).toEqual([["failed", 5], ["failed", 5], ["failed", 5], ["failed", 5]])
      yield* Fiber.interrupt(dispatcher)
    }).pipe(Effect.provide(Layer.merge(ConversationStore.layerMemoryWithOutbox, notifier.layer)))
  })
})
