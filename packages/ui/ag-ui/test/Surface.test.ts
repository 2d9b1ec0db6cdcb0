/**
 * What a page meets at the AG-UI endpoint (issue 32), with `@ag-ui/client`'s
 * real `HttpAgent` where the client's copy matters: parallel calls of one
 * response land in one assistant message (`parentMessageId`); after an edit
 * the client's copy shows the arguments that run; a busy conversation is a
 * retryable refusal (`Retry-After`); a foreign `Origin` without
 * `Sec-Fetch-Site` is refused; `access` guards every run, resumes too.
 */
import { HttpAgent } from "@ag-ui/client"
import { AgUi, AgUiError, AgUiHttp } from "@chat-ts/ag-ui"
import { Chat, ConversationStore, Messages } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import { assert, describe, it } from "@effect/vitest"
import { ByteSize, Effect, Layer, Option } from "effect"
import * as Support from "./support.js"

const email = (id: string, to: string) => ({ id, name: "send_email", arguments: { to, subject: "hi" } })

/** Runs the agent once, bounded (10 s); the error it failed with, if any. */
const run = (agent: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) =>
  Effect.promise(async () => {
    const timer = setTimeout(() => agent.abortRun(), 10_000)
    try {
      await agent.runAgent(parameters)
      return undefined
    } catch (error) {
      return error as Error & { status?: number; payload?: any }
    } finally {
      clearTimeout(timer)
    }
  })

const toolCalls = (agent: HttpAgent) => agent.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls ?? [] : []))

describe("the client's copy (HttpAgent)", () => {
  it.effect("parallel calls of one response are one assistant message with the response's text", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      const agent = new HttpAgent({ url: env.url, threadId: "p-1", headers: { "x-test-user": "alice" } })
      agent.addMessage({ id: "u1", role: "user", content: Support.asking([email("e1", "a@x.io"), email("e2", "b@x.io"), email("e3", "c@x.io")]) })
      assert.strictEqual(yield* run(agent), undefined)
      const assistants = agent.messages.filter((m) => m.role === "assistant")
      assert.strictEqual(assistants.length, 1)
      assert.strictEqual(assistants[0]!.content, "On it.")
      assert.deepStrictEqual(assistants[0]!.toolCalls?.map((call) => call.id), ["e1", "e2", "e3"])
      assert.deepStrictEqual(agent.pendingInterrupts.map((i) => i.id), ["e1", "e2", "e3"])
    }))

  it.effect("after an edit of one of two calls, the copy shows the edited arguments, the other as asked; the messages stay as they were", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      const agent = new HttpAgent({ url: env.url, threadId: "p-2", headers: { "x-test-user": "alice" } })
      agent.addMessage({ id: "u1", role: "user", content: Support.asking([email("e1", "a@x.io"), email("e2", "b@x.io")]) })
      yield* run(agent)
      const before = agent.messages.map((m) => [m.id, m.role])
      const error = yield* run(agent, {
        resume: [
          { interruptId: "e1", status: "resolved", payload: { approved: true, editedArgs: { to: "edited@x.io", subject: "hi" } } },
          { interruptId: "e2", status: "resolved", payload: { approved: true } }
        ]
      })
      assert.strictEqual(error, undefined)
      const calls = new Map(toolCalls(agent).map((call) => [call.id, JSON.parse(call.function.arguments)]))
      assert.deepStrictEqual(calls.get("e1"), { to: "edited@x.io", subject: "hi" })
      assert.deepStrictEqual(calls.get("e2"), { to: "b@x.io", subject: "hi" })
      // The messages before the run are all still there, in order, then the results and the answer.
      assert.deepStrictEqual(agent.messages.slice(0, before.length).map((m) => [m.id, m.role]), before)
      assert.deepStrictEqual(agent.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId), ["e1", "e2"])
      assert.deepStrictEqual(env.runs.map((r) => r.params), [{ to: "edited@x.io", subject: "hi" }, { to: "b@x.io", subject: "hi" }])
    }))
})

describe("refusals", () => {
  it.effect("a busy conversation is a retryable 409: Retry-After, retryable in the RUN_ERROR; the same request then runs", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      yield* Support.post(env.url, JSON.stringify(Support.say("b-1", Support.asking([email("e1", "a@x.io")]))))
      const lease = yield* env.store.acquire("b-1", "another-tab", "30 seconds")
      const body = JSON.stringify(Support.resume("b-1", [{ interruptId: "e1", status: "resolved", payload: { approved: true } }]))
      const busy = yield* Effect.promise(() =>
        fetch(env.url, { method: "POST", headers: { "content-type": "application/json", "x-test-user": "alice" }, body, signal: AbortSignal.timeout(10_000) })
          .then(async (r) => ({ status: r.status, retryAfter: r.headers.get("retry-after"), body: (await r.json()) as any }))
      )
      assert.deepStrictEqual([busy.status, busy.retryAfter, busy.body.code], [409, String(AgUiError.busyRetryAfter), "conversation_busy"])
      assert.deepStrictEqual(busy.body.metadata["chat-ts"], { retryable: true, retryAfter: AgUiError.busyRetryAfter })
      assert.deepStrictEqual(env.runs, [])
      yield* env.store.release(lease)
      const again = yield* Support.post(env.url, body)
      assert.strictEqual(again.status, 200)
      assert.strictEqual(env.runs.length, 1)
    }))

  it.effect("eight tabs resuming one interrupt at once over HTTP: the call runs once; every other tab is a retryable conversation_busy, already_decided (another person's answer) or the same person's repeat", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      yield* Support.post(env.url, JSON.stringify(Support.say("t-1", Support.asking([email("e1", "a@x.io")]))))
      const body = JSON.stringify(Support.resume("t-1", [{ interruptId: "e1", status: "resolved", payload: { approved: true } }]))
      const answers = yield* Effect.all(Array.from({ length: 8 }, (_, i) => Support.post(env.url, body, { "x-test-user": i % 2 === 0 ? "alice" : "carol" })), {
        concurrency: "unbounded"
      })
      assert.strictEqual(answers.filter((answer) => answer.text.includes("TOOL_CALL_RESULT")).length, 1)
      for (const answer of answers.filter((answer) => !answer.text.includes("TOOL_CALL_RESULT"))) {
        if (answer.status === 200) {
          assert.deepStrictEqual(answer.text.split("\n\n").filter((e) => e !== "").map((e) => JSON.parse(e.slice(6)).type), ["RUN_STARTED", "RUN_FINISHED"])
        } else {
          assert.strictEqual(answer.status, 409)
          assert.include(["conversation_busy", "already_decided"], JSON.parse(answer.text).code)
        }
      }
      assert.strictEqual(env.runs.length, 1)
    }))

  it.effect("a foreign Origin without Sec-Fetch-Site is refused (403), a message or a resume; the page's own origin is not", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      const own = new URL(env.url).origin
      yield* Support.post(env.url, JSON.stringify(Support.say("o-1", Support.asking([email("e1", "a@x.io")]))), { origin: own })
      const before = Option.getOrThrow(yield* env.store.load("o-1"))
      const resume = JSON.stringify(Support.resume("o-1", [{ interruptId: "e1", status: "resolved", payload: { approved: true } }]))
      for (const origin of ["https://evil.example", "null"]) {
        for (const body of [resume, JSON.stringify(Support.say("o-2", "hello"))]) {
          const answer = yield* Support.post(env.url, body, { origin })
          assert.strictEqual(answer.status, 403, origin)
          assert.strictEqual(JSON.parse(answer.text).code, "forbidden")
        }
      }
      assert.strictEqual(Option.getOrThrow(yield* env.store.load("o-1")).version, before.version)
      assert.isTrue(Option.isNone(yield* env.store.load("o-2")))
      assert.deepStrictEqual(env.runs, [])
      assert.strictEqual((yield* Support.post(env.url, resume, { origin: own })).status, 200)
      assert.strictEqual(env.runs.length, 1)
    }))

  it.effect("access is asked for every run: a resume by someone it refuses is forbidden, nothing decided", () =>
    Effect.gen(function*() {
      const env = yield* Support.make({ access: (identity) => Effect.succeed(identity.id !== "mallory") })
      yield* Support.events(env, Support.say("a-1", Support.asking([email("e1", "a@x.io")])))
      const mallory = new Approver.Identity({ id: "mallory" })
      const refused = yield* Effect.flip(Support.events(env, Support.resume("a-1", [{ interruptId: "e1", status: "resolved", payload: { approved: true } }]), mallory))
      assert.deepStrictEqual([refused.code, refused.status], ["forbidden", 403])
      const stored = Option.getOrThrow(yield* env.store.load("a-1"))
      assert.strictEqual(Messages.findTool(stored.messages, "e1")!.status._tag, "AwaitingApproval")
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("mayRun, the deprecated name of access, still refuses", () =>
    Effect.gen(function*() {
      const env = yield* Support.make({ mayRun: (identity) => Effect.succeed(identity.id !== "mallory") })
      const refused = yield* Effect.flip(Support.events(env, Support.say("m-1", "hello"), new Approver.Identity({ id: "mallory" })))
      assert.strictEqual(refused.code, "forbidden")
      assert.isTrue(Option.isNone(yield* env.store.load("m-1")))
    }))
})

describe("toWebHandler's options", () => {
  const handlerWith = (options: AgUiHttp.Options) =>
    Effect.gen(function*() {
      const mock = Support.model()
      const chat = yield* Chat.make({ tools: Support.toolkit }).pipe(Effect.provide(Layer.merge(mock.layer, Support.handlers([]))))
      const web = AgUiHttp.toWebHandler(
        AgUi.layer({ chat }).pipe(
          Layer.provideMerge(Layer.succeed(Approver.Approver, Approver.fromTrustedHeader("x-test-user"))),
          Layer.provide(ConversationStore.layerMemory)
        ),
        options
      )
      yield* Effect.addFinalizer(() => Effect.promise(web.dispose))
      const send = (body: string) =>
        Effect.promise(() =>
          web.handler(new Request("http://127.0.0.1/agent", {
            method: "POST",
            headers: { "content-type": "application/json", "x-test-user": "alice" },
            body
          })).then(async (response) => (await response.text(), response.status))
        )
      return Object.assign((text: string) => send(JSON.stringify(Support.say(`s-${text.length}`, text))), { send, web })
    })

  /** A RunAgentInput of exactly `bytes` bytes (UTF-8), its text padded with `é` (two bytes) and one `x`. */
  const ofBytes = (bytes: number, threadId: string) => {
    const empty = JSON.stringify(Support.say(threadId, ""))
    const room = bytes - new TextEncoder().encode(empty).length
    const text = "é".repeat(Math.floor(room / 2)) + "x".repeat(room % 2)
    const body = JSON.stringify({ ...JSON.parse(empty), messages: [{ ...JSON.parse(empty).messages[0], content: text }] })
    assert.strictEqual(new TextEncoder().encode(body).length, bytes)
    return body
  }

  it.effect("a body of exactly maxBodyBytes bytes is read, one byte more is a 400 (bytes, not characters)", () =>
    Effect.gen(function*() {
      const handler = yield* handlerWith({ maxBodyBytes: 500 })
      assert.strictEqual(yield* handler.send(ofBytes(500, "at-1")), 200)
      assert.strictEqual(yield* handler.send(ofBytes(501, "over-1")), 400)
    }).pipe(Effect.scoped))

  it.effect("both names given: maxBodyBytes wins over the deprecated maxBodySize, access over mayRun", () =>
    Effect.gen(function*() {
      const larger = yield* handlerWith({ maxBodyBytes: 500, maxBodySize: ByteSize.bytes(100) })
      assert.strictEqual(yield* larger.send(ofBytes(500, "both-1")), 200)
      const smaller = yield* handlerWith({ maxBodyBytes: 100, maxBodySize: ByteSize.bytes(500) })
      assert.strictEqual(yield* smaller.send(ofBytes(400, "both-2")), 400)
      const env = yield* Support.make({ access: (identity) => Effect.succeed(identity.id !== "mallory"), mayRun: (identity) => Effect.succeed(identity.id === "mallory") })
      const mallory = new Approver.Identity({ id: "mallory" })
      assert.strictEqual((yield* Effect.flip(Support.events(env, Support.say("both-3", "hello"), mallory))).code, "forbidden")
      assert.isTrue(Option.isNone(yield* env.store.load("both-3")))
      assert.isTrue((yield* Support.events(env, Support.say("both-4", "hello"))).some((event) => event.type === "RUN_FINISHED"))
    }).pipe(Effect.scoped))

  it.effect("a request after dispose is refused at once with an error that says so (no hang), and dispose may be called twice", () =>
    Effect.gen(function*() {
      const handler = yield* handlerWith({})
      assert.strictEqual(yield* handler("hello"), 200)
      yield* Effect.promise(handler.web.dispose)
      const after = yield* Effect.promise(() => handler.web.handler(new Request("http://127.0.0.1/agent", {
          method: "POST",
          headers: { "content-type": "application/json", "x-test-user": "alice" },
          body: JSON.stringify(Support.say("after-1", "hello"))
        })).then((response) => `answered ${response.status}`, (error: Error) => error.message)).pipe(
        Effect.timeout("3 seconds"),
        Effect.orElseSucceed(() => "no answer within 3 seconds")
      )
      assert.match(after, /disposed/)
      yield* Effect.promise(handler.web.dispose)
    }).pipe(Effect.scoped))

  it.effect("maxBodyBytes (default 1 MiB, as /api/chat), and the deprecated maxBodySize", () =>
    Effect.gen(function*() {
      const byDefault = yield* handlerWith({})
      // Over 1 MB, under 1 MiB: read (0.2's default refused it).
      assert.strictEqual(yield* byDefault("x".repeat(1_010_000)), 200)
      assert.strictEqual(yield* byDefault("x".repeat(1024 * 1024)), 400)
      assert.strictEqual(yield* (yield* handlerWith({ maxBodyBytes: 200 }))("x".repeat(300)), 400)
      assert.strictEqual(yield* (yield* handlerWith({ maxBodySize: ByteSize.bytes(200) }))("x".repeat(300)), 400)
      assert.strictEqual(yield* (yield* handlerWith({ maxBodyBytes: 200 }))("hi"), 200)
    }).pipe(Effect.scoped))
})
