/**
 * docs/ui.md's table of refused AG-UI requests, walked row by row against
 * the endpoint (`AgUiHttp.toWebHandler`, real `Request`s and `Response`s):
 * every row has requests that meet it, each answered with the row's status
 * and a `RUN_ERROR` body with the row's code. A row added to the table
 * without requests here fails the test.
 */
import { AgUi, AgUiHttp } from "@chat-ts/ag-ui"
import { Chat, ChatError, ConversationStore } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Support from "./support.js"

const here = fileURLToPath(new URL(".", import.meta.url))

/** The rows of the table under "| request | code | status |". */
const rows = (() => {
  const docs = readFileSync(join(here, "..", "..", "..", "..", "docs", "ui.md"), "utf8").split("\n")
  const start = docs.indexOf("| request | code | status |")
  expect(start).toBeGreaterThan(0)
  const table = docs.slice(start + 2)
  return table.slice(0, table.findIndex((line) => !line.startsWith("|"))).map((line) => {
    const [, request, code, status] = line.split(/\s*\|\s*/)
    return { request: request!, code: /^`(\w+)`$/.exec(code!)![1]!, status: Number(status) }
  })
})()

type Send = (body: unknown, headers?: Record<string, string>) => Effect.Effect<{ readonly status: number; readonly code?: string }>
interface Endpoint {
  readonly send: Send
  readonly runs: Support.Runs
  readonly store: ConversationStore.Service
}

const email = (id: string) => ({ id, name: "send_email", arguments: { to: "a@b.c", subject: "hi" } })

/** The endpoint over a fresh store (`access`: only alice may use `private-…` threads). */
const endpoint = (options: { readonly steering?: AgUi.SteeringRule; readonly broken?: boolean; readonly dies?: boolean } = {}) =>
  Effect.gen(function*() {
    const runs: Support.Runs = []
    const store = yield* ConversationStore.makeMemory
    const used: ConversationStore.Service = options.broken === true
      ? {
        ...store,
        load: () => Effect.fail(new ChatError.StoreError({ detail: "the disk is gone" })),
        // The one-step lease and load the workers use when a store has it fails the same way.
        acquireAndLoad: () => Effect.fail(new ChatError.StoreError({ detail: "the disk is gone" }))
      }
      : options.dies === true
      ? { ...store, acquire: () => Effect.die(new Error("a bug in the store")), acquireAndLoad: () => Effect.die(new Error("a bug in the store")) }
      : store
    const chat = yield* Chat.make({ tools: Support.toolkit }).pipe(Effect.provide(Layer.merge(Support.model().layer, Support.handlers(runs))))
    const web = AgUiHttp.toWebHandler(
      AgUi.layer({ chat, access: (identity, id) => Effect.succeed(!id.startsWith("private-") || identity.id === "alice"), ...(options.steering === undefined ? {} : { steering: options.steering }) }).pipe(
        Layer.provideMerge(Layer.mergeAll(
          Layer.succeed(ConversationStore.ConversationStore, used),
          Layer.succeed(Approver.Approver, { ...Support.approver, identify: Approver.fromTrustedHeader("x-test-user").identify })
        ))
      ),
      { maxBodyBytes: 4096 }
    )
    yield* Effect.addFinalizer(() => Effect.promise(web.dispose))
    const send: Send = (body, headers = {}) =>
      Effect.promise(async () => {
        const response = await web.handler(new Request("http://127.0.0.1/agent", {
          method: "POST",
          headers: { "content-type": "application/json", "x-test-user": "alice", ...headers },
          body: typeof body === "string" ? body : JSON.stringify(body)
        }))
        const text = await response.text()
        return { status: response.status, ...(response.headers.get("content-type")?.startsWith("application/json") ? { code: JSON.parse(text).code } : {}) }
      })
    return { send, runs, store } satisfies Endpoint
  })

/** A thread paused on `calls` (their interrupts' ids are the call ids). */
const paused = (e: Endpoint, threadId: string, calls: ReadonlyArray<Support.Asked> = [email("e1")]) =>
  Effect.map(e.send(Support.say(threadId, Support.asking(calls))), (answer) => assert.strictEqual(answer.status, 200))

const yes = (interruptId: string, payload: unknown = { approved: true }) => ({ interruptId, status: "resolved" as const, payload })

/** Requests meeting each row, by the row's first words. */
const probes: Record<string, (e: Endpoint) => Effect.Effect<ReadonlyArray<{ readonly status: number; readonly code?: string }>>> = {
  "a body that is not JSON": (e) =>
    Effect.gen(function*() {
      yield* paused(e, "b-1", [email("e1"), email("e2")])
      return [
        yield* e.send("{ not json"),
        yield* e.send(`{"threadId":"a","threadId":"b","runId":"r","messages":[]}`),
        yield* e.send(`{"threadId":"a","runId":"r","messages":[],"__proto__":{}}`),
        yield* e.send(Support.say("b-2", "x".repeat(5000))),
        yield* e.send({ threadId: "b-1" }),
        yield* e.send(Support.resume("b-1", [{ interruptId: "e1", status: "resolved", payload: { approved: "yes" } }, yes("e2")])),
        yield* e.send(Support.resume("b-1", [yes("e1"), yes("e1", { approved: false })])),
        yield* e.send({ threadId: "b-1", runId: "r-b", messages: [{ id: "a1", role: "assistant", content: "hi" }] })
      ]
    }),
  "no identity": (e) => Effect.all([e.send(Support.say("u-1", "hello"), { "x-test-user": "" })]),
  "a request from another site": (e) =>
    Effect.gen(function*() {
      yield* paused(e, "f-1", [{ id: "t1", name: "transfer", arguments: { amount: 5, to: "x" } }])
      return [
        yield* e.send(Support.say("f-2", "hello"), { "sec-fetch-site": "cross-site" }),
        yield* e.send(Support.say("f-3", "hello"), { origin: "https://evil.example" }),
        yield* e.send(Support.resume("f-1", [yes("t1")]), { "x-test-user": "bob" }),
        yield* e.send(Support.resume("f-1", [yes("t1")]), { "x-test-user": "car\u00adol" }),
        yield* e.send(Support.say("private-1", "hello"), { "x-test-user": "bob" }),
        yield* e.send({ threadId: "private-1", runId: "r-f", messages: [] }, { "x-test-user": "bob" })
      ]
    }),
  "an interrupt id that is no call": (e) =>
    Effect.gen(function*() {
      yield* paused(e, "n-1")
      return [yield* e.send(Support.resume("n-1", [yes("forged")]))]
    }),
  "a different answer for a call": (e) =>
    Effect.gen(function*() {
      yield* paused(e, "d-1")
      assert.strictEqual((yield* e.send(Support.resume("d-1", [yes("e1")]))).status, 200)
      return [yield* e.send(Support.resume("d-1", [yes("e1", { approved: false, reason: "changed my mind" })]))]
    }),
  // Under `steering: "refuse"` (the endpoint of this row is made so, below).
  "a new message while calls wait": (e) =>
    Effect.gen(function*() {
      yield* paused(e, "q-1")
      return [yield* e.send(Support.say("q-1", "never mind"))]
    }),
  "a resume leaving an open interrupt": (e) =>
    Effect.gen(function*() {
      yield* paused(e, "o-1", [email("e1"), email("e2")])
      return [yield* e.send(Support.resume("o-1", [yes("e1")]))]
    }),
  "another run holds the conversation": (e) =>
    Effect.gen(function*() {
      yield* paused(e, "h-1")
      const lease = yield* Effect.orDie(e.store.acquire("h-1", "another-worker", "30 seconds"))
      const answers = [yield* e.send(Support.resume("h-1", [yes("e1")])), yield* e.send(Support.say("h-1", "hello"))]
      yield* Effect.orDie(e.store.release(lease))
      return answers
    }),
  "a `content-type` other than JSON": (e) => Effect.all([e.send(Support.say("c-1", "hello"), { "content-type": "text/plain" })]),
  "edited arguments that do not fit": (e) =>
    Effect.gen(function*() {
      yield* paused(e, "i-1")
      return [
        yield* e.send(Support.resume("i-1", [yes("e1", { approved: true, editedArgs: { to: 5, subject: "hi" } })])),
        yield* e.send(Support.resume("i-1", [yes("e1", { approved: true, editedArgs: { to: "a@b.c", subject: "hi", note: "x" } })]))
      ]
    }),
  "the store failed": (e) => Effect.all([e.send(Support.say("s-1", "hello"))]),
  // The endpoint of this row has a store whose acquire dies (below).
  "a run that died before it started": (e) => Effect.all([e.send(Support.say("t-1", "hello"))])
}

const keyOf = (request: string) => Object.keys(probes).find((key) => request.startsWith(key))

describe("docs/ui.md's table of refused AG-UI requests, row by row", () => {
  it("every row has requests here", () => {
    expect(rows.length).toBeGreaterThanOrEqual(12)
    for (const row of rows) expect(keyOf(row.request), row.request).toBeDefined()
  })

  for (const row of rows) {
    // Live: the handler's runtime reads the real clock, and a lease taken here must be held in its time.
    it.live(`${row.status} ${row.code}: ${row.request.slice(0, 60)}`, () =>
      Effect.gen(function*() {
        const key = keyOf(row.request)!
        const e = yield* endpoint(key === "the store failed" ? { broken: true } : key === "a run that died before it started" ? { dies: true } : key === "a new message while calls wait" ? { steering: "refuse" } : {})
        const answers = yield* probes[key]!(e)
        expect(answers.length).toBeGreaterThan(0)
        for (const [i, answer] of answers.entries()) expect([answer.status, answer.code], `request ${i}`).toEqual([row.status, row.code])
        // Only a setup's own approval ran (the call decided before the other answer).
        expect(e.runs.map((run) => run.tool)).toEqual(key === "a different answer for a call" ? ["send_email"] : [])
      }).pipe(Effect.scoped))
  }
})
