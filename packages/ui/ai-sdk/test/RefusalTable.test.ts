/**
 * docs/ui.md's refusal table of `/api/chat`, walked row by row against the
 * endpoint: every row has requests that meet it, and each is answered with
 * the status and `_tag` (a `Conflict`'s reason one the row names) the row
 * gives. A row added to the table without requests here fails the test.
 */
import { UiChat, UiHttp, UiRequest } from "@chat-ts/ai-sdk-ui"
import { ChatError, ConversationStore } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Answer, approvals, post, respond, resume, say } from "./support/client.js"
import * as Fixture from "./support/fixture.js"

const here = fileURLToPath(new URL(".", import.meta.url))

/** The rows of the table under "| Refusal | Status |": the refusal's words, its status and `_tag`. */
const rows = (() => {
  const docs = readFileSync(join(here, "..", "..", "..", "..", "docs", "ui.md"), "utf8").split("\n")
  const start = docs.indexOf("| Refusal | Status |")
  expect(start).toBeGreaterThan(0)
  const table = docs.slice(start + 2)
  return table.slice(0, table.findIndex((line) => !line.startsWith("|"))).map((line) => {
    const [, refusal, status] = line.split(/\s*\|\s*/)
    const [, code, tag] = /^(\d{3}) `(\w+)`$/.exec(status!)!
    return { refusal: refusal!, status: Number(code), tag: tag!, named: [...refusal!.matchAll(/`(\w+)`/g)].map((m) => m[1]!) }
  })
})()

/** What a refused request gave: its status and body. */
interface Refused {
  readonly status: number
  readonly error?: Answer["error"] | undefined
  readonly headers: Headers
}

type Probe = Effect.Effect<ReadonlyArray<Refused>, never, UiChat.UiChat | Approver.Approver>

const email = Fixture.asking([{ id: "c1", name: "send_email", arguments: { to: "a@b.c", subject: "hi" } }])
const transfer = Fixture.asking([{ id: "t1", name: "transfer", arguments: { amount: 10, to: "bob" } }])

/** A paused chat `id` and the client's message with its call `callId` approved. */
const paused = (id: string, text = email, callId = "c1") =>
  Effect.map(post(say(id, text)), (answer) => ({ answer, approved: respond(answer.message!, approvals(answer).get(callId)!, true) }))

/** A page's load, `GET /api/chat<query>`. */
const load = (query: string, headers: Record<string, string> = { "x-test-user": "alice" }) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<UiChat.UiChat | Approver.Approver>()
    const request = HttpServerRequest.fromWeb(new Request(`http://127.0.0.1/api/chat${query}`, { headers }))
    const response = HttpServerResponse.toWeb(yield* UiHttp.history(request), { context })
    return { status: response.status, headers: response.headers, error: (yield* Effect.promise(() => response.json())) as Answer["error"] } satisfies Refused
  })

/** Requests meeting each row, by the row's first words. */
const probes: Record<string, Probe> = {
  "not a `useChat` body": Effect.gen(function*() {
    const { answer } = yield* paused("r-400")
    return [
      yield* post("{ not json"),
      yield* post(`{"id":"a","id":"b","messages":[]}`),
      yield* post(`{"id":"a","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"x"}],"__proto__":{}}]}`),
      yield* post(JSON.stringify(say("r-400b", "x".repeat(1024 * 1024)))),
      yield* post(resume("r-400", answer.message!, { chatTs: { edits: { [UiRequest.approvalId("r-400", "c9")]: {} } } })),
      yield* post({ id: "r-400", trigger: "regenerate-message", messages: [answer.message!] }),
      yield* load(""),
      yield* load("?id="),
      yield* load(`?id=${"x".repeat(201)}`),
      yield* load("?id=a&id=b")
    ]
  }),
  "no identity": Effect.gen(function*() {
    return [yield* post(say("r-401", "hello"), { user: "" }), yield* load("?id=r-401", {})]
  }),
  "the `Approver` refuses": Effect.gen(function*() {
    const { approved } = yield* paused("r-403", transfer, "t1")
    return [
      yield* post(resume("r-403", approved), { user: "bob" }),
      yield* post(say("private-1", "hello"), { user: "bob" }),
      yield* load("?id=private-1", { "x-test-user": "bob" }),
      yield* post(say("r-403-site", "hello"), { headers: { "sec-fetch-site": "cross-site" } }),
      yield* post(say("r-403-origin", "hello"), { headers: { origin: "https://evil.example" } }),
      yield* load("?id=r-403", { "x-test-user": "alice", "sec-fetch-site": "same-site" }),
      // An id that is not canonical (a soft hyphen in it) decides nothing.
      yield* post(resume("r-403", approved), { user: "car\u00adol" })
    ]
  }),
  "no such chat": Effect.gen(function*() {
    const { answer, approved } = yield* paused("r-404")
    return [
      yield* post({ ...resume("r-404", approved), id: "no-such-chat" }),
      yield* post(resume("r-404", respond({ ...answer.message!, parts: answer.message!.parts.map((p) => "approval" in p ? { ...p, approval: { ...p.approval!, id: "forged" } } as typeof p : p) }, "forged", true)))
    ]
  }),
  "the call was decided otherwise": Effect.gen(function*() {
    const { answer, approved } = yield* paused("r-409")
    yield* post(resume("r-409", approved))
    const done = yield* post(say("r-409-done", "hello"))
    yield* post(say("r-409-tools", email, [], "u-tools"))
    return [
      yield* post(resume("r-409", respond(answer.message!, approvals(answer).get("c1")!, false, "no"))),
      yield* post(resume("r-409-done", done.message!)),
      yield* post({ id: "r-409-tools", trigger: "regenerate-message", messages: [{ id: "u-tools", role: "user", parts: [{ type: "text", text: email }] }] })
    ]
  }),
  "another run holds the conversation now": Effect.void.pipe(Effect.as([])),
  "a `content-type` other than": Effect.gen(function*() {
    return [yield* post(say("r-415", "hello"), { headers: { "content-type": "text/plain" } })]
  }),
  "edited arguments the tool's Schema refuses": Effect.gen(function*() {
    const { answer } = yield* paused("r-422", transfer, "t1")
    const id = approvals(answer).get("t1")!
    const message = respond(answer.message!, id, true)
    return [
      yield* post(resume("r-422", message, { chatTs: { edits: { [id]: { amount: 5000, to: "bob" } } } })),
      yield* post(resume("r-422", message, { chatTs: { edits: { [id]: { amount: 5, to: "bob", note: "x" } } } }))
    ]
  }),
  "the store failed": Effect.void.pipe(Effect.as([]))
}

describe("docs/ui.md's refusal table of /api/chat, row by row", () => {
  it("every row has requests here", () => {
    expect(rows.length).toBeGreaterThanOrEqual(9)
    for (const row of rows) expect(Object.keys(probes).some((key) => row.refusal.startsWith(key)), row.refusal).toBe(true)
  })

  for (const row of rows) {
    it.effect(`${row.status} ${row.tag}: ${row.refusal.slice(0, 60)}`, () =>
      Effect.gen(function*() {
        const env = yield* Fixture.make
        const key = Object.keys(probes).find((k) => row.refusal.startsWith(k))!
        const secret = "postgres://admin:hunter2@db.internal"
        const refused = new ChatError.StoreError({ detail: `the disk is gone (${secret})` })
        // A store whose load or save fails, or throws (a defect): each a typed refusal, the secret not in it.
        const failing: ReadonlyArray<ConversationStore.Service> = [
          { ...env.store, load: () => Effect.fail(refused) },
          { ...env.store, load: () => Effect.die(new Error(secret)) },
          { ...env.store, load: () => Effect.sync(() => { throw new Error(secret) }) },
          { ...env.store, save: () => Effect.fail(refused) },
          { ...env.store, save: () => Effect.die(new Error(secret)) }
        ]
        const busy = key === "another run holds the conversation now"
        const layerOf = (store: ConversationStore.Service) =>
          UiChat.layer({ chat: env.chat, access: (identity, id) => Effect.succeed(!id.startsWith("private-") || identity.id === "alice") }).pipe(
            Layer.provideMerge(Layer.mergeAll(Layer.succeed(ConversationStore.ConversationStore, store), Layer.succeed(Approver.Approver, Fixture.approver)))
          )
        const layer = layerOf(env.store)
        const probe: Probe = key === "the store failed"
          ? Effect.map(
            Effect.forEach(failing, (store, i) =>
              Effect.provide(
                // A failing save: the load of a conversation not stored yet still answers (it stores nothing).
                Effect.all(i < 3 ? [post(say(`r-500-${i}`, "hello")), load(`?id=r-500-${i}`)] : [post(say(`r-500-${i}`, "hello"))]),
                layerOf(store)
              )),
            (answers) => answers.flat()
          )
          : busy
          ? Effect.gen(function*() {
            const { approved } = yield* paused("r-busy")
            const lease = yield* Effect.orDie(env.store.acquire("r-busy", "another-worker", "30 seconds"))
            const answers = [yield* post(resume("r-busy", approved)), yield* post(say("r-busy", "hello"))]
            yield* Effect.orDie(env.store.release(lease))
            return answers
          })
          : probes[key]!
        const answers = yield* Effect.provide(probe, layer)
        expect(answers.length).toBeGreaterThan(0)
        for (const [i, answer] of answers.entries()) {
          expect([answer.status, answer.error?._tag], `request ${i}`).toEqual([row.status, row.tag])
          expect(answer.error?.message, `request ${i}`).not.toContain("hunter2")
          // Never cached, never sniffed as anything but JSON.
          expect([answer.headers.get("cache-control"), answer.headers.get("x-content-type-options")], `request ${i}`).toEqual(["no-store", "nosniff"])
          if (row.tag === "Conflict") expect(row.named, `request ${i}`).toContain(answer.error?.reason)
        }
        // Only the setup's own approval (the call decided before the other answer) ran.
        expect(env.runs.map((run) => run.tool)).toEqual(key === "the call was decided otherwise" ? ["send_email"] : [])
      }))
  }
})
