/**
 * A client that connects to a paused thread (a page reloaded mid-pause: a new
 * `HttpAgent` with no messages, `runAgent()` with no resume), with
 * `@ag-ui/client`'s real `HttpAgent` over HTTP on 127.0.0.1: the run reports
 * the thread as stored, a `MESSAGES_SNAPSHOT` of its messages and a
 * `RUN_FINISHED` whose interrupt outcome re-announces every pending
 * interrupt, so the client answers them from there (the approved tool runs
 * once); calls a steering message cancelled come back as tool messages that
 * say `Cancelled` by `user-message` with the reason; a connect stores and runs
 * nothing, and is under `mayRun` and the identity check.
 */
import { type BaseEvent, HttpAgent, type Message } from "@ag-ui/client"
import { AgUi, AgUiHttp, type AgUiProtocol } from "@chat-ts/ag-ui"
import { Chat, ConversationStore, Messages, Steering } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { EventSchema } from "@ag-ui/core/schemas"
import fc from "fast-check"
import { RunEvents } from "../src/internal/events.js"
import { snapshotOf } from "../src/internal/snapshot.js"
import * as Conversations from "./conversations.js"
import * as Reconnect from "./reconnect-example.js"
import * as Support from "./support.js"

const here = fileURLToPath(new URL(".", import.meta.url))

/** The endpoint on 127.0.0.1, mallory may run no thread; `x-test-user` names the person. */
const serveWith = (steering?: AgUi.SteeringRule) => Effect.gen(function*() {
  const runs: Support.Runs = []
  const store = yield* ConversationStore.makeMemory
  const chat = yield* Chat.make({ tools: Support.toolkit }).pipe(Effect.provide(Layer.merge(Support.model().layer, Support.handlers(runs))))
  const base = Layer.mergeAll(
    Layer.succeed(ConversationStore.ConversationStore, store),
    Layer.succeed(Approver.Approver, { ...Support.approver, identify: Approver.fromTrustedHeader("x-test-user").identify })
  )
  const agent = AgUi.layer({ chat, mayRun: (identity) => Effect.succeed(identity.id !== "mallory"), ...(steering === undefined ? {} : { steering }) }).pipe(
    Layer.provide(base)
  )
  const server = HttpRouter.serve(AgUiHttp.layer({ path: "/agent" }), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provide(Layer.merge(agent, base)),
    Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }))
  )
  const address = (yield* Effect.provide(HttpServer.HttpServer, yield* Layer.build(server))).address
  const url = address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}/agent`
  return { url, store, runs }
})

const serve = serveWith()

/** Runs the agent once, bounded; the events it parsed (after its verifier), or the error it failed with. */
const runOnce = (agent: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) =>
  Effect.promise(async () => {
    const seen: Array<BaseEvent> = []
    const timer = setTimeout(() => agent.abortRun(), 10_000)
    try {
      await agent.runAgent(parameters, { onEvent: ({ event }) => void seen.push(event) })
      return { events: seen, error: undefined as undefined | (Error & { status?: number; payload?: { code?: string } }) }
    } catch (error) {
      return { events: seen, error: error as Error & { status?: number; payload?: { code?: string } } }
    } finally {
      clearTimeout(timer)
    }
  })

/** A client as a reloaded page starts it: the thread id, no messages. */
const fresh = (url: string, threadId: string, user = "alice") => new HttpAgent({ url, threadId, headers: { "x-test-user": user } })

const email = { id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "hi" } }
const second = { id: "t1", name: "send_email", arguments: { to: "bo@example.com", subject: "invoice" } }

const toolMessage = (messages: ReadonlyArray<Message>, callId: string) =>
  messages.find((m) => m.role === "tool" && m.toolCallId === callId) as (Message & { readonly content: string; readonly metadata?: AgUiProtocol.ResultMetadata }) | undefined

const versionOf = (store: ConversationStore.Service, id: string) => Effect.map(store.load(id), Option.match({ onNone: () => 0, onSome: (s) => s.version }))

describe("a client connecting to a thread", () => {
  it.effect("mid-pause: a snapshot and both interrupts again; answered from the new client, the approved tool runs once", () =>
    Effect.gen(function*() {
      const env = yield* serve
      const first = fresh(env.url, "thread-r")
      first.addMessage({ id: "u1", role: "user", content: Support.asking([email, second]) })
      assert.strictEqual((yield* runOnce(first)).error, undefined)
      assert.deepStrictEqual(first.pendingInterrupts.map((i) => i.id), ["e1", "t1"])
      const version = yield* versionOf(env.store, "thread-r")

      // The page reloads: a new client, no messages of its own.
      const reloaded = fresh(env.url, "thread-r")
      const connected = yield* runOnce(reloaded)
      assert.strictEqual(connected.error, undefined)
      assert.deepStrictEqual(connected.events.map((e) => e.type), ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"])
      const finished = connected.events[2] as BaseEvent & { readonly outcome: { readonly type: string; readonly interrupts: ReadonlyArray<{ readonly id: string }> } }
      assert.strictEqual(finished.outcome.type, "interrupt")
      // The same interrupts as the run that paused announced (ids, reasons, details, schema).
      assert.deepStrictEqual(reloaded.pendingInterrupts, first.pendingInterrupts)
      assert.deepInclude(reloaded.pendingInterrupts[1]!, { reason: "tool_call", toolCallId: "t1" })
      // The client's messages: the user's (its own id), the reasoning, the answer with both calls.
      assert.deepStrictEqual(reloaded.messages.map((m) => m.role), ["user", "reasoning", "assistant"])
      assert.deepInclude(reloaded.messages[0], { id: "u1", role: "user", content: Support.asking([email, second]) })
      const assistant = reloaded.messages[2] as Message & { readonly content?: string; readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string; readonly arguments: string } }> }
      assert.strictEqual(assistant.content, "On it.")
      assert.deepStrictEqual(assistant.toolCalls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]), [
        ["e1", "send_email", email.arguments],
        ["t1", "send_email", second.arguments]
      ])
      // A connect stores and runs nothing.
      assert.strictEqual(yield* versionOf(env.store, "thread-r"), version)
      assert.deepStrictEqual(env.runs, [])

      const answered = yield* runOnce(reloaded, {
        resume: [
          { interruptId: "e1", status: "resolved", payload: { approved: true } },
          { interruptId: "t1", status: "resolved", payload: { approved: false, reason: "not after a reload" } }
        ]
      })
      assert.strictEqual(answered.error, undefined)
      assert.deepStrictEqual(reloaded.pendingInterrupts, [])
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: email.arguments }])

      // The first tab, still open, answers the same: already decided, nothing runs again.
      const late = yield* runOnce(first, { resume: [{ interruptId: "e1", status: "resolved", payload: { approved: true } }, { interruptId: "t1", status: "resolved", payload: { approved: true } }] })
      assert.strictEqual(late.error?.status, 409)
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: email.arguments }])

      // Connecting once more: the thread as it ended, no interrupt, the answer as the result.
      const again = fresh(env.url, "thread-r")
      const done = yield* runOnce(again)
      const end = done.events.at(-1) as BaseEvent & { readonly outcome: { readonly type: string }; readonly result?: unknown }
      assert.deepStrictEqual([end.outcome.type, end.result], ["success", "All done."])
      assert.deepStrictEqual(again.pendingInterrupts, [])
      assert.deepStrictEqual(JSON.parse(toolMessage(again.messages, "e1")!.content), { sent: true })
      assert.deepInclude(toolMessage(again.messages, "e1")!.metadata!["chat-ts"], { status: "Completed", decision: { by: "alice", at: 0 } })
      assert.deepInclude(toolMessage(again.messages, "t1")!.metadata!["chat-ts"], { status: "Rejected", rejectedBy: "user" })
      assert.include(toolMessage(again.messages, "t1")!.content, "not after a reload")
      assert.strictEqual(env.runs.length, 1)
    }))

  it.effect("after steering: the cancelled calls come back as tool messages saying so, with the reason; no interrupt", () =>
    Effect.gen(function*() {
      const env = yield* serve
      const first = fresh(env.url, "thread-s")
      first.addMessage({ id: "u1", role: "user", content: Support.asking([email, second]) })
      yield* runOnce(first)
      // Another tab sends a message instead of deciding (the client refuses to while it holds interrupts).
      const other = fresh(env.url, "thread-s")
      other.addMessage({ id: "u2", role: "user", content: "never mind" })
      assert.strictEqual((yield* runOnce(other)).error, undefined)

      const reloaded = fresh(env.url, "thread-s")
      const connected = yield* runOnce(reloaded)
      assert.strictEqual(connected.error, undefined)
      assert.deepStrictEqual(reloaded.pendingInterrupts, [])
      assert.deepStrictEqual(reloaded.messages.map((m) => m.role), ["user", "reasoning", "assistant", "tool", "tool", "user", "assistant"])
      for (const id of ["e1", "t1"]) {
        const result = toolMessage(reloaded.messages, id)!
        assert.deepInclude(result.metadata!["chat-ts"], { status: "Cancelled", cancelledBy: "user-message", cancellation: { by: "alice", at: 0 } })
        assert.include(result.content, Steering.defaultReason)
      }
      assert.deepInclude(reloaded.messages[5], { id: "u2", content: "never mind" })
      assert.deepStrictEqual(env.runs, [])
      const stored = Option.getOrThrow(yield* env.store.load("thread-s")).messages
      assert.strictEqual(Messages.findTool(stored, "e1")!.status._tag, "Cancelled")
    }))

  it.effect("a repeated message re-announces the interrupts only to whom mayRun lets run the thread", () =>
    Effect.gen(function*() {
      const env = yield* serve
      const first = fresh(env.url, "thread-p")
      first.addMessage({ id: "u1", role: "user", content: Support.asking([email]) })
      yield* runOnce(first)
      // The same message id again: for alice a repeat (the thread as stored); for mallory a refusal.
      const again = fresh(env.url, "thread-p")
      again.addMessage({ id: "u1", role: "user", content: Support.asking([email]) })
      assert.deepStrictEqual((yield* runOnce(again)).error, undefined)
      assert.deepStrictEqual(again.pendingInterrupts.map((i) => i.id), ["e1"])
      const mallory = fresh(env.url, "thread-p", "mallory")
      mallory.addMessage({ id: "u1", role: "user", content: Support.asking([email]) })
      const refused = yield* runOnce(mallory)
      assert.deepStrictEqual([refused.error?.status, refused.error?.payload?.code], [403, "forbidden"])
      assert.deepStrictEqual(mallory.pendingInterrupts, [])
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("a message held on the paused response (steering: queue) comes after it in the snapshot; the interrupt still waits", () =>
    Effect.gen(function*() {
      const env = yield* serveWith("queue")
      const first = fresh(env.url, "thread-q")
      first.addMessage({ id: "u1", role: "user", content: Support.asking([email]) })
      yield* runOnce(first)
      const other = fresh(env.url, "thread-q")
      other.addMessage({ id: "u2", role: "user", content: "and then this" })
      assert.strictEqual((yield* runOnce(other)).error, undefined)
      const reloaded = fresh(env.url, "thread-q")
      assert.strictEqual((yield* runOnce(reloaded)).error, undefined)
      assert.deepStrictEqual(reloaded.pendingInterrupts.map((i) => i.id), ["e1"])
      assert.deepStrictEqual(reloaded.messages.map((m) => [m.role, m.id]), [["user", "u1"], ["reasoning", "thread-q:1:reasoning"], ["assistant", "thread-q:1"], ["user", "u2"]])
      assert.deepInclude(reloaded.messages[3], { content: "and then this" })
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("a new thread: an empty snapshot, success, nothing stored; mayRun and the identity are checked", () =>
    Effect.gen(function*() {
      const env = yield* serve
      const empty = yield* runOnce(fresh(env.url, "thread-new"))
      assert.deepStrictEqual(empty.events.map((e) => e.type), ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"])
      assert.deepStrictEqual((empty.events[1] as BaseEvent & { readonly messages: unknown }).messages, [])
      assert.isTrue(Option.isNone(yield* env.store.load("thread-new")))

      const first = fresh(env.url, "thread-m")
      first.addMessage({ id: "u1", role: "user", content: Support.asking([email]) })
      yield* runOnce(first)
      const mallory = yield* runOnce(fresh(env.url, "thread-m", "mallory"))
      assert.deepStrictEqual([mallory.error?.status, mallory.error?.payload?.code], [403, "forbidden"])
      assert.deepStrictEqual(mallory.events, [])
      const nobody = yield* runOnce(fresh(env.url, "thread-m", ""))
      assert.strictEqual(nobody.error?.status, 401)
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("mid-run (another run holds the thread, its answer not stored yet): a retryable conversation_busy, not a success with no answer; once it ended, the thread", () =>
    Effect.gen(function*() {
      const env = yield* serve
      const first = fresh(env.url, "thread-run")
      first.addMessage({ id: "u1", role: "user", content: "hello" })
      yield* runOnce(first)
      // The thread as a run that took it over sees it: its user message stored, the answer to come.
      const stored = Option.getOrThrow(yield* env.store.load("thread-run"))
      yield* env.store.save("thread-run", stored.messages.slice(0, 1), { expectedVersion: stored.version })
      const lease = yield* env.store.acquire("thread-run", "another-worker", "30 seconds")
      const during = yield* runOnce(fresh(env.url, "thread-run"))
      assert.deepStrictEqual([during.error?.status, during.error?.payload?.code], [409, "conversation_busy"])
      assert.deepStrictEqual(during.events, [])
      yield* env.store.release(lease)
      // Nothing runs it now (a turn that failed): the connect gives the thread as stored.
      const after = yield* runOnce(fresh(env.url, "thread-run"))
      assert.isUndefined(after.error)
      assert.deepStrictEqual(after.events.map((e) => e.type), ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"])
      const again = yield* env.store.acquire("thread-run", "a-later-run", "30 seconds")
      yield* env.store.release(again)
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("the README's reconnect snippet, run: a new client sees the interrupts of the paused thread", () =>
    Effect.gen(function*() {
      const env = yield* serve
      const first = fresh(env.url, "thread-x")
      first.addMessage({ id: "u1", role: "user", content: Support.asking([email]) })
      yield* runOnce(first)
      const agent = yield* Effect.promise(() => Reconnect.reconnect(env.url, "thread-x", { "x-test-user": "alice" }))
      assert.deepStrictEqual(agent.pendingInterrupts.map((i) => i.id), ["e1"])
      assert.deepStrictEqual(agent.messages.map((m) => m.role), ["user", "reasoning", "assistant"])
      assert.deepStrictEqual(env.runs, [])
    }))

  it("any stored thread: the snapshot is an event @ag-ui/core accepts, every call once in an assistant's toolCalls, a tool message per resolved call", () => {
    fc.assert(
      fc.property(Conversations.conversation, (messages) => {
        const event = new RunEvents("p-1", "run-1").snapshot(snapshotOf("p-1", messages))
        const parsed = EventSchema.parse(event) as { readonly messages: ReadonlyArray<Message> }
        const calls = Messages.toolCalls(messages)
        const announced = parsed.messages.flatMap((m) => m.role === "assistant" ? m.toolCalls ?? [] : [])
        assert.deepStrictEqual(announced.map((c) => c.id), calls.map((c) => c.id))
        const results = parsed.messages.flatMap((m) => m.role === "tool" ? [m.toolCallId] : [])
        assert.deepStrictEqual(results, calls.filter(Messages.isResolved).map((c) => c.id))
        assert.strictEqual(new Set(parsed.messages.map((m) => m.id)).size, parsed.messages.length)
      }),
      { numRuns: 300 }
    )
  })

  it("the README and docs/ui.md show test/reconnect-example.ts#reconnect word for word", () => {
    const lines = readFileSync(join(here, "reconnect-example.ts"), "utf8").split("\n")
    const region = lines.slice(lines.indexOf("// #region reconnect") + 1, lines.indexOf("// #endregion reconnect")).join("\n")
    const readme = readFileSync(join(here, "..", "README.md"), "utf8")
    const docs = readFileSync(join(here, "..", "..", "..", "..", "docs", "ui.md"), "utf8")
    assert.include(readme, "```ts\n" + region + "\n```")
    assert.include(docs, `<!-- snippet: packages/ui/ag-ui/test/reconnect-example.ts#reconnect -->\n\`\`\`ts\n${region}\n\`\`\``)
  })
})
