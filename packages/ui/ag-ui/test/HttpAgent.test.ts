/**
 * `@ag-ui/client`'s `HttpAgent` (its own fetch, SSE parser and event
 * verifier) against the endpoint on 127.0.0.1: a run that pauses, a resume
 * with an invalid edit (refused, nothing changes), the valid edit, the end;
 * and the HTTP refusals before any stream; decision policies over HTTP
 * (four-eyes, a quorum of two people).
 */
import { HttpAgent, type BaseEvent } from "@ag-ui/client"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Messages } from "@chat-ts/core"
import * as Support from "./support.js"

const email = { id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "hi" } }

/** Runs the agent once, bounded; the events it parsed (after its verifier), or the error it failed with. */
const runOnce = (agent: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) =>
  Effect.promise(async () => {
    const seen: Array<BaseEvent> = []
    const timer = setTimeout(() => agent.abortRun(), 10_000)
    try {
      await agent.runAgent(parameters, { onEvent: ({ event }) => void seen.push(event) })
      return { events: seen, error: undefined as undefined | (Error & { status?: number; payload?: any }) }
    } catch (error) {
      return { events: seen, error: error as Error & { status?: number; payload?: any } }
    } finally {
      clearTimeout(timer)
    }
  })

const kinds = (events: ReadonlyArray<BaseEvent>) => events.map((event) => event.type).filter((t, i, all) => t !== all[i - 1])

describe("HttpAgent against the endpoint", () => {
  it.effect("run, interrupt, resume with an invalid then a valid edit, completion", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      const agent = new HttpAgent({ url: env.url, threadId: "thread-1", headers: { "x-test-user": "alice" } })
      agent.addMessage({ id: "u1", role: "user", content: Support.asking([email]) })

      const first = yield* runOnce(agent)
      assert.strictEqual(first.error, undefined)
      assert.deepStrictEqual(kinds(first.events), Support.pausingRun)
      assert.deepStrictEqual(agent.pendingInterrupts.map((i) => [i.id, i.reason, i.toolCallId]), [["e1", "tool_call", "e1"]])
      const call = agent.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls ?? [] : [])).find((c) => c.id === "e1")!
      assert.deepStrictEqual(JSON.parse(call.function.arguments), email.arguments)

      const invalid = yield* runOnce(agent, {
        resume: [{ interruptId: "e1", status: "resolved", payload: { approved: true, editedArgs: { to: "nobody", subject: "hi" } } }]
      })
      assert.strictEqual(invalid.error?.status, 422)
      assert.strictEqual(invalid.error?.payload.type, "RUN_ERROR")
      assert.strictEqual(invalid.error?.payload.code, "invalid_edit")
      assert.deepStrictEqual(invalid.events.map((e) => e.type), [])
      assert.deepStrictEqual(agent.pendingInterrupts.map((i) => i.id), ["e1"])
      const stored = Option.getOrThrow(yield* env.store.load("thread-1"))
      assert.strictEqual(Messages.findTool(stored.messages, "e1")!.status._tag, "AwaitingApproval")

      const valid = yield* runOnce(agent, {
        resume: [{ interruptId: "e1", status: "resolved", payload: { approved: true, editedArgs: { to: "bo@example.com", subject: "hi" } } }]
      })
      assert.strictEqual(valid.error, undefined)
      // After an edit the run gives the client's copy back with the arguments that run (a messages snapshot).
      assert.deepStrictEqual(kinds(valid.events), ["RUN_STARTED", "MESSAGES_SNAPSHOT", ...Support.resumedRun.slice(1)])
      const edited = agent.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls ?? [] : [])).find((c) => c.id === "e1")!
      assert.deepStrictEqual(JSON.parse(edited.function.arguments), { to: "bo@example.com", subject: "hi" })
      assert.deepStrictEqual(agent.messages.filter((m) => m.role === "user").map((m) => m.id), ["u1"])
      const finished = valid.events[valid.events.length - 1] as any
      assert.deepStrictEqual([finished.outcome, finished.result], [{ type: "success" }, "All done."])
      assert.deepStrictEqual(agent.pendingInterrupts, [])
      const result = agent.messages.find((m) => m.role === "tool" && m.toolCallId === "e1")!
      assert.deepStrictEqual(JSON.parse(result.content as string), { sent: true })
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: { to: "bo@example.com", subject: "hi" } }])
    }))

  it.effect("refusals before the stream: a status and a RUN_ERROR body, nothing stored", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      const input = JSON.stringify(Support.say("t1", "hello"))
      const cases: ReadonlyArray<readonly [string, number, string, ReturnType<typeof Support.post>]> = [
        ["no identity", 401, "unauthorized", Support.post(env.url, input, { "x-test-user": "" })],
        ["another site", 403, "forbidden", Support.post(env.url, input, { "sec-fetch-site": "cross-site" })],
        ["a sibling site", 403, "forbidden", Support.post(env.url, input, { "sec-fetch-site": "same-site" })],
        ["not JSON", 415, "unsupported_media_type", Support.post(env.url, input, { "content-type": "text/plain" })],
        ["a key twice", 400, "bad_request", Support.post(env.url, input.replace("\"runId\"", "\"threadId\":\"t2\",\"runId\""))],
        ["__proto__", 400, "bad_request", Support.post(env.url, input.replace("{", "{\"__proto__\":{\"x\":1},"))],
        ["no RunAgentInput", 400, "bad_request", Support.post(env.url, JSON.stringify({ threadId: "t1" }))],
        ["too large", 400, "bad_request", Support.post(env.url, JSON.stringify({ ...Support.say("t1", "x".repeat(100_000)) }))]
      ]
      for (const [what, status, code, request] of cases) {
        const response = yield* request
        assert.strictEqual(response.status, status, what)
        const body = JSON.parse(response.text)
        assert.deepStrictEqual([body.type, body.code], ["RUN_ERROR", code], what)
      }
      assert.isTrue(Option.isNone(yield* env.store.load("t1")))
      assert.isTrue(Option.isNone(yield* env.store.load("t2")))
      assert.strictEqual(env.mock.requests.length, 0)
    }))

  it.effect("the Request -> Response function serves the same events", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      const response = yield* Effect.promise(() =>
        env.web(new Request("http://localhost/agent", {
          method: "POST",
          headers: { "content-type": "application/json", "x-test-user": "alice" },
          body: JSON.stringify(Support.say("w1", "hello"))
        })).then(async (r) => ({ status: r.status, type: r.headers.get("content-type"), text: await r.text() }))
      )
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.type, "text/event-stream")
      const events = response.text.split("\n\n").filter((chunk) => chunk.startsWith("data: ")).map((chunk) => JSON.parse(chunk.slice(6)))
      assert.strictEqual(events[0].type, "RUN_STARTED")
      assert.deepStrictEqual(events[events.length - 1].outcome, { type: "success" })
      assert.strictEqual(events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join(""), "All done.")
    }))

  it.effect("over HTTP: four-eyes refuses the requester (403, a RUN_ERROR body), a quorum of two people runs the call once", () =>
    Effect.gen(function*() {
      const env = yield* Support.serve
      const calls = [{ id: "p1", name: "payout", arguments: { amount: 5 } }, { id: "d1", name: "deploy", arguments: { version: "v2" } }]
      const asked = yield* Support.post(env.url, JSON.stringify(Support.say("h1", Support.asking(calls))))
      assert.strictEqual(asked.status, 200)
      const answer = (interruptId: string) => ({ interruptId, status: "resolved" as const, payload: { approved: true } })
      const both = JSON.stringify(Support.resume("h1", [answer("p1"), answer("d1")]))
      const own = yield* Support.post(env.url, both)
      assert.strictEqual(own.status, 403)
      const body = JSON.parse(own.text)
      assert.deepStrictEqual([body.type, body.code], ["RUN_ERROR", "forbidden"])
      const version = (yield* env.store.load("h1")).pipe(Option.getOrThrow).version
      // bob: p1 approved (not his request), d1 one vote of two: the run pauses again on d1 alone.
      const bobs = yield* Support.post(env.url, both, { "x-test-user": "bob" })
      assert.strictEqual(bobs.status, 200)
      assert.isAbove((yield* env.store.load("h1")).pipe(Option.getOrThrow).version, version)
      const events = bobs.text.split("\n\n").filter((chunk) => chunk.startsWith("data: ")).map((chunk) => JSON.parse(chunk.slice(6)))
      const end = events[events.length - 1]
      assert.deepStrictEqual(end.outcome.interrupts.map((i: any) => [i.id, i.metadata["chat-ts"].quorum]), [["d1", { needed: 2, votes: [{ by: "bob", at: 0 }] }]])
      assert.deepStrictEqual(env.runs, [{ tool: "payout", params: { amount: 5 } }])
      const carol = yield* Support.post(env.url, JSON.stringify(Support.resume("h1", [answer("d1")])), { "x-test-user": "carol" })
      assert.strictEqual(carol.status, 200)
      assert.include(carol.text, "\"outcome\":{\"type\":\"success\"}")
      assert.deepStrictEqual(env.runs, [{ tool: "payout", params: { amount: 5 } }, { tool: "deploy", params: { version: "v2" } }])
    }))
})
