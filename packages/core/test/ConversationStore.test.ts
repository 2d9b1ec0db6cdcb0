import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { ChatError, ConversationStore, Messages } from "../src/index.js"

const paused: Messages.Messages = [
  Messages.user("Delete the old logs."),
  {
    role: "assistant",
    parts: [{ _tag: "ToolCall", id: "c1", name: "delete_files", arguments: "{}", status: { _tag: "AwaitingApproval" } }]
  }
]

describe("ConversationStore.layerMemory", () => {
  it.effect("versions saves, refuses stale ones and lists pending conversations", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      expect((yield* store.save("a", paused, { expectedVersion: 0 })).version).toBe(1)
      const stale = yield* Effect.flip(store.save("a", paused, { expectedVersion: 0 }))
      expect(stale).toMatchObject({ _tag: "ConcurrentModification", expectedVersion: 0, actualVersion: 1 })
      yield* TestClock.adjust("1 second")
      yield* store.save("b", [Messages.user("hi"), Messages.assistant("hello")])
      expect((yield* store.listPending()).items.map((p) => [p.id, p.pending])).toEqual([["a", ["c1"]]])
      expect(Option.map(yield* store.load("a"), (s) => s.messages)).toEqual(Option.some(paused))
      yield* store.remove("a")
      expect(yield* store.load("a")).toEqual(Option.none())
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("checkpoint saves each state from the loaded version and refuses to overwrite another writer", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("a", paused, { expectedVersion: 0 })
      const save = ConversationStore.checkpoint(store, "a", 1)
      yield* save(paused)
      yield* save(paused)
      expect(Option.map(yield* store.load("a"), (s) => s.version)).toEqual(Option.some(3))
      const late = ConversationStore.checkpoint(store, "a", 1)
      const refused = yield* Effect.flip(late(paused))
      expect(refused).toMatchObject({ _tag: "ConcurrentModification", expectedVersion: 1, actualVersion: 3 })
      expect(Option.map(yield* store.load("a"), (s) => s.version)).toEqual(Option.some(3))
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("ConversationBusy says what is so: another worker's lease and its end, or no lease held at all", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("a", paused, { expectedVersion: 0 })
      const lease = yield* store.acquire("a", "w1", "10 seconds")
      // Held by another worker: it says so, and until when.
      const taken = yield* Effect.flip(store.acquire("a", "w2", "10 seconds"))
      expect(taken).toMatchObject({ _tag: "ConversationBusy", id: "a", expiresAt: 10_000 })
      expect(taken.message).toContain("another worker")
      expect(taken.message).toContain(new Date(10_000).toISOString())

      // Released: nobody holds it, so a save or a renewal under it must not claim another worker runs it.
      yield* store.release(lease)
      const saved = yield* Effect.flip(store.save("a", paused, { expectedVersion: 1, lease }))
      const renewed = yield* Effect.flip(store.renew(lease, "10 seconds"))
      for (const error of [saved, renewed]) {
        expect(error).toBeInstanceOf(ChatError.ConversationBusy)
        const busy = error as ChatError.ConversationBusy
        expect(busy.expiresAt).toBeUndefined()
        expect(busy.message).not.toContain("another worker")
        expect(busy.message).not.toMatch(/ends at|1970/)
        expect(busy.message).toContain("no worker holds it")
      }

      // Expired and not taken again: the same (a lease that ended is held by nobody).
      const short = yield* store.acquire("a", "w2", "1 second")
      yield* TestClock.adjust("2 seconds")
      const late = yield* Effect.flip(store.save("a", paused, { expectedVersion: 1, lease }))
      expect(late).toMatchObject({ _tag: "ConversationBusy" })
      expect((late as ChatError.ConversationBusy).expiresAt).toBeUndefined()
      expect(late.message).not.toContain("another worker")
      expect(short.owner).toBe("w2")
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a lease is one run's: the same owner cannot take it twice, and a stale lease renews, saves and releases nothing", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("a", paused, { expectedVersion: 0 })
      const first = yield* store.acquire("a", "proc-1", "10 seconds")
      expect(yield* Effect.flip(store.acquire("a", "proc-1", "10 seconds"))).toMatchObject({
        _tag: "ConversationBusy",
        expiresAt: 10_000
      })
      yield* store.release(first)
      const second = yield* store.acquire("a", "proc-1", "20 seconds")
      expect(second.token).not.toBe(first.token)
      // The first run's lease, same owner, is stale: it neither releases, renews nor saves under the second's.
      yield* store.release(first)
      expect(yield* Effect.flip(store.renew(first, "1 minute"))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 20_000 })
      expect(yield* Effect.flip(store.save("a", paused, { expectedVersion: 1, lease: first }))).toMatchObject({
        _tag: "ConversationBusy",
        expiresAt: 20_000
      })
      expect(yield* Effect.flip(store.acquire("a", "proc-2", "1 second"))).toMatchObject({ expiresAt: 20_000 })
      expect((yield* store.save("a", paused, { expectedVersion: 1, lease: second })).version).toBe(2)
      expect((yield* store.renew(second, "30 seconds")).expiresAt).toBe(30_000)
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it("ConversationBusy's text: an epoch-ms end is shown as a date, and its absence as no lease held", () => {
    const held = new ChatError.ConversationBusy({ id: "c", expiresAt: 1_700_000_000_000 })
    expect(held.message).toBe(
      "Conversation 'c' is held by another run (another worker, or another resume in this process): its lease ends at 2023-11-14T22:13:20.000Z unless renewed."
    )
    const free = new ChatError.ConversationBusy({ id: "c" })
    expect(free.message).toBe(
      "Conversation 'c' is not leased to this run: its lease was released or has expired, and no worker holds it now."
    )
  })
})
