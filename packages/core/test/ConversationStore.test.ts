import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { ConversationStore, Messages } from "../src/index.js"

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
})
