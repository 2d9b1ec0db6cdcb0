/**
 * The endpoint's edges that a page meets (issue 32): a `Busy` refusal is
 * typed and retryable (`Retry-After`, `retryable` in the body) and the same
 * request sent again succeeds; `regenerate()` re-runs an answer that called
 * no tool and is refused, readably, otherwise; a wrong content type is 415;
 * and a request with a foreign `Origin` and no `Sec-Fetch-Site` is refused
 * (the cookie-riding case), nothing stored or run.
 */
import { UiChat, UiError } from "@chat-ts/ai-sdk-ui"
import { type ConversationStore, Messages } from "@chat-ts/core"
import type { Approver } from "@chat-ts/inbox"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { approvals, post, respond, resume, say } from "./support/client.js"
import * as Fixture from "./support/fixture.js"

type Env = Effect.Success<typeof Fixture.make>

const withEndpoint = <A, E>(
  f: (env: Env) => Effect.Effect<A, E, UiChat.UiChat | Approver.Approver | ConversationStore.ConversationStore>
) =>
  Effect.gen(function*() {
    const env = yield* Fixture.make
    return yield* Effect.provide(f(env), UiChat.layer({ chat: env.chat }).pipe(Layer.provideMerge(env.services)))
  })

const stored = (env: Env, id: string) => Effect.map(env.store.load(id), Option.getOrUndefined)

const regenerate = (chatId: string, messageId: string, text: string) => ({
  id: chatId,
  trigger: "regenerate-message",
  messages: [{ id: messageId, role: "user", parts: [{ type: "text", text }] }]
})

describe("a busy conversation", () => {
  it.effect("is a typed, retryable 409: Retry-After, retryable in the body; the same request sent again then runs", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("b-1", Fixture.asking([{ id: "c1", name: "send_email", arguments: { to: "a@b.c", subject: "hi" } }])))
        const approval = approvals(first).get("c1")!
        const body = resume("b-1", respond(first.message!, approval, true))
        const lease = yield* env.store.acquire("b-1", "another-tab", "30 seconds")
        const before = yield* stored(env, "b-1")
        const busy = yield* post(body)
        expect(busy.status).toBe(409)
        expect(busy.headers.get("retry-after")).toBe(String(UiError.busyRetryAfter))
        expect(busy.error).toMatchObject({ _tag: "Conflict", reason: "Busy", retryable: true, retryAfter: UiError.busyRetryAfter })
        expect(env.runs).toEqual([])
        yield* env.store.release(lease)
        expect((yield* stored(env, "b-1"))!.messages).toEqual(before!.messages)
        // What the page does on a retryable refusal: send the same request again.
        const again = yield* post(body)
        expect(again.status).toBe(200)
        expect(again.chunks).toContainEqual({ type: "tool-output-available", toolCallId: "c1", output: { sent: true } })
        expect(env.runs).toHaveLength(1)
      })))

  it.effect("other refusals are not retryable and carry no Retry-After", () =>
    withEndpoint(() =>
      Effect.gen(function*() {
        const answer = yield* post(resume("b-2", { id: "a", role: "assistant", parts: [] }))
        expect(answer.status).toBe(404)
        expect(answer.headers.get("retry-after")).toBeNull()
        expect(answer.error).not.toHaveProperty("retryable")
      })))
})

describe("regenerate()", () => {
  it.effect("of an answer that called no tool: the answer is replaced, the model asked again", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        expect((yield* post(say("r-1", "hello", [], "m-1"))).status).toBe(200)
        const calls = env.model.requests.length
        const again = yield* post(regenerate("r-1", "m-1", "hello"))
        expect(again.status).toBe(200)
        expect(again.message!.parts).toContainEqual(expect.objectContaining({ type: "text", text: "you said: hello" }))
        expect(env.model.requests.length).toBe(calls + 1)
        const messages = (yield* stored(env, "r-1"))!.messages
        expect(messages.map((message) => message.role)).toEqual(["user", "assistant"])
        expect(Messages.textOf(messages[1]!)).toBe("you said: hello")
      })))

  it.effect("four tabs regenerating at once: the model is asked once per answer they get, the others are a retryable Busy; one answer stored", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        expect((yield* post(say("r-4", "hello", [], "m-4"))).status).toBe(200)
        const calls = env.model.requests.length
        const answers = yield* Effect.all(Array.from({ length: 4 }, () => post(regenerate("r-4", "m-4", "hello"))), { concurrency: "unbounded" })
        const ran = answers.filter((answer) => answer.status === 200)
        expect(ran.length).toBeGreaterThanOrEqual(1)
        for (const lost of answers.filter((answer) => answer.status !== 200)) {
          expect([lost.status, lost.error?.reason, lost.headers.get("retry-after")]).toEqual([409, "Busy", "1"])
        }
        expect(env.model.requests.length).toBe(calls + ran.length)
        expect((yield* stored(env, "r-4"))!.messages.map((message) => message.role)).toEqual(["user", "assistant"])
      })))

  it.effect("of an answer that called tools, or of an earlier message: 409 NotRegenerable with a readable reason, nothing run", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        yield* post(say("r-2", "hello", [], "m-1"))
        yield* post(say("r-2", Fixture.asking([{ id: "l1", name: "lookup", arguments: { word: "x" } }]), [], "m-2"))
        const before = yield* stored(env, "r-2")
        const calls = env.model.requests.length
        const tools = yield* post(regenerate("r-2", "m-2", "whatever"))
        expect([tools.status, tools.error?.reason]).toEqual([409, "NotRegenerable"])
        expect(tools.error?.message).toMatch(/called tools \(lookup\).*send a new message/)
        const earlier = yield* post(regenerate("r-2", "m-1", "hello"))
        expect([earlier.status, earlier.error?.reason]).toEqual([409, "NotRegenerable"])
        expect(yield* stored(env, "r-2")).toEqual(before)
        expect(env.model.requests.length).toBe(calls)
        expect(env.runs).toHaveLength(1)
      })))

  it.effect("of a paused answer: 409 NotRegenerable, the calls still wait", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        yield* post(say("r-3", Fixture.asking([{ id: "c1", name: "send_email", arguments: { to: "a@b.c", subject: "hi" } }]), [], "m-1"))
        const answer = yield* post(regenerate("r-3", "m-1", "x"))
        expect([answer.status, answer.error?.reason]).toEqual([409, "NotRegenerable"])
        expect(Messages.pendingTools((yield* stored(env, "r-3"))!.messages).map((call) => call.id)).toEqual(["c1"])
      })))

  it.effect("of a message the store does not hold (its first send failed): it is sent as new", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const answer = yield* post(regenerate("r-4", "m-1", "hello"))
        expect(answer.status).toBe(200)
        expect((yield* stored(env, "r-4"))!.messages.map((message) => message.role)).toEqual(["user", "assistant"])
      })))
})

describe("the request's origin", () => {
  it.effect("a wrong content type is 415 UnsupportedMediaType, nothing stored", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const answer = yield* post(say("o-1", "hello"), { headers: { "content-type": "text/plain" } })
        expect([answer.status, answer.error?._tag]).toEqual([415, "UnsupportedMediaType"])
        expect(yield* stored(env, "o-1")).toBeUndefined()
      })))

  it.effect("a foreign Origin without Sec-Fetch-Site is refused (403) before anything is stored or run", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("o-2", Fixture.asking([{ id: "c1", name: "send_email", arguments: { to: "a@b.c", subject: "hi" } }])))
        const body = resume("o-2", respond(first.message!, approvals(first).get("c1")!, true))
        const before = yield* stored(env, "o-2")
        for (const origin of ["https://evil.example", "http://127.0.0.1.evil.example", "null"]) {
          const answer = yield* post(body, { headers: { origin } })
          expect([answer.status, answer.error?._tag], origin).toEqual([403, "Forbidden"])
        }
        const message = yield* post(say("o-3", "hello"), { headers: { origin: "https://evil.example" } })
        expect(message.status).toBe(403)
        expect(yield* stored(env, "o-3")).toBeUndefined()
        expect(yield* stored(env, "o-2")).toEqual(before)
        expect(env.runs).toEqual([])
        // The page's own origin (the request's host) is let through.
        const own = yield* post(body, { headers: { origin: "http://127.0.0.1" } })
        expect(own.status).toBe(200)
        expect(env.runs).toHaveLength(1)
      })))

  it.effect("allowedOrigins lets another origin's page through; no Origin and no Sec-Fetch-Site (not a browser) too", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      const layer = UiChat.layer({ chat: env.chat }).pipe(Layer.provideMerge(env.services))
      const { UiHttp } = yield* Effect.promise(() => import("@chat-ts/ai-sdk-ui"))
      const web = UiHttp.toWebHandler(layer, { allowedOrigins: ["https://app.example"] })
      yield* Effect.addFinalizer(() => Effect.promise(web.dispose))
      const send = (chatId: string, headers: Record<string, string>) =>
        Effect.promise(() =>
          web.handler(new Request("http://127.0.0.1/api/chat", {
            method: "POST",
            headers: { "content-type": "application/json", "x-test-user": "alice", ...headers },
            body: JSON.stringify(say(chatId, "hello"))
          })).then((response) => response.status)
        )
      expect(yield* send("a-1", { origin: "https://app.example" })).toBe(200)
      expect(yield* send("a-2", { origin: "https://app.example", "sec-fetch-site": "cross-site" })).toBe(200)
      expect(yield* send("a-3", { origin: "https://other.example" })).toBe(403)
      expect(yield* send("a-4", {})).toBe(200)
    }).pipe(Effect.scoped))
})

describe("toWebHandler", () => {
  const make = (options: Parameters<typeof import("@chat-ts/ai-sdk-ui").UiHttp.toWebHandler>[1] = {}, chat: Omit<UiChat.Options<never>, "chat"> = {}) =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      const { UiHttp } = yield* Effect.promise(() => import("@chat-ts/ai-sdk-ui"))
      const web = UiHttp.toWebHandler(UiChat.layer({ chat: env.chat, ...chat }).pipe(Layer.provideMerge(env.services)), options)
      yield* Effect.addFinalizer(() => Effect.promise(web.dispose))
      const send = (body: string, init: RequestInit = {}, query = "") =>
        Effect.promise(() =>
          web.handler(new Request(`http://127.0.0.1/api/chat${query}`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-test-user": "alice" },
            body,
            ...init
          })).then(async (response) => ({ status: response.status, text: await response.text() }))
        )
      return { env, web, send }
    })

  /** A useChat request of exactly `bytes` bytes (UTF-8), its text padded with `é` (two bytes) and one `y`. */
  const ofBytes = (bytes: number, chatId: string) => {
    const empty = JSON.stringify(say(chatId, "", [], "m1"))
    const room = bytes - new TextEncoder().encode(empty).length - 1
    const body = empty.replace("\"text\":\"\"", `"text":"y${"é".repeat(Math.floor(room / 2))}${"y".repeat(room % 2)}"`)
    expect(new TextEncoder().encode(body).length).toBe(bytes)
    return body
  }

  it.effect("a body of exactly maxBodyBytes bytes is read, one byte more is a 400 (bytes, not characters), nothing stored", () =>
    Effect.gen(function*() {
      const { env, send } = yield* make({ maxBodyBytes: 500 })
      expect((yield* send(ofBytes(500, "at-1"))).status).toBe(200)
      expect(yield* stored(env, "at-1")).toBeDefined()
      const over = yield* send(ofBytes(501, "over-1"))
      expect([over.status, JSON.parse(over.text)._tag]).toEqual([400, "BadRequest"])
      expect(yield* stored(env, "over-1")).toBeUndefined()
    }).pipe(Effect.scoped))

  it.effect("a request after dispose is refused at once with an error that says so (no hang), and dispose may be called twice", () =>
    Effect.gen(function*() {
      const { web, send } = yield* make()
      expect((yield* send(JSON.stringify(say("d-1", "hello")))).status).toBe(200)
      yield* Effect.promise(web.dispose)
      const after = yield* Effect.promise(() =>
        web.handler(new Request("http://127.0.0.1/api/chat", {
          method: "POST",
          headers: { "content-type": "application/json", "x-test-user": "alice" },
          body: JSON.stringify(say("d-2", "hello"))
        })).then((response) => `answered ${response.status}`, (error: Error) => error.message)
      ).pipe(Effect.timeout("3 seconds"), Effect.orElseSucceed(() => "no answer within 3 seconds"))
      expect(after).toMatch(/disposed/)
      yield* Effect.promise(web.dispose)
    }).pipe(Effect.scoped))

  it.effect("both names given: steering wins over the deprecated whilePaused", () =>
    Effect.gen(function*() {
      const email = Fixture.asking([{ id: "c1", name: "send_email", arguments: { to: "a@b.c", subject: "hi" } }])
      const refusing = yield* make({}, { steering: "refuse", whilePaused: "steer" })
      expect((yield* refusing.send(JSON.stringify(say("w-1", email)))).status).toBe(200)
      const refused = yield* refusing.send(JSON.stringify(say("w-1", "never mind")))
      expect([refused.status, JSON.parse(refused.text).reason]).toEqual([409, "Paused"])
      const steering = yield* make({}, { steering: "cancel", whilePaused: "refuse" })
      expect((yield* steering.send(JSON.stringify(say("w-2", email)))).status).toBe(200)
      expect((yield* steering.send(JSON.stringify(say("w-2", "never mind")))).status).toBe(200)
      expect(Messages.findTool((yield* stored(steering.env, "w-2"))!.messages, "c1")!.status._tag).toBe("Cancelled")
    }).pipe(Effect.scoped))

  it.effect("a load naming the conversation twice (?id=a&id=b) is a 400, whichever comes first", () =>
    Effect.gen(function*() {
      const { send } = yield* make({}, { access: (identity, id) => Effect.succeed(id !== "alice-only" || identity.id === "alice") })
      expect((yield* send(JSON.stringify(say("alice-only", "hello")))).status).toBe(200)
      const load = (query: string) => send("", { method: "GET", body: null, headers: { "x-test-user": "bob" } }, query)
      expect((yield* load("?id=alice-only")).status).toBe(403)
      for (const query of ["?id=other&id=alice-only", "?id=alice-only&id=other", "?id=other&id="]) {
        const answer = yield* load(query)
        expect([answer.status, JSON.parse(answer.text)._tag], query).toEqual([400, "BadRequest"])
      }
      expect((yield* load("?id=other")).status).toBe(200)
    }).pipe(Effect.scoped))
})
