/**
 * The README's two ways of serving the endpoint, run: the `effect/http` route on a real Node
 * server (127.0.0.1, over a socket), and the `(Request) => Promise<Response>` function; both
 * stream a turn to a pause and resume it with an approval. The README shows
 * test/readme-example.ts word for word.
 */
import { UiRequest } from "@chat-ts/ai-sdk-ui"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Readme from "./readme-example.js"
import * as Fixture from "./support/fixture.js"

const here = fileURLToPath(new URL(".", import.meta.url))

const email = Fixture.asking([{ id: "c1", name: "send_email", arguments: { to: "a@b.c", subject: "hi" } }])

const body = (chatId: string, last: unknown) => JSON.stringify({ id: chatId, trigger: "submit-message", messages: [last] })
const userMessage = { id: "m1", role: "user", parts: [{ type: "text", text: email }] }
const approved = (chatId: string) => ({
  id: "a1",
  role: "assistant",
  parts: [{
    type: "tool-send_email",
    toolCallId: "c1",
    state: "approval-responded",
    input: { to: "a@b.c", subject: "hi" },
    approval: { id: UiRequest.approvalId(chatId, "c1"), approved: true }
  }]
})

/** The chunks of an SSE body. */
const chunks = (text: string) =>
  text.split("\n\n").filter((event) => event.startsWith("data: ") && event !== "data: [DONE]").map((event) => JSON.parse(event.slice(6)))

const converse = (send: (body: string) => Promise<Response>, chatId: string, runs: Fixture.Runs) =>
  Effect.promise(async () => {
    const first = await send(body(chatId, userMessage))
    expect(first.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
    const paused = await first.text()
    expect(paused.endsWith("data: [DONE]\n\n")).toBe(true)
    expect(chunks(paused).filter((c) => c.type === "tool-approval-request")).toHaveLength(1)
    const second = chunks(await (await send(body(chatId, approved(chatId)))).text())
    expect(second).toContainEqual({ type: "tool-output-available", toolCallId: "c1", output: { sent: true } })
    expect(runs).toHaveLength(1)
  }).pipe(Effect.timeout("20 seconds"), Effect.orDie)

const post = (url: string) => (text: string) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-test-user": "alice" }, body: text, signal: AbortSignal.timeout(10_000) })

describe("the README's endpoint", () => {
  it.live("on an effect/http server, over a socket", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      const context = yield* Layer.build(Readme.ChatServer(env.chat, Fixture.approver, 0))
      const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
      const url = address._tag !== "UnixPathAddress" ? `http://127.0.0.1:${address.port}/api/chat` : ""
      yield* converse(post(url), "socket-1", env.runs)
    }).pipe(Effect.scoped))

  it.live("as a (Request) => Promise<Response> function", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      const route = Readme.routeHandler(env.chat, Fixture.approver)
      yield* Effect.addFinalizer(() => Effect.promise(route.dispose))
      const send = (text: string) =>
        route.handler(new Request("http://127.0.0.1/api/chat", { method: "POST", headers: { "content-type": "application/json", "x-test-user": "alice" }, body: text }))
      yield* converse(send, "web-1", env.runs)
    }).pipe(Effect.scoped))

  it.live("a HEAD of a load answers as the GET without a body, over a socket and through the function", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      const context = yield* Layer.build(Readme.ChatServer(env.chat, Fixture.approver, 0))
      const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
      const url = address._tag !== "UnixPathAddress" ? `http://127.0.0.1:${address.port}/api/chat` : ""
      const route = Readme.routeHandler(env.chat, Fixture.approver)
      yield* Effect.addFinalizer(() => Effect.promise(route.dispose))
      const sends: ReadonlyArray<(query: string, method: string) => Promise<Response>> = [
        (query, method) => fetch(`${url}${query}`, { method, headers: { "x-test-user": "alice" }, signal: AbortSignal.timeout(10_000) }),
        (query, method) => route.handler(new Request(`http://127.0.0.1/api/chat${query}`, { method, headers: { "x-test-user": "alice" } }))
      ]
      for (const send of sends) {
        const answers = yield* Effect.promise(async () =>
          Promise.all(["?id=head-1", "", "?id=a&id=b"].map(async (query) => {
            const [get, head] = [await send(query, "GET"), await send(query, "HEAD")]
            return { get: { status: get.status, type: get.headers.get("content-type"), sniff: get.headers.get("x-content-type-options"), body: await get.text() }, head: { status: head.status, type: head.headers.get("content-type"), sniff: head.headers.get("x-content-type-options"), cache: head.headers.get("cache-control"), body: await head.text() } }
          }))
        )
        expect(answers.map((a) => [a.get.status, a.head.status])).toEqual([[200, 200], [400, 400], [400, 400]])
        for (const { get, head } of answers) {
          expect(get.body).not.toBe("")
          expect(head).toEqual({ status: get.status, type: get.type, sniff: "nosniff", cache: "no-store", body: "" })
        }
      }
    }).pipe(Effect.scoped))

  it.live("eight tabs at once over a socket: a new message wins while no other run holds the conversation, the others are 409 Busy (Retry-After), nothing stored twice; eight approvals of one call run it once", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      const context = yield* Layer.build(Readme.ChatServer(env.chat, Fixture.approver, 0))
      const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
      const url = address._tag !== "UnixPathAddress" ? `http://127.0.0.1:${address.port}/api/chat` : ""
      const send = (text: string) =>
        post(url)(text).then(async (response) => ({ status: response.status, retryAfter: response.headers.get("retry-after"), text: await response.text() }))
      const messages = yield* Effect.promise(() =>
        Promise.all(Array.from({ length: 8 }, (_, i) => send(body("tabs-1", { id: `m${i}`, role: "user", parts: [{ type: "text", text: `hello ${i}` }] }))))
      )
      // A tab wins while no other run holds the conversation; a message sent while its turn runs is
      // that turn's input (it interrupts the answer, and a burst is answered together): each message
      // accepted is stored once, and the conversation ends answered.
      const won = messages.filter((answer) => answer.status === 200)
      expect(won.length).toBeGreaterThanOrEqual(1)
      // The server's own store, as a reloading page reads it.
      const stored = (yield* Effect.promise(() =>
        fetch(`${url}?id=tabs-1`, { headers: { "x-test-user": "alice" }, signal: AbortSignal.timeout(10_000) }).then((response) => response.json())
      )).messages as ReadonlyArray<{ readonly id: string; readonly role: string }>
      const users = stored.filter((message) => message.role === "user")
      expect(users).toHaveLength(won.length)
      expect(new Set(users.map((message) => message.id)).size).toBe(won.length)
      expect(stored.at(-1)?.role).toBe("assistant")
      expect(won.filter((answer) => answer.text.includes(`"type":"error"`))).toEqual([])
      for (const lost of messages.filter((answer) => answer.status !== 200)) {
        expect([lost.status, lost.retryAfter, JSON.parse(lost.text)]).toMatchObject([409, "1", { _tag: "Conflict", reason: "Busy", retryable: true, retryAfter: 1 }])
      }
      const first = yield* Effect.promise(() => send(body("tabs-2", userMessage)))
      expect(first.status).toBe(200)
      const approvals = yield* Effect.promise(() => Promise.all(Array.from({ length: 8 }, () => send(body("tabs-2", approved("tabs-2"))))))
      expect(approvals.filter((answer) => answer.text.includes("tool-output-available"))).toHaveLength(1)
      // Every other tab found the lease held (a retryable 409) or, after the winner, the same decision (a no-op).
      for (const other of approvals.filter((answer) => !answer.text.includes("tool-output-available"))) {
        expect(other.status === 409 ? JSON.parse(other.text).reason : chunks(other.text)[0].messageMetadata.duplicate).toBe(other.status === 409 ? "Busy" : true)
      }
      expect(env.runs).toHaveLength(1)
    }).pipe(Effect.scoped))

  it("shows test/readme-example.ts word for word", () => {
    const readme = readFileSync(join(here, "..", "README.md"), "utf8")
    expect(readme).toContain("```ts\n" + readFileSync(join(here, "readme-example.ts"), "utf8") + "```")
  })
})
