/**
 * The inbox over a store with an outbox: a decision taken in the inbox is a notification, written
 * with the state it saved, like any other shell's.
 */
import { ConversationStore } from "@chat-ts/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fixture from "./support/fixture.js"

describe("the inbox with an outbox", () => {
  it.effect("a pause, a person's decision in the inbox, the resume and the completion are each a notification", () =>
    Effect.gen(function*() {
      const { outbox, store } = yield* ConversationStore.makeMemoryWithOutbox
      const env = yield* Fixture.make({ store })
      yield* env.seed("c1", [{ id: "t1", name: "transfer", arguments: { amount: 50, to: "acct-9" } }])
      assert.deepStrictEqual((yield* outbox.list()).map((entry) => entry.notification.kind), ["Paused"])
      const csrf = yield* Fixture.csrfOf(env.url, "alice")
      const decided = yield* Fixture.request(`${env.url}/api/conversations/c1/calls/t1/decision`, {
        method: "POST",
        user: "alice",
        body: { _tag: "Approve" },
        headers: { "x-csrf-token": csrf }
      })
      assert.strictEqual(decided.json.turn, "complete")
      const entries = yield* outbox.list()
      assert.deepStrictEqual(entries.map((entry) => entry.notification.kind), ["Paused", "Decided", "Resumed", "Completed"])
      assert.deepStrictEqual(entries[1]!.notification.calls, [{ id: "t1", name: "transfer", status: "Approved", by: "alice" }])
    }).pipe(Effect.scoped))
})
