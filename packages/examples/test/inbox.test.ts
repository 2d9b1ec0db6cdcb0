/**
 * The inbox example: the demo agent pauses into the store, a person signs in
 * with the printed link, decides through the API, and the worker runs the
 * scheduled cleanup once it is due.
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import * as Example from "../src/inbox.js"
import * as Sandbox from "../src/demo/sandbox.js"

const call = (url: string, path: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(new URL(path, url), { ...init, redirect: "manual", signal: AbortSignal.timeout(10_000) })
    return { status: response.status, headers: response.headers, json: (await response.json().catch(() => undefined)) as any }
  })

const statusOf = (store: ConversationStore.Service, id: string, callId: string) =>
  Effect.map(store.load(id), (stored) => Messages.findTool(Option.getOrThrow(stored).messages, callId)!.status._tag)

describe("the inbox example", () => {
  it.effect("signs in with the link, decides through the API, and the worker runs the due cleanup", () =>
    Effect.gen(function*() {
      const { store, url } = yield* Example.program({ port: 0, cleanupDelay: "1 hour", workerEvery: "10 minutes" })
      const base = new URL(url).origin
      assert.strictEqual((yield* call(base, "/api/pending")).status, 401)
      assert.strictEqual((yield* call(base, "/login?token=guess")).status, 401)
      const login = yield* call(base, url.slice(base.length))
      assert.strictEqual(login.status, 303)
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!
      assert.include(login.headers.get("set-cookie")!, "HttpOnly")
      const headers = { cookie }

      const pending = yield* call(base, "/api/pending", { headers })
      assert.deepStrictEqual(pending.json.items.map((item: any) => [item.conversationId, item.tool, item.reason]), [
        ["demo-1", "delete_files", "approval"],
        ["demo-2", "delete_files", "approval"],
        ["demo-2", "schedule_cleanup", "scheduled"]
      ])
      const session = yield* call(base, "/api/session", { headers })
      const decide = (item: any, body: unknown) =>
        call(base, `/api/conversations/${item.conversationId}/calls/${item.id}/decision`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", "x-csrf-token": session.json.csrfToken, "if-match": String(item.version) },
          body: JSON.stringify(body)
        })
      const [logs, temp, cleanup] = pending.json.items
      const first = yield* decide(logs, { _tag: "Approve" })
      assert.strictEqual(first.json.turn, "complete")
      assert.strictEqual(yield* statusOf(store, "demo-1", logs.id), "Completed")
      const second = yield* decide(temp, { _tag: "Reject", reason: "keep it" })
      // The scheduled cleanup is not due yet: the turn pauses on it again.
      assert.strictEqual(second.json.turn, "paused")
      assert.strictEqual(yield* statusOf(store, "demo-2", cleanup.id), "Scheduled")
      // An hour later the worker's loop finds the cleanup due and resumes the turn under the lease.
      yield* TestClock.adjust("61 minutes")
      let status = ""
      for (let tries = 0; tries < 100 && status !== "Completed"; tries++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
        status = yield* statusOf(store, "demo-2", cleanup.id)
      }
      assert.strictEqual(status, "Completed")
    }).pipe(Effect.scoped, Effect.provide(Sandbox.layer(undefined)), Effect.provide(NodeServices.layer)), { timeout: 60_000 })
})
