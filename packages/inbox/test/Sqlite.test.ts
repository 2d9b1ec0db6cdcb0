/**
 * The inbox over a real SQLite database (the `@chat-ts/sql` store on its
 * `node:sqlite` client, same contract as PostgreSQL's): decisions, a refused
 * edit storing nothing, and two deciders racing on one call; a quorum of two
 * whose votes race, and a four-eyes refusal storing nothing.
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { SqlConversationStore, SqliteClient } from "@chat-ts/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Fixture from "./support/fixture.js"

const sqliteStore = Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "inbox-sqlite-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const database = SqliteClient.layer({ filename: join(dir, "inbox.db") })
  const context = yield* Layer.build(
    SqlConversationStore.layer().pipe(Layer.provide(SqlConversationStore.layerMigrate()), Layer.provideMerge(database))
  )
  return yield* Effect.provide(ConversationStore.ConversationStore, context)
})

const decide = (env: Fixture.Env, conversation: string, call: string, body: unknown, user = "alice") =>
  Effect.flatMap(Fixture.csrfOf(env.url, user), (csrf) =>
    Fixture.request(`${env.url}/api/conversations/${conversation}/calls/${call}/decision`, {
      method: "POST",
      user,
      body,
      headers: { "x-csrf-token": csrf }
    }))

const statusOf = (env: Fixture.Env, id: string, call: string) =>
  Effect.map(env.store.load(id), (stored) => Messages.findTool(Option.getOrThrow(stored).messages, call)!.status)

describe("the inbox over SQLite", () => {
  it.effect("lists, refuses a bad edit, decides, resumes, and lets one of two racing deciders win", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make({ store: yield* sqliteStore })
      yield* env.seed("c1", [{ id: "t1", name: "transfer", arguments: { amount: 50, to: "acct-9" } }])
      yield* env.seed("c2", [{ id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "hi" } }])
      const list = yield* Fixture.request(`${env.url}/api/pending`, { user: "alice" })
      assert.deepStrictEqual(list.json.items.map((item: any) => item.id), ["t1", "e1"])

      const before = (yield* env.store.load("c1")).pipe(Option.getOrThrow).version
      const bad = yield* decide(env, "c1", "t1", { _tag: "Approve", arguments: { amount: 5000, to: "acct-9" } })
      assert.strictEqual(bad.status, 422)
      assert.strictEqual((yield* env.store.load("c1")).pipe(Option.getOrThrow).version, before)
      const good = yield* decide(env, "c1", "t1", { _tag: "Approve", arguments: { amount: 500, to: "acct-9" } })
      assert.strictEqual(good.json.turn, "complete")
      const transfer = yield* statusOf(env, "c1", "t1")
      assert.strictEqual(transfer._tag, "Completed")
      assert.strictEqual((transfer as { decision?: Messages.Decision }).decision?.by, "alice")

      const [a, b] = yield* Effect.all([
        decide(env, "c2", "e1", { _tag: "Approve" }, "alice"),
        decide(env, "c2", "e1", { _tag: "Approve" }, "carol")
      ], { concurrency: 2 })
      assert.deepStrictEqual([a.status, b.status].sort(), [200, 409])
      assert.deepStrictEqual(env.runs.map((run) => run.tool), ["transfer", "send_email"])
      const pending = yield* Fixture.request(`${env.url}/api/pending`, { user: "alice" })
      assert.deepStrictEqual(pending.json.items, [])
    }))

  it.effect("a quorum of two over SQLite: the requester is refused; two yeses at once, however they interleave, run the call once with both votes (a lost race is a 409, decided again)", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make({ store: yield* sqliteStore })
      yield* env.seed("w", [{ id: "w1", name: "wire_funds", arguments: { amount: 900, to: "acct-3" } }], undefined, "alice")
      const version = (yield* env.store.load("w")).pipe(Option.getOrThrow).version
      assert.strictEqual((yield* decide(env, "w", "w1", { _tag: "Approve" }, "alice")).status, 403)
      assert.strictEqual((yield* env.store.load("w")).pipe(Option.getOrThrow).version, version)
      // Bob and carol at once: optimistic saves let one vote in; the other is a 409 (decide again).
      const [a, b] = yield* Effect.all([
        decide(env, "w", "w1", { _tag: "Approve" }, "bob"),
        decide(env, "w", "w1", { _tag: "Approve" }, "carol")
      ], { concurrency: 2 })
      const statuses = [a.status, b.status]
      const status = yield* statusOf(env, "w", "w1")
      if (statuses.includes(409)) {
        assert.deepStrictEqual(env.runs, [])
        assert.deepStrictEqual(statuses.sort(), [200, 409])
        assert.strictEqual(status._tag, "AwaitingApproval")
        const voted = (status as { votes?: ReadonlyArray<Messages.Vote> }).votes?.map((vote) => vote.by) ?? []
        assert.strictEqual(voted.length, 1)
        const again = yield* decide(env, "w", "w1", { _tag: "Approve" }, voted[0] === "bob" ? "carol" : "bob")
        assert.strictEqual(again.json.turn, "complete")
      } else {
        // The two requests did not overlap: the second one completed the quorum.
        assert.deepStrictEqual(statuses, [200, 200])
      }
      assert.deepStrictEqual(env.runs, [{ tool: "wire_funds", params: { amount: 900, to: "acct-3" } }])
      const done = yield* statusOf(env, "w", "w1")
      assert.strictEqual(done._tag, "Completed")
      assert.deepStrictEqual((done as { decision?: Messages.Decision }).decision?.votes?.map((vote) => vote.by).sort(), ["bob", "carol"])
    }))
})
