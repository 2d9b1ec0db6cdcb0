/**
 * A page that reloads: `GET /api/chat?id=…` gives the stored conversation as
 * `useChat`'s initial messages, which the AI SDK's own `validateUIMessages`
 * accepts; the pending approvals come back with the approval ids the stream
 * gave, so a page answers them after a reload and the turn goes on (the
 * approved tool runs once); what steering cancelled reads as cancelled, with
 * the reason; the same checks as a post (identity, `access`, another site),
 * and nothing is stored or run by a read.
 */
import { UiChat, UiHistory, UiHttp, type UiMessageChunk, UiRequest } from "@chat-ts/ai-sdk-ui"
import { Chat, type ConversationStore, Messages, Steering } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import type { Approver } from "@chat-ts/inbox"
import { assert, describe, expect, it } from "@effect/vitest"
import { type UIMessage, validateUIMessages } from "ai"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { approvals, post, respond, resume, say } from "./support/client.js"
import * as Conversations from "./support/conversations.js"
import * as Fixture from "./support/fixture.js"

type Env = Effect.Success<typeof Fixture.make>

const withEndpoint = <A, E>(
  f: (env: Env) => Effect.Effect<A, E, UiChat.UiChat | Approver.Approver | ConversationStore.ConversationStore>,
  options: Omit<UiChat.Options<never>, "chat"> = {}
) =>
  Effect.gen(function*() {
    const env = yield* Fixture.make
    const layer = UiChat.layer({ chat: env.chat, ...options }).pipe(Layer.provideMerge(env.services))
    return yield* Effect.provide(f(env), layer)
  })

interface Loaded {
  readonly status: number
  readonly headers: Headers
  readonly body: { readonly conversationId?: string; readonly version?: number; readonly messages?: Array<UIMessage>; readonly running?: boolean; readonly _tag?: string; readonly message?: string }
}

/** A page's `GET /api/chat?id=…` (in process), bounded. */
const load = (query: string, options: { readonly user?: string; readonly headers?: Record<string, string> } = {}) =>
  Effect.gen(function*() {
    const request = new Request(`http://127.0.0.1/api/chat${query}`, {
      headers: { ...(options.user === "" ? {} : { "x-test-user": options.user ?? "alice" }), ...options.headers }
    })
    const context = yield* Effect.context<UiChat.UiChat | Approver.Approver>()
    const response = HttpServerResponse.toWeb(yield* UiHttp.history(HttpServerRequest.fromWeb(request)), { context })
    const body = yield* Effect.promise(() => response.json() as Promise<Loaded["body"]>).pipe(Effect.timeout("10 seconds"), Effect.orDie)
    return { status: response.status, headers: response.headers, body } satisfies Loaded
  })

/** The messages of a load, checked by the AI SDK's own schema of UI messages. */
const validated = (loaded: Loaded) => Effect.promise(() => validateUIMessages({ messages: loaded.body.messages }))

const toolParts = (message: UIMessage) => message.parts.filter((part) => part.type.startsWith("tool-")) as unknown as ReadonlyArray<Record<string, unknown>>
const dataParts = (message: UIMessage) =>
  message.parts.flatMap((part) => part.type === "data-chat-ts-call" ? [(part as unknown as { readonly data: UiMessageChunk.CallData }).data] : [])

const emailAndTransfer = Fixture.asking([
  { id: "c1", name: "send_email", arguments: { to: "a@b.c", subject: "hi" } },
  { id: "c2", name: "transfer", arguments: { amount: 10, to: "bob" } }
])

describe("a page loading the stored conversation", () => {
  it.effect("mid-pause: both calls wait with the stream's approval ids; answered from the loaded messages, the turn goes on and the tool runs once", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("h-1", emailAndTransfer, [], "client-msg-1"))
        expect(first.status).toBe(200)
        const loaded = yield* load("?id=h-1")
        expect(loaded.status).toBe(200)
        expect(loaded.headers.get("cache-control")).toBe("no-store")
        expect(loaded.headers.get("x-content-type-options")).toBe("nosniff")
        expect(loaded.body.conversationId).toBe("h-1")
        expect(loaded.body.version).toBe(Option.getOrThrow(yield* env.store.load("h-1")).version)
        const messages = yield* validated(loaded)
        expect(messages.map((m) => m.role)).toEqual(["user", "assistant"])
        // The user's message keeps the id the client sent.
        expect(messages[0]).toEqual({ id: "client-msg-1", role: "user", parts: [{ type: "text", text: emailAndTransfer }] })
        const assistant = messages[1]!
        expect(assistant.parts[0]).toEqual({ type: "step-start" })
        expect(assistant.parts).toContainEqual({ type: "reasoning", text: "I should do that.", state: "done" })
        expect(toolParts(assistant)).toEqual([
          { type: "tool-send_email", toolCallId: "c1", input: { to: "a@b.c", subject: "hi" }, state: "approval-requested", approval: { id: approvals(first).get("c1") } },
          { type: "tool-transfer", toolCallId: "c2", input: { amount: 10, to: "bob" }, state: "approval-requested", approval: { id: approvals(first).get("c2") } }
        ])
        const data = dataParts(assistant)
        expect(data.map((d) => [d.callId, d.status])).toEqual([["c1", "awaiting-approval"], ["c2", "awaiting-approval"]])
        expect(data[1]).toMatchObject({ deadline: 3_600_000, parameters: { type: "object", properties: { amount: { type: "integer" } } } })
        // Reading stored and ran nothing.
        expect(env.runs).toEqual([])

        // The reloaded page answers both (as addToolApprovalResponse does to the loaded message).
        const answered = respond(respond(assistant, approvals(first).get("c1")!, true), approvals(first).get("c2")!, false, "not now")
        const next = yield* post(resume("h-1", answered))
        expect(next.status).toBe(200)
        expect(env.runs).toEqual([{ tool: "send_email", params: { to: "a@b.c", subject: "hi" } }])
        // The same answers again (a second reloaded tab) run nothing more.
        const again = yield* post(resume("h-1", answered))
        expect(again.chunks.at(0)).toMatchObject({ messageMetadata: { duplicate: true } })
        expect(env.runs).toHaveLength(1)

        // Loaded after the turn: the decided calls as useChat would have left them.
        const after = yield* validated(yield* load("?id=h-1"))
        expect(after.map((m) => m.role)).toEqual(["user", "assistant"])
        const parts = toolParts(after[1]!)
        expect(parts[0]).toMatchObject({ state: "output-available", output: { sent: true }, approval: { id: approvals(first).get("c1"), approved: true } })
        expect(parts[1]).toMatchObject({ state: "output-denied", approval: { id: approvals(first).get("c2"), approved: false, reason: "not now" } })
        expect(dataParts(after[1]!).map((d) => [d.status, d.decidedBy])).toEqual([["completed", "alice"], ["rejected", "alice"]])
        expect(after[1]!.parts).toContainEqual({ type: "text", text: "all done", state: "done" })
      })))

  it.effect("after steering: the withdrawn calls read as cancelled with the reason, in their own message", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        yield* post(say("h-2", emailAndTransfer))
        const steered = yield* post(say("h-2", "never mind, what time is it?"))
        expect(steered.status).toBe(200)
        const messages = yield* validated(yield* load("?id=h-2"))
        expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
        const parts = toolParts(messages[1]!)
        expect(parts.map((p) => p.state)).toEqual(["output-error", "output-error"])
        expect(String(parts[0]!.errorText)).toContain("cancelled because the user sent a new message")
        const data = dataParts(messages[1]!)
        expect(data.map((d) => [d.status, d.cancelledBy, d.reason])).toEqual([
          ["cancelled", "user-message", Steering.defaultReason],
          ["cancelled", "user-message", Steering.defaultReason]
        ])
        expect(messages[3]!.parts).toContainEqual({ type: "text", text: "you said: never mind, what time is it?", state: "done" })
        expect(env.runs).toEqual([])
      })))

  it.effect("tools that ran, failed, were refused by the policy or scheduled: each in its stream state, accepted by the AI SDK", () =>
    withEndpoint(() =>
      Effect.gen(function*() {
        yield* post(say("h-3", Fixture.asking([
          { id: "l1", name: "lookup", arguments: { word: "x" } },
          { id: "e1", name: "explode", arguments: {} },
          { id: "w1", name: "wipe", arguments: {} },
          { id: "r1", name: "remind", arguments: { note: "n" } }
        ])))
        const messages = yield* validated(yield* load("?id=h-3"))
        const parts = toolParts(messages[1]!)
        expect(parts.map((p) => [p.toolCallId, p.state])).toEqual([
          ["l1", "output-available"],
          ["e1", "output-error"],
          ["w1", "output-error"],
          ["r1", "input-available"]
        ])
        expect(parts[2]!.errorText).toContain("wiping is never allowed")
        expect(dataParts(messages[1]!).map((d) => d.status)).toEqual(["completed", "failed", "rejected", "scheduled"])
      })))

  it.effect("a reload mid-run says `running` (the user's message without its answer yet); once the turn ended, the answer and `running: false`", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      const asked = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      // A model that answers only once the test lets it: the load in between is a reload mid-run.
      const slow = MockLanguageModel.make(() => Effect.andThen(Deferred.succeed(asked, undefined), Effect.as(Deferred.await(gate), MockLanguageModel.text("the answer"))))
      const chat = yield* Chat.make({ tools: Fixture.toolkit }).pipe(Effect.provide(Layer.merge(slow.layer, Fixture.handlers(env.runs))))
      yield* Effect.provide(
        Effect.gen(function*() {
          const posted = yield* Effect.forkChild(post(say("h-run", "hello", [], "client-run-1")))
          yield* Deferred.await(asked)
          const during = yield* load("?id=h-run")
          expect([during.status, during.body.running]).toEqual([200, true])
          expect(during.body.messages?.map((m) => m.role)).toEqual(["user"])
          yield* Deferred.succeed(gate, undefined)
          expect((yield* Fiber.join(posted)).status).toBe(200)
          const after = yield* load("?id=h-run")
          expect(after.body.running).toBe(false)
          expect(after.body.messages?.map((m) => m.role)).toEqual(["user", "assistant"])
        }),
        UiChat.layer({ chat }).pipe(Layer.provideMerge(env.services))
      )
    }))

  it("`running` from the stored state: the user's message last or a call Running; a pause, an answer or nothing stored is not", () => {
    const call = (status: Messages.ToolCallPart["status"]): Messages.Message => ({
      role: "assistant",
      parts: [{ _tag: "ToolCall", id: "c1", name: "lookup", arguments: "{}", status }]
    }) as Messages.Message
    expect(UiHistory.isRunning([])).toBe(false)
    expect(UiHistory.isRunning([Messages.user("hi")])).toBe(true)
    expect(UiHistory.isRunning([Messages.user("hi"), Messages.system("be brief")])).toBe(true)
    expect(UiHistory.isRunning([Messages.user("hi"), call({ _tag: "Running" } as Messages.ToolCallPart["status"])])).toBe(true)
    expect(UiHistory.isRunning([Messages.user("hi"), call({ _tag: "AwaitingApproval" } as Messages.ToolCallPart["status"])])).toBe(false)
    expect(UiHistory.isRunning([Messages.user("hi"), Messages.assistant("hello")])).toBe(false)
  })

  it.effect("a conversation not stored yet is empty, version 0, and stays unstored", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const loaded = yield* load("?id=fresh")
        expect([loaded.status, loaded.body]).toEqual([200, { conversationId: "fresh", version: 0, messages: [], running: false }])
        expect(Option.isNone(yield* env.store.load("fresh"))).toBe(true)
      })))

  it.effect("the checks of a post: no identity 401, another site 403 (Sec-Fetch-Site, or a foreign Origin without it), `access` 403, no id 400; nothing stored", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        yield* post(say("h-4", emailAndTransfer), { user: "alice" })
        const before = yield* env.store.load("h-4")
        const anonymous = yield* load("?id=h-4", { user: "" })
        expect([anonymous.status, anonymous.body._tag]).toEqual([401, "Unauthorized"])
        const foreign = yield* load("?id=h-4", { headers: { "sec-fetch-site": "cross-site" } })
        expect([foreign.status, foreign.body._tag]).toEqual([403, "Forbidden"])
        // Without Sec-Fetch-Site, the Origin is checked (the endpoint's own host passes).
        const elsewhere = yield* load("?id=h-4", { headers: { origin: "https://evil.example" } })
        expect([elsewhere.status, elsewhere.body._tag]).toEqual([403, "Forbidden"])
        expect(elsewhere.body.messages).toBeUndefined()
        const own = yield* load("?id=h-4", { headers: { origin: "http://127.0.0.1" } })
        expect(own.status).toBe(200)
        const other = yield* load("?id=h-4", { user: "mallory" })
        expect([other.status, other.body._tag]).toEqual([403, "Forbidden"])
        expect(other.body.messages).toBeUndefined()
        const unnamed = yield* load("")
        expect([unnamed.status, unnamed.body._tag]).toEqual([400, "BadRequest"])
        const long = yield* load(`?id=${"x".repeat(UiRequest.limits.id + 1)}`)
        expect(long.status).toBe(400)
        expect(yield* env.store.load("h-4")).toEqual(before)
        expect(Messages.pendingTools(Option.getOrThrow(before).messages)).toHaveLength(2)
      }), { access: (identity) => Effect.succeed(identity.id !== "mallory") }))

  it.effect("through the web handler: a GET is the load, a POST the turn", () =>
    withEndpoint(() =>
      Effect.gen(function*() {
        const handler = yield* UiHttp.webHandler()
        const posted = yield* Effect.promise(() =>
          handler(new Request("http://127.0.0.1/api/chat", {
            method: "POST",
            headers: { "content-type": "application/json", "x-test-user": "alice" },
            body: JSON.stringify(say("h-5", emailAndTransfer))
          })).then((response) => response.text())
        )
        expect(posted).toContain("tool-approval-request")
        const response = yield* Effect.promise(() => handler(new Request("http://127.0.0.1/api/chat?id=h-5", { headers: { "x-test-user": "alice" } })))
        expect(response.status).toBe(200)
        const body = yield* Effect.promise(() => response.json() as Promise<Loaded["body"]>)
        const messages = yield* Effect.promise(() => validateUIMessages({ messages: body.messages }))
        expect(toolParts(messages[1]!).map((p) => p.state)).toEqual(["approval-requested", "approval-requested"])
      })))

  it.effect("through toWebHandler over the services: a GET is the load too", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      yield* Effect.provide(post(say("h-7", emailAndTransfer)), UiChat.layer({ chat: env.chat }).pipe(Layer.provideMerge(env.services)))
      // Read without assuming the function's packaging (a function, or `{ handler, dispose }`).
      const made: unknown = UiHttp.toWebHandler(UiChat.layer({ chat: env.chat }).pipe(Layer.provideMerge(env.services)))
      const handler = (typeof made === "function" ? made : (made as { readonly handler: unknown }).handler) as (request: Request) => Promise<Response>
      const response = yield* Effect.promise(() => handler(new Request("http://127.0.0.1/api/chat?id=h-7", { headers: { "x-test-user": "alice" } })))
      const body = yield* Effect.promise(() => response.json() as Promise<Loaded["body"]>)
      const dispose = typeof made === "object" && made !== null && "dispose" in made ? (made.dispose as () => Promise<void>) : undefined
      if (dispose !== undefined) yield* Effect.promise(dispose)
      expect(response.status).toBe(200)
      expect(toolParts(body.messages![1]!).map((p) => p.state)).toEqual(["approval-requested", "approval-requested"])
    }))

  it.effect("a message held on a paused response comes after it (with its id); system messages are not shown", () =>
    Effect.gen(function*() {
      const call: Messages.ToolCallPart = { ...Messages.toolCall({ id: "p1", name: "send_email", arguments: "{\"to\":\"a@b.c\",\"subject\":\"x\"}" }), status: { _tag: "AwaitingApproval" } }
      const messages: Messages.Messages = [
        Messages.system("be brief"),
        { ...Messages.user("mail a"), providerMetadata: { "@chat-ts/ai-sdk-ui": { messageId: "m1" } } },
        {
          role: "assistant",
          parts: [Messages.text("On it."), call],
          queued: [{ parts: [Messages.text("and b")], providerMetadata: { "@chat-ts/ai-sdk-ui": { messageId: "m2" } } }]
        }
      ]
      const ui = yield* Effect.promise(() => validateUIMessages({ messages: UiHistory.toUiMessages("h-6", messages) }))
      expect(ui.map((m) => [m.role, m.id])).toEqual([["user", "m1"], ["assistant", "h-6:2"], ["user", "m2"]])
      expect(ui[2]!.parts).toEqual([{ type: "text", text: "and b" }])
      expect(toolParts(ui[1]!)[0]).toMatchObject({ state: "approval-requested", approval: { id: UiRequest.approvalId("h-6", "p1") } })
    }))

  it("a waiting call's data part names everyone who asked (messages delivered together), and a message without a sender as unknown", () => {
    const waiting = (id: string): Messages.ToolCallPart => ({
      ...Messages.toolCall({ id, name: "send_email", arguments: "{\"to\":\"a@b.c\",\"subject\":\"x\"}" }),
      status: { _tag: "AwaitingApproval", policy: { notRequester: true } }
    })
    const dataOf = (messages: Messages.Messages, id: string) =>
      UiHistory.toUiMessages("h-7", messages).flatMap((m) => m.parts).find((part) => part.type === "data-chat-ts-call" && part.id === id)
    const together: Messages.Messages = [
      Messages.user("earlier", { sender: { id: "carol" } }),
      Messages.assistant("Hello."),
      Messages.user("Pay 900 to alice.", { sender: { id: "alice" } }),
      Messages.user("Thanks!", { sender: { id: "bob" } }),
      Messages.user("Please.", { sender: { id: "alice" } }),
      { role: "assistant", parts: [waiting("p1")] }
    ]
    // carol's message belongs to an earlier turn; alice is named once.
    expect((dataOf(together, "p1") as any).data).toMatchObject({ status: "awaiting-approval", requesters: ["alice", "bob"] })
    expect((dataOf(together, "p1") as any).data.requesterUnknown).toBeUndefined()
    const unknown: Messages.Messages = [Messages.user("Pay", { sender: { id: "alice" } }), Messages.user("Thanks"), { role: "assistant", parts: [waiting("p2")] }]
    expect((dataOf(unknown, "p2") as any).data).toMatchObject({ requesters: ["alice"], requesterUnknown: true })
    // A call that no longer waits names nobody.
    const done: Messages.Messages = [...together.slice(0, -1), { role: "assistant", parts: [{ ...waiting("p3"), status: { _tag: "Rejected", by: "user" } }] }]
    expect((dataOf(done, "p3") as any).data.requesters).toBeUndefined()
  })

  it("any stored conversation gives UI messages the AI SDK accepts: one tool part and one data part per call, in the stream's state", async () => {
    await fc.assert(
      fc.asyncProperty(Conversations.conversation, async (messages) => {
        const built = UiHistory.toUiMessages("p-1", messages)
        // The SDK's schema takes no empty list: an empty conversation is `[]` (a chat with nothing yet).
        const ui = built.length === 0 ? [] : await validateUIMessages({ messages: built })
        expect(built.length === 0).toBe(messages.length === 0)
        const calls = Messages.toolCalls(messages)
        const tools = ui.flatMap((m) => toolParts(m))
        expect(tools.map((p) => p.toolCallId)).toEqual(calls.map((c) => c.id))
        expect(ui.flatMap((m) => dataParts(m)).map((d) => d.callId)).toEqual(calls.map((c) => c.id))
        calls.forEach((call, i) => {
          const state = tools[i]!.state
          const tag = call.status._tag
          if (tag === "AwaitingApproval") expect(tools[i]!.approval).toEqual({ id: UiRequest.approvalId("p-1", call.id) })
          expect(state).toBe(
            tag === "AwaitingApproval" ? "approval-requested"
            : tag === "Completed" ? "output-available"
            : tag === "Rejected" && call.status.by === "user" ? "output-denied"
            : ["Failed", "Rejected", "Expired", "Cancelled"].includes(tag) ? "output-error"
            : "input-available"
          )
        })
        // Messages alternate as useChat builds them: never two assistant messages in a row.
        ui.forEach((m, i) => i > 0 && m.role === "assistant" && expect(ui[i - 1]!.role).toBe("user"))
      }),
      { numRuns: 200 }
    )
  })

  it("the README shows the example page's restore region word for word", () => {
    const here = fileURLToPath(new URL(".", import.meta.url))
    const lines = readFileSync(join(here, "..", "..", "..", "examples", "src", "ui", "page.tsx"), "utf8").split("\n")
    const region = lines.slice(lines.indexOf("// #region restore") + 1, lines.indexOf("// #endregion restore")).join("\n")
    assert.include(readFileSync(join(here, "..", "README.md"), "utf8"), "```tsx\n" + region + "\n```")
  })
})
