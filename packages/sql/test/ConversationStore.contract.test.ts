/**
 * The `ConversationStore` contract: one suite, run on the in-memory store, on
 * SQLite and on PostgreSQL. Leases run on Effect's `Clock` here, so
 * `TestClock` moves them.
 */
import { Action, Chat, ConversationStore, Messages, Tool, Toolkit, Worker } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, type Duration, Effect, Fiber, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { stores } from "./support/Databases.js"

const paused = (id = "c1"): Messages.Messages => [
  Messages.user("Delete the old logs."),
  {
    role: "assistant",
    parts: [{ _tag: "ToolCall", id, name: "delete_files", arguments: "{\"paths\":[\"a.log\"]}", status: { _tag: "AwaitingApproval" } }]
  }
]
const done: Messages.Messages = [Messages.user("Hi"), Messages.assistant("Hello!")]

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number })
})
const files = Toolkit.withStrategy(Toolkit.make(DeleteFiles), () => Action.RequireApproval())

/** A chat whose handler records each run (its attempt), says it `started`, and waits for `hold`. */
const chatWith = (runs: Array<number>, started: Deferred.Deferred<void>, hold: Deferred.Deferred<void>) =>
  Chat.make({ tools: files }).pipe(
    Effect.provide(Layer.merge(
      MockLanguageModel.make([MockLanguageModel.text("Deleted.")]).layer,
      files.toLayer({
        delete_files: ({ paths }, call) =>
          Effect.sync(() => runs.push(call.attempt)).pipe(
            Effect.andThen(Deferred.succeed(started, undefined)),
            Effect.andThen(Deferred.await(hold)),
            Effect.as({ deleted: paths.length })
          )
      })
    ))
  )

const approveAll = (stored: ConversationStore.Stored) =>
  Effect.reduce(
    Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision),
    () => stored.messages,
    (messages, call) => Effect.fromResult(Messages.approve(messages, call.id))
  )

const statuses = (stored: Option.Option<ConversationStore.Stored>) =>
  Messages.toolCalls(Option.getOrThrow(stored).messages).map((call) => call.status)

/** The store's own one-step methods, and the same store without them (the fallbacks in `ConversationStore`). */
const ways: ReadonlyArray<readonly [string, (store: ConversationStore.Service) => ConversationStore.Service]> = [
  ["the store's own", (store) => store],
  ["the fallback", ({ acquire, listPending, load, release, remove, renew, save }) => ({ acquire, listPending, load, release, remove, renew, save })]
]

/** `store`, recording the name of each lease and save method called. */
const counting = (store: ConversationStore.Service, calls: Array<string>): ConversationStore.Service => {
  const record = <A extends ReadonlyArray<unknown>, B>(name: string, f: (...args: A) => B) => (...args: A): B => {
    calls.push(name)
    return f(...args)
  }
  return {
    ...store,
    load: record("load", store.load),
    save: record("save", store.save),
    acquire: record("acquire", store.acquire),
    release: record("release", store.release),
    ...(store.acquireAndLoad === undefined ? {} : { acquireAndLoad: record("acquireAndLoad", store.acquireAndLoad) }),
    ...(store.saveAndRelease === undefined ? {} : { saveAndRelease: record("saveAndRelease", store.saveAndRelease) })
  }
}

for (const [name, layer] of stores) {
  describe(`ConversationStore contract on ${name}`, () => {
    it.effect("saves and loads, growing the version on each save", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        expect((yield* store.save("conv", paused(), { expectedVersion: 0 })).version).toBe(1)
        const loaded = yield* store.load("conv")
        expect(Option.map(loaded, (s) => [s.messages, s.version])).toEqual(Option.some([paused(), 1]))
        const approved = yield* Effect.fromResult(Messages.approve(paused(), "c1"))
        expect((yield* store.save("conv", approved, { expectedVersion: 1 })).version).toBe(2)
        expect(Option.map(yield* store.load("conv"), (s) => s.messages)).toEqual(Option.some(approved))
        expect(yield* store.load("nobody")).toEqual(Option.none())
      }).pipe(Effect.provide(layer())))

    it.effect("refuses a stale save, an insert over an existing one and an update of a missing one", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", paused(), { expectedVersion: 0 })
        yield* store.save("conv", paused(), { expectedVersion: 1 })
        const stale = yield* Effect.flip(store.save("conv", done, { expectedVersion: 1 }))
        expect(stale).toMatchObject({ _tag: "ConcurrentModification", id: "conv", expectedVersion: 1, actualVersion: 2 })
        const again = yield* Effect.flip(store.save("conv", done, { expectedVersion: 0 }))
        expect(again).toMatchObject({ _tag: "ConcurrentModification", expectedVersion: 0, actualVersion: 2 })
        const missing = yield* Effect.flip(store.save("ghost", done, { expectedVersion: 4 }))
        expect(missing._tag).toBe("ConcurrentModification")
        expect(missing).not.toHaveProperty("actualVersion")
        // The refused saves changed nothing.
        expect(Option.map(yield* store.load("conv"), (s) => [s.messages, s.version])).toEqual(Option.some([paused(), 2]))
        expect(yield* store.load("ghost")).toEqual(Option.none())
        // Without an expected version the last write wins.
        expect((yield* store.save("conv", done)).version).toBe(3)
        expect(Option.map(yield* store.load("conv"), (s) => s.messages)).toEqual(Option.some(done))
        expect((yield* store.save("new", done)).version).toBe(1)
      }).pipe(Effect.provide(layer())))

    it.effect("keeps every change across saves that grow, edit and shrink the conversation", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        let messages: Messages.Messages = paused()
        let version = (yield* store.save("conv", messages, { expectedVersion: 0 })).version
        const states: Array<Messages.Messages> = []
        messages = yield* Effect.fromResult(Messages.approve(messages, "c1"))
        states.push(messages)
        messages = [...messages, Messages.user("and the temp files, \u00e9t\u00e9 \u{1F600} \"quoted\"")]
        states.push(messages)
        messages = [messages[0]!, Messages.assistant("replaced in the middle"), ...messages.slice(2)]
        states.push(messages)
        messages = messages.slice(0, 1)
        states.push(messages)
        for (const state of states) {
          version = (yield* store.save("conv", state, { expectedVersion: version })).version
          expect(Option.map(yield* store.load("conv"), (s) => [s.messages, s.version])).toEqual(Option.some([state, version]))
        }
        // A save that does not know the stored state (no expected version) rewrites it whole.
        yield* store.save("conv", done)
        expect(Option.map(yield* store.load("conv"), (s) => s.messages)).toEqual(Option.some(done))
      }).pipe(Effect.provide(layer())))

    it.effect("keeps grants and their revocation across saves (a grant on the first message, revoked later)", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        // The grant sits on the user message; the revocation changes that (first) message only.
        const [ask, response] = paused()
        const onAsk = yield* Effect.fromResult(Messages.grant([ask!], {
          id: "g1",
          tool: "delete_*",
          where: { all: [{ path: ["paths", 0], suffix: ".log" }, { not: { path: ["force"], equals: true } }] },
          scope: { conversation: "grants", user: "u1" },
          by: "alice",
          at: 1_000,
          expiresAfter: "1 hour",
          reason: "logs only"
        }))
        const granted = [...onAsk, response!]
        const first = yield* store.save("grants", granted, { expectedVersion: 0 })
        expect(Option.getOrThrow(yield* store.load("grants")).messages).toStrictEqual(granted)
        const revoked = yield* Effect.fromResult(Messages.revokeGrant(granted, "g1", { by: "bob", at: 2_000 }))
        yield* store.save("grants", revoked, { expectedVersion: first.version })
        const loaded = Option.getOrThrow(yield* store.load("grants")).messages
        expect(loaded).toStrictEqual(revoked)
        expect(loaded[0]!.grants?.[0]?.revoked).toEqual({ by: "bob", at: 2_000 })
      }).pipe(Effect.provide(layer())))

    it.effect("lists the conversations that wait, oldest first, in pages", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("b", paused())
        yield* TestClock.adjust("1 minute")
        yield* store.save("done", done)
        yield* store.save("a", paused("c2"))
        yield* store.save("c", paused("c3"))
        const all = yield* store.listPending()
        expect(all.items.map((p) => [p.id, p.pending, p.updatedAt, p.version])).toEqual([
          ["b", ["c1"], 0, 1],
          ["a", ["c2"], 60_000, 1],
          ["c", ["c3"], 60_000, 1]
        ])
        expect(all.cursor).toBeUndefined()
        const first = yield* store.listPending({ limit: 2 })
        expect(first.items.map((p) => p.id)).toEqual(["b", "a"])
        const second = yield* store.listPending({ limit: 2, cursor: first.cursor! })
        expect(second.items.map((p) => p.id)).toEqual(["c"])
        expect(second.cursor).toBeUndefined()
        // A conversation that stops waiting leaves the list.
        yield* store.save("b", done)
        yield* store.remove("a")
        expect((yield* store.listPending()).items.map((p) => p.id)).toEqual(["c"])
      }).pipe(Effect.provide(layer())))

    it.effect("refuses page sizes and cursors it did not give", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused())
        for (const limit of [0, -1, 1.5, Number.NaN, Infinity, ConversationStore.maxPageSize + 1]) {
          expect(yield* Effect.flip(store.listPending({ limit }))).toMatchObject({ _tag: "StoreError" })
        }
        for (const cursor of ["", "x", "NaN:a", "-1:a", "1e3:a", "12", "0:\u0000", "99999999999999999:a"]) {
          expect(yield* Effect.flip(store.listPending({ cursor }))).toMatchObject({ _tag: "StoreError" })
        }
        expect((yield* store.listPending({ cursor: "0:0" })).items.map((p) => p.id)).toEqual(["a"])
      }).pipe(Effect.provide(layer())))

    it.effect("removes conversations", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused())
        yield* store.remove("a")
        yield* store.remove("never-stored")
        expect(yield* store.load("a")).toEqual(Option.none())
        expect((yield* store.save("a", done, { expectedVersion: 0 })).version).toBe(1)
      }).pipe(Effect.provide(layer())))

    it.effect("checkpoint saves each state from the loaded version and refuses to overwrite another writer", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused(), { expectedVersion: 0 })
        const save = ConversationStore.checkpoint(store, "a", 1)
        yield* save(paused())
        yield* save(paused())
        expect(Option.map(yield* store.load("a"), (s) => s.version)).toEqual(Option.some(3))
        const late = ConversationStore.checkpoint(store, "a", 1)
        const refused = yield* Effect.flip(late(paused()))
        expect(refused).toMatchObject({ _tag: "ConcurrentModification", expectedVersion: 1, actualVersion: 3 })
        expect(Option.map(yield* store.load("a"), (s) => s.version)).toEqual(Option.some(3))
      }).pipe(Effect.provide(layer())))

    it.effect("a lease keeps other workers out until it is released or expires", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused(), { expectedVersion: 0 })
        const lease = yield* store.acquire("a", "worker-1", "10 seconds")
        expect(lease).toEqual({ id: "a", owner: "worker-1", token: expect.any(String), expiresAt: 10_000 })
        const busy = yield* Effect.flip(store.acquire("a", "worker-2", "10 seconds"))
        expect(busy).toMatchObject({ _tag: "ConversationBusy", id: "a", expiresAt: 10_000 })
        // Its run renews it; another run of the same owner cannot take it.
        yield* TestClock.adjust("5 seconds")
        expect((yield* store.renew(lease, "10 seconds")).expiresAt).toBe(15_000)
        expect(yield* Effect.flip(store.acquire("a", "worker-1", "10 seconds"))).toMatchObject({ expiresAt: 15_000 })
        yield* TestClock.adjust("9999 millis")
        expect(yield* Effect.flip(store.acquire("a", "worker-2", "1 second"))).toMatchObject({ expiresAt: 15_000 })
        // Expired (its owner died): another worker takes it, and the old owner can neither renew nor save.
        yield* TestClock.adjust("1 millis")
        const taken = yield* store.acquire("a", "worker-2", "10 seconds")
        expect(taken).toEqual({ id: "a", owner: "worker-2", token: expect.any(String), expiresAt: 25_000 })
        expect(yield* Effect.flip(store.renew(lease, "10 seconds"))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 25_000 })
        expect(yield* Effect.flip(store.save("a", done, { expectedVersion: 1, lease }))).toMatchObject({
          _tag: "ConversationBusy",
          expiresAt: 25_000
        })
        expect(Option.map(yield* store.load("a"), (s) => [s.messages, s.version])).toEqual(Option.some([paused(), 1]))
        // Its owner saves under it; releasing lets the next worker in at once.
        expect((yield* store.save("a", done, { expectedVersion: 1, lease: taken })).version).toBe(2)
        yield* store.release(lease) // not held by worker-1: nothing happens
        expect(yield* Effect.flip(store.acquire("a", "worker-3", "1 second"))).toMatchObject({ _tag: "ConversationBusy" })
        yield* store.release(taken)
        expect((yield* store.acquire("a", "worker-3", "1 second")).owner).toBe("worker-3")
        // A save without a lease still works (compare-and-set only); a stale version under a lease is a conflict.
        expect(yield* Effect.flip(store.save("a", done, { expectedVersion: 1, lease: taken }))).toMatchObject({
          _tag: "ConcurrentModification"
        })
      }).pipe(Effect.provide(layer())))

    it.effect("a lease is one run's: the same owner cannot take it twice, and a stale or forged lease renews, saves and releases nothing", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused(), { expectedVersion: 0 })
        const first = yield* store.acquire("a", "proc-1", "10 seconds")
        const twice = yield* Effect.flip(store.acquire("a", "proc-1", "10 seconds"))
        expect(twice).toMatchObject({ _tag: "ConversationBusy", id: "a", expiresAt: 10_000 })
        expect(twice.message).toContain("another run")
        yield* store.release(first)
        const second = yield* store.acquire("a", "proc-1", "20 seconds")
        expect(second.token).not.toBe(first.token)
        // The first run's lease (same owner, same process) is stale: it neither removes, renews nor saves under the second's.
        yield* store.release(first)
        yield* store.release({ ...second, token: "a guess" })
        // A lease built by hand without a token (as from JavaScript) matches nothing, never everything.
        const tokenless = { id: "a", owner: "proc-1", expiresAt: 20_000 } as Partial<ConversationStore.Lease> as ConversationStore.Lease
        yield* store.release(tokenless)
        expect(yield* Effect.flip(store.renew(tokenless, "1 minute"))).toMatchObject({ _tag: "ConversationBusy" })
        expect(yield* Effect.flip(store.save("a", done, { expectedVersion: 1, lease: tokenless }))).toMatchObject({ _tag: "ConversationBusy" })
        expect(yield* Effect.flip(store.renew(first, "1 minute"))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 20_000 })
        expect(yield* Effect.flip(store.save("a", done, { expectedVersion: 1, lease: first }))).toMatchObject({
          _tag: "ConversationBusy",
          expiresAt: 20_000
        })
        expect(yield* Effect.flip(store.acquire("a", "proc-2", "1 second"))).toMatchObject({ expiresAt: 20_000 })
        expect(Option.map(yield* store.load("a"), (s) => [s.messages, s.version])).toEqual(Option.some([paused(), 1]))
        // The second run's lease is whole: it saves, renews and releases.
        expect((yield* store.save("a", done, { expectedVersion: 1, lease: second })).version).toBe(2)
        expect((yield* store.renew(second, "30 seconds")).expiresAt).toBe(30_000)
        yield* store.release(second)
        expect((yield* store.acquire("a", "proc-2", "1 second")).owner).toBe("proc-2")
        // A run that stalled past its expiry, taken over by a run of the same owner: its lease is stale too.
        yield* store.save("b", paused(), { expectedVersion: 0 })
        const stalled = yield* store.acquire("b", "proc-1", "1 second")
        yield* TestClock.adjust("2 seconds")
        const takeover = yield* store.acquire("b", "proc-1", "10 seconds")
        const refused = yield* Effect.flip(store.save("b", done, { expectedVersion: 1, lease: stalled }))
        expect(refused).toMatchObject({ _tag: "ConversationBusy", id: "b", expiresAt: 12_000 })
        expect(refused.message).toContain("held by another run")
        expect(yield* Effect.flip(store.renew(stalled, "10 seconds"))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 12_000 })
        yield* store.release(stalled)
        expect(yield* Effect.flip(store.acquire("b", "proc-2", "1 second"))).toMatchObject({ expiresAt: 12_000 })
        expect((yield* store.save("b", done, { expectedVersion: 1, lease: takeover })).version).toBe(2)
      }).pipe(Effect.provide(layer())))

    it.effect("Worker.resume twice at once with one owner: one run runs the call and saves to the end, the other is busy and changes nothing", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused(), { expectedVersion: 0 })
        const runs: Array<number> = []
        const [started, hold] = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
        const resume = Effect.flatMap(chatWith(runs, started, hold), (chat) => Worker.resume(chat, "a", approveAll, { owner: "proc-1" }))
        const [a, b] = [yield* Effect.forkChild(resume), yield* Effect.forkChild(resume)]
        // The refused one ends on its own, while the other waits in its call.
        const first = yield* Effect.raceFirst(Effect.as(Fiber.await(a), a), Effect.as(Fiber.await(b), b))
        const winner = first === a ? b : a
        expect(yield* Effect.flip(Fiber.join(first))).toMatchObject({ _tag: "ConversationBusy", id: "a", expiresAt: 30_000 })
        yield* Deferred.await(started)
        expect(runs).toEqual([1])
        expect(statuses(yield* store.load("a"))).toEqual([{ _tag: "Running" }])
        yield* Deferred.succeed(hold, undefined)
        const result = yield* Fiber.join(winner)
        expect(result.outcome._tag).toBe("Complete")
        expect(runs).toEqual([1])
        expect(statuses(yield* store.load("a"))).toEqual([{ _tag: "Completed", result: { deleted: 1 } }])
        // Released at the end: the next run takes it at once.
        expect((yield* store.acquire("a", "proc-1", "1 second")).owner).toBe("proc-1")
      }).pipe(Effect.provide(layer())))

    it.effect("a refusal says what is so: another worker's lease with its end, or, once released or expired, no lease at all", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused(), { expectedVersion: 0 })
        const lease = yield* store.acquire("a", "worker-1", "10 seconds")
        const taken = yield* Effect.flip(store.acquire("a", "worker-2", "10 seconds"))
        expect(taken.message).toContain("another worker")
        expect(taken.message).toContain(new Date(10_000).toISOString())
        // Released: a save or a renewal under it is refused without claiming that anyone runs it.
        yield* store.release(lease)
        const refusals = [
          yield* Effect.flip(store.save("a", done, { expectedVersion: 1, lease })),
          yield* Effect.flip(store.renew(lease, "10 seconds"))
        ]
        // Expired and not taken since: the same.
        const short = yield* store.acquire("a", "worker-2", "1 second")
        yield* TestClock.adjust("2 seconds")
        refusals.push(yield* Effect.flip(store.save("a", done, { expectedVersion: 1, lease })))
        for (const refusal of refusals) {
          expect(refusal).toMatchObject({ _tag: "ConversationBusy", id: "a" })
          expect((refusal as { readonly expiresAt?: number }).expiresAt).toBeUndefined()
          expect(refusal.message).not.toContain("another worker")
          expect(refusal.message).toContain("no worker holds it")
        }
        expect(short.owner).toBe("worker-2")
        expect(Option.map(yield* store.load("a"), (s) => s.version)).toEqual(Option.some(1))
      }).pipe(Effect.provide(layer())))

    it.effect("refuses a lease of no time, of negative, endless or no number, and changes nothing", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("a", paused(), { expectedVersion: 0 })
        for (const ttl of [0, -1, Number.NaN, Infinity, "0 millis", "forever", "9999 weeks"] as const) {
          expect(yield* Effect.flip(store.acquire("a", "w1", ttl as Duration.Input))).toMatchObject({ _tag: "StoreError" })
        }
        const lease = yield* store.acquire("a", "w1", "1 second")
        expect(yield* Effect.flip(store.renew(lease, 0))).toMatchObject({ _tag: "StoreError" })
        expect(yield* Effect.flip(store.acquire("a", "w2", "1 second"))).toMatchObject({ _tag: "ConversationBusy", expiresAt: 1000 })
      }).pipe(Effect.provide(layer())))

    it.effect("leasing a conversation that is not stored is ConversationNotFound", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        expect(yield* Effect.flip(store.acquire("ghost", "w", "1 second"))).toMatchObject({
          _tag: "ConversationNotFound",
          id: "ghost"
        })
        expect(yield* Effect.flip(store.renew({ id: "ghost", owner: "w", token: "t", expiresAt: 0 }, "1 second"))).toMatchObject({
          _tag: "ConversationBusy"
        })
      }).pipe(Effect.provide(layer())))

    for (const [way, strip] of ways) {
      it.effect(`acquireAndLoad (${way}) takes a new lease and loads under it; busy, missing and refused take nothing`, () =>
        Effect.gen(function*() {
          const store = strip(yield* ConversationStore.ConversationStore)
          yield* store.save("a", paused(), { expectedVersion: 0 })
          const { lease, stored } = yield* ConversationStore.acquireAndLoad(store, "a", "worker-1", "10 seconds")
          expect(lease).toEqual({ id: "a", owner: "worker-1", token: expect.any(String), expiresAt: 10_000 })
          expect([stored.messages, stored.version]).toEqual([paused(), 1])
          expect(yield* Effect.flip(ConversationStore.acquireAndLoad(store, "a", "worker-1", "10 seconds"))).toMatchObject({
            _tag: "ConversationBusy",
            expiresAt: 10_000
          })
          expect(yield* Effect.flip(ConversationStore.acquireAndLoad(store, "ghost", "worker-1", "1 second"))).toMatchObject({
            _tag: "ConversationNotFound",
            id: "ghost"
          })
          expect(yield* Effect.flip(ConversationStore.acquireAndLoad(store, "a", "worker-2", 0))).toMatchObject({ _tag: "StoreError" })
          // The lease taken is the one saves check; once expired, another run takes it with its own token.
          expect((yield* store.save("a", done, { expectedVersion: 1, lease })).version).toBe(2)
          yield* TestClock.adjust("10 seconds")
          const next = yield* ConversationStore.acquireAndLoad(store, "a", "worker-2", "1 second")
          expect(next.lease.token).not.toBe(lease.token)
          expect([next.stored.messages, next.stored.version]).toEqual([done, 2])
          expect(yield* Effect.flip(store.save("a", paused(), { expectedVersion: 2, lease }))).toMatchObject({ _tag: "ConversationBusy" })
        }).pipe(Effect.provide(layer())))

      it.effect(`saveAndRelease (${way}) saves and gives the lease up at once; a refused one writes nothing and keeps the lease`, () =>
        Effect.gen(function*() {
          const store = strip(yield* ConversationStore.ConversationStore)
          yield* store.save("a", paused(), { expectedVersion: 0 })
          const { lease } = yield* ConversationStore.acquireAndLoad(store, "a", "worker-1", "10 seconds")
          // A stale version, or another run's lease: refused, nothing written, the lease still held.
          expect(yield* Effect.flip(ConversationStore.saveAndRelease(store, "a", done, { expectedVersion: 7, lease }))).toMatchObject({
            _tag: "ConcurrentModification",
            actualVersion: 1
          })
          const forged = { ...lease, token: "forged" }
          expect(yield* Effect.flip(ConversationStore.saveAndRelease(store, "a", done, { expectedVersion: 1, lease: forged })))
            .toMatchObject({ _tag: "ConversationBusy", expiresAt: 10_000 })
          expect(yield* Effect.flip(store.acquire("a", "worker-2", "1 second"))).toMatchObject({ _tag: "ConversationBusy" })
          expect(Option.map(yield* store.load("a"), (s) => [s.messages, s.version])).toEqual(Option.some([paused(), 1]))
          // Saved and released: the next worker takes it at once, and the old lease saves nothing more.
          const saved = yield* ConversationStore.saveAndRelease(store, "a", done, { expectedVersion: 1, lease })
          expect(saved.version).toBe(2)
          expect(Option.map(yield* store.load("a"), (s) => [s.messages, s.version])).toEqual(Option.some([done, 2]))
          expect(yield* Effect.flip(store.save("a", paused(), { expectedVersion: 2, lease }))).toMatchObject({ _tag: "ConversationBusy" })
          expect((yield* store.acquire("a", "worker-2", "1 second")).owner).toBe("worker-2")
        }).pipe(Effect.provide(layer())))

      it.effect(`Worker.resume (${way}): the approval is saved with the call Running before its handler starts, the end with the release`, () =>
        Effect.gen(function*() {
          const inner = strip(yield* ConversationStore.ConversationStore)
          const calls: Array<string> = []
          const store = counting(inner, calls)
          yield* store.save("a", paused(), { expectedVersion: 0 })
          calls.length = 0
          const seen: Array<unknown> = []
          const chat = yield* Chat.make({ tools: files }).pipe(
            Effect.provide(Layer.merge(
              MockLanguageModel.make([MockLanguageModel.text("Deleted.")]).layer,
              files.toLayer({
                // What the store holds while the handler runs: the approval's call, Running, at the next version.
                delete_files: ({ paths }) =>
                  Effect.map(inner.load("a"), (s) => {
                    seen.push(Option.map(s, (s) => [s.version, statuses(Option.some(s))]))
                    return { deleted: paths.length }
                  }).pipe(Effect.orDie)
              })
            ))
          )
          const result = yield* Worker.resume(chat, "a", approveAll, { owner: "w" }).pipe(
            Effect.provideService(ConversationStore.ConversationStore, store)
          )
          expect(result.outcome._tag).toBe("Complete")
          expect(seen).toEqual([Option.some([2, [{ _tag: "Running" }]])])
          // Three saves after the lease: Running (with the approval), the result, the answer (with the release).
          const stored = Option.getOrThrow(yield* inner.load("a"))
          expect(stored.version).toBe(4)
          expect(statuses(Option.some(stored))).toEqual([{ _tag: "Completed", result: { deleted: 1 } }])
          expect(calls).toEqual(
            way === "the store's own"
              ? ["acquireAndLoad", "save", "save", "saveAndRelease"]
              : ["acquire", "load", "save", "save", "save", "release"]
          )
          expect((yield* inner.acquire("a", "next", "1 second")).owner).toBe("next")
        }).pipe(Effect.provide(layer())))
    }

    it.effect("Worker.resume of a rejection saves it before the turn goes on, and a pause at once releases with its save", () =>
      Effect.gen(function*() {
        const inner = yield* ConversationStore.ConversationStore
        const calls: Array<string> = []
        const store = counting(inner, calls)
        const two: Messages.Messages = [
          Messages.user("Delete the old logs."),
          {
            role: "assistant",
            parts: [
              { _tag: "ToolCall", id: "c1", name: "delete_files", arguments: "{\"paths\":[\"a.log\"]}", status: { _tag: "AwaitingApproval" } },
              { _tag: "ToolCall", id: "c2", name: "delete_files", arguments: "{\"paths\":[\"b.log\"]}", status: { _tag: "AwaitingApproval" } }
            ]
          }
        ]
        yield* store.save("a", two, { expectedVersion: 0 })
        calls.length = 0
        const runs: Array<number> = []
        const chat = yield* chatWith(runs, yield* Deferred.make<void>(), yield* Deferred.make<void>())
        const result = yield* Worker.resume(chat, "a", (s) => Effect.fromResult(Messages.reject(s.messages, "c1")), { owner: "w" }).pipe(
          Effect.provideService(ConversationStore.ConversationStore, store)
        )
        // c2 still waits: the turn pauses at once on the decided state, saved once, with the release.
        expect(result.outcome._tag).toBe("Paused")
        expect(runs).toEqual([])
        expect(calls).toEqual(["acquireAndLoad", "saveAndRelease"])
        const stored = Option.getOrThrow(yield* inner.load("a"))
        expect(stored.version).toBe(2)
        expect(statuses(Option.some(stored)).map((s) => s._tag)).toEqual(["Rejected", "AwaitingApproval"])
        expect((yield* inner.acquire("a", "next", "1 second")).owner).toBe("next")
      }).pipe(Effect.provide(layer())))
  })
}
