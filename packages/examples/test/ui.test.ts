/**
 * The ui example (`npm run -w @chat-ts/examples ui`): the sign-in link sets
 * the session, the page and its bundled script are served, and the demo's
 * agent pauses on `delete_files` and deletes the old logs once approved,
 * through the useChat endpoint; and an AG-UI client (`@ag-ui/client`'s
 * `HttpAgent`) runs the same agent through the AG-UI endpoint: interrupt,
 * approve, completion; a reloaded page (a GET of the conversation, a new
 * `HttpAgent` on the thread) sees the waiting call again. (The page itself in Chromium:
 * packages/ui/ai-sdk/test/Browser.test.ts.)
 */
import { type BaseEvent, HttpAgent } from "@ag-ui/client"
import { UiRequest } from "@chat-ts/ai-sdk-ui"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FileSystem from "effect/FileSystem"
import * as Sandbox from "../src/demo/sandbox.js"
import * as Example from "../src/ui.js"

const call = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(15_000) })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

const chunks = (text: string) =>
  text.split("\n\n").filter((event) => event.startsWith("data: {")).map((event) => JSON.parse(event.slice(6)))

describe("the ui example", () => {
  it.live("signs in, serves the page, pauses on delete_files and deletes the old logs once approved", () =>
    Effect.gen(function*() {
      const { url } = yield* Example.program({ port: 0, choice: { _tag: "Offline" } })
      const base = new URL(url).origin
      const login = yield* call(url)
      assert.strictEqual(login.status, 303)
      assert.include(login.headers.get("set-cookie")!, "HttpOnly")
      const cookie = login.headers.get("set-cookie")!.split(";")[0]!
      const page = yield* call(`${base}/`)
      assert.include(page.text, `<script type="module" src="/page.js">`)
      const script = yield* call(`${base}/page.js`)
      assert.strictEqual(script.headers.get("content-type"), "text/javascript; charset=utf-8")
      // The bundle holds useChat and its stock transport (which posts to /api/chat).
      assert.isTrue(script.text.includes("/api/chat") && script.text.includes("approval-responded"))

      const post = (body: unknown, headers: Record<string, string> = { cookie }) =>
        call(`${base}/api/chat`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })
      const ask = { id: "c-1", messages: [{ id: "m-1", role: "user", parts: [{ type: "text", text: "delete the old logs" }] }] }
      assert.strictEqual((yield* post(ask, {})).status, 401)
      const paused = chunks((yield* post(ask)).text)
      const request = paused.find((c) => c.type === "tool-approval-request")
      const input = paused.find((c) => c.type === "tool-input-available" && c.toolCallId === request.toolCallId)
      assert.strictEqual(input.toolName, "delete_files")
      assert.strictEqual(request.approvalId, UiRequest.approvalId("c-1", request.toolCallId))
      // A reload: the page loads the stored conversation (with the session cookie only) and sees the call wait.
      assert.strictEqual((yield* call(`${base}/api/chat?id=c-1`)).status, 401)
      const loaded = JSON.parse((yield* call(`${base}/api/chat?id=c-1`, { headers: { cookie } })).text)
      const waiting = loaded.messages[1].parts.find((p: { type: string }) => p.type === "tool-delete_files")
      assert.deepInclude(waiting, { toolCallId: request.toolCallId, state: "approval-requested", approval: { id: request.approvalId } })

      const answer = {
        id: "a-1",
        role: "assistant",
        parts: [{ type: "tool-delete_files", toolCallId: request.toolCallId, state: "approval-responded", input: input.input, approval: { id: request.approvalId, approved: true } }]
      }
      const resumed = chunks((yield* post({ id: "c-1", messages: [answer] })).text)
      assert.deepInclude(resumed.at(-1), { type: "finish", finishReason: "stop" })
      const { root } = yield* Sandbox.Sandbox
      const left = yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readDirectory(root))
      for (const file of input.input.paths) assert.notInclude(left, file)
    }).pipe(Effect.scoped, Effect.provide(Sandbox.layer(undefined)), Effect.provide(NodeServices.layer)), { timeout: 60_000 })

  it.live("an AG-UI client (HttpAgent) runs the same agent: an interrupt for delete_files, approved, the logs deleted", () =>
    Effect.gen(function*() {
      const { agent: endpoint, url } = yield* Example.program({ port: 0, choice: { _tag: "Offline" } })
      const cookie = (yield* call(url)).headers.get("set-cookie")!.split(";")[0]!
      const agent = new HttpAgent({ url: endpoint, threadId: "t-1", headers: { cookie } })
      const run = (parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) =>
        Effect.promise(async () => {
          const seen: Array<BaseEvent> = []
          const timer = setTimeout(() => agent.abortRun(), 15_000)
          try {
            await agent.runAgent(parameters, { onEvent: ({ event }) => void seen.push(event) })
          } finally {
            clearTimeout(timer)
          }
          return seen
        })
      agent.addMessage({ id: "u-1", role: "user", content: "delete the old logs" })
      const first = yield* run()
      assert.strictEqual(first.at(-1)?.type, "RUN_FINISHED")
      const [interrupt] = agent.pendingInterrupts
      assert.isDefined(interrupt)
      const started = first.find((e) => e.type === "TOOL_CALL_START" && (e as { toolCallId?: string }).toolCallId === interrupt!.toolCallId)
      assert.strictEqual((started as { toolCallName?: string }).toolCallName, "delete_files")
      const args = agent.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls ?? [] : [])).find((c) => c.id === interrupt!.toolCallId)!
      const paths = (JSON.parse(args.function.arguments) as { paths: ReadonlyArray<string> }).paths

      // A reloaded page: a new client on the thread gets the interrupt again.
      const reloaded = new HttpAgent({ url: endpoint, threadId: "t-1", headers: { cookie } })
      yield* Effect.promise(() => reloaded.runAgent())
      assert.deepStrictEqual(reloaded.pendingInterrupts, agent.pendingInterrupts)

      const second = yield* run({ resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { approved: true } }] })
      assert.strictEqual(second.at(-1)?.type, "RUN_FINISHED")
      assert.deepStrictEqual(agent.pendingInterrupts, [])
      const { root } = yield* Sandbox.Sandbox
      const left = yield* Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readDirectory(root))
      for (const file of paths) assert.notInclude(left, file)
    }).pipe(Effect.scoped, Effect.provide(Sandbox.layer(undefined)), Effect.provide(NodeServices.layer)), { timeout: 60_000 })
})
