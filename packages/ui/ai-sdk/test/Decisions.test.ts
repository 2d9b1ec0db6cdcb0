/**
 * Decisions through the endpoint under issue 26's rules, with a scripted
 * model: the approver's identity is the decider, so a tool's decision policy
 * (four-eyes, a quorum) is enforced here (403, nothing stored or run); the
 * stream and the call data tell Expired and Cancelled apart and show the
 * policy and the quorum's votes; a new message while calls wait steers the
 * conversation (the undecided calls are cancelled, the message answered), or
 * is refused with `steering: "refuse"` (or its deprecated name, `whilePaused: "refuse"`).
 */
import { UiChat, type UiMessageChunk } from "@chat-ts/ai-sdk-ui"
import { Action, Chat, ConversationStore, Messages, Steering, Tool, Toolkit } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { approvals, post, respond, resume, say } from "./support/client.js"
import * as Chunks from "../src/internal/chunks.js"
import * as Fixture from "./support/fixture.js"

/** `deploy`: four-eyes (who asked may not approve). `pay`: two distinct people must approve. `send_email`: no policy, expires in a minute. */
const Deploy = Tool.make("deploy", {
  description: "Deploy a service.",
  parameters: { service: Schema.String },
  success: Schema.Struct({ deployed: Schema.String }),
  decisionPolicy: { notRequester: true }
})

const Pay = Tool.make("pay", {
  description: "Pay an amount.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number }),
  decisionPolicy: { quorum: 2 }
})

const Refund = Tool.make("refund", {
  description: "Refund an order.",
  parameters: { order: Schema.String },
  success: Schema.Struct({ refunded: Schema.String }),
  decisionPolicy: { approve: { roles: ["finance"] } }
})

const Mail = Tool.make("send_email", {
  description: "Send an email.",
  parameters: { to: Schema.String },
  success: Schema.Struct({ sent: Schema.Boolean })
})

const toolkit = Toolkit.make(Deploy, Pay, Refund, Mail).pipe(
  Toolkit.withStrategy((call) =>
    call.name === "send_email"
      ? Effect.map(Clock.currentTimeMillis, (now) => Action.RequireApproval({ expiresAt: now + 60_000 }))
      : Effect.succeed(Action.RequireApproval())
  )
)

/** `x-test-user` names the person; carol holds the role `finance`. */
const approver = Approver.make({
  identify: (request) =>
    Effect.succeed(Option.map(
      Option.fromNullishOr(request.headers["x-test-user"]).pipe(Option.filter((id) => id !== "")),
      (id) => new Approver.Identity(id === "carol" ? { id, roles: ["finance"] } : { id })
    ))
})

const setup = () =>
  Effect.gen(function*() {
    const runs: Fixture.Runs = []
    const scripted = Fixture.model()
    const store = yield* ConversationStore.makeMemory
    const handlers = toolkit.toLayer({
      deploy: (params) => Effect.sync(() => (runs.push({ tool: "deploy", params }), { deployed: params.service })),
      pay: (params) => Effect.sync(() => (runs.push({ tool: "pay", params }), { paid: params.amount })),
      refund: (params) => Effect.sync(() => (runs.push({ tool: "refund", params }), { refunded: params.order })),
      send_email: (params) => Effect.sync(() => (runs.push({ tool: "send_email", params }), { sent: true }))
    })
    const chat = yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(Layer.merge(scripted.layer, handlers)))
    return { runs, model: scripted, store, chat }
  })

type Env = Effect.Success<ReturnType<typeof setup>>

const withEndpoint = <A, E>(
  f: (env: Env) => Effect.Effect<A, E, UiChat.UiChat | Approver.Approver | ConversationStore.ConversationStore>,
  options: Omit<UiChat.Options<never>, "chat"> = {}
) =>
  Effect.gen(function*() {
    const env = yield* setup()
    const services = Layer.mergeAll(
      Layer.succeed(ConversationStore.ConversationStore, env.store),
      Layer.succeed(Approver.Approver, approver)
    )
    const layer = UiChat.layer({ chat: env.chat, ...options }).pipe(Layer.provideMerge(services))
    return yield* Effect.provide(f(env), layer)
  })

const stored = (env: Env, id: string) => Effect.map(env.store.load(id), Option.getOrThrow)

/** The call data parts of an answer, in order. */
const callData = (answer: { readonly chunks: ReadonlyArray<UiMessageChunk.UiMessageChunk> }): ReadonlyArray<UiMessageChunk.CallData> =>
  answer.chunks.flatMap((chunk) => chunk.type === "data-chat-ts-call" ? [chunk.data] : [])

describe("decision policies through the endpoint", () => {
  it.effect("four-eyes: the person who sent the message may not approve (403, nothing stored or run); another person may", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("fe-1", Fixture.asking([{ id: "d1", name: "deploy", arguments: { service: "api" } }])), { user: "alice" })
        expect(first.status).toBe(200)
        // The user message records its sender.
        const sent = (yield* stored(env, "fe-1")).messages.find((m) => m.role === "user")!
        expect(sent.sender).toEqual({ id: "alice" })
        expect(callData(first).at(-1)).toMatchObject({ status: "awaiting-approval", policy: { notRequester: true }, requesters: ["alice"] })
        expect(callData(first).at(-1)!.requesterUnknown).toBeUndefined()
        const message = respond(first.message!, approvals(first).get("d1")!, true)
        const before = yield* stored(env, "fe-1")
        const calls = env.model.requests.length
        const own = yield* post(resume("fe-1", message), { user: "alice" })
        expect([own.status, own.error?._tag]).toEqual([403, "Forbidden"])
        expect(own.error!.message).toContain("four-eyes")
        expect(yield* stored(env, "fe-1")).toEqual(before)
        expect(env.model.requests.length).toBe(calls)
        expect(env.runs).toEqual([])
        const other = yield* post(resume("fe-1", message), { user: "bob" })
        expect(other.status).toBe(200)
        expect(other.chunks).toContainEqual({ type: "tool-output-available", toolCallId: "d1", output: { deployed: "api" } })
        expect(callData(other).at(-1)).toMatchObject({ status: "completed", decidedBy: "bob" })
        // Who asked is told while the call waits; its later parts replace that one.
        expect(callData(other).at(-1)!.requesters).toBeUndefined()
        expect(env.runs).toEqual([{ tool: "deploy", params: { service: "api" } }])
      })))

  it.effect("a role the policy names: alice (no role) is refused, carol (finance) approves, her roles recorded", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("ro-1", Fixture.asking([{ id: "r1", name: "refund", arguments: { order: "o-7" } }])), { user: "bob" })
        const message = respond(first.message!, approvals(first).get("r1")!, true)
        expect(callData(first).at(-1)).toMatchObject({ policy: { approve: { roles: ["finance"] } } })
        const before = yield* stored(env, "ro-1")
        const alice = yield* post(resume("ro-1", message), { user: "alice" })
        expect([alice.status, alice.error?._tag]).toEqual([403, "Forbidden"])
        expect(alice.error!.message).toContain("'alice' may not approve")
        expect(yield* stored(env, "ro-1")).toEqual(before)
        expect(env.runs).toEqual([])
        const carol = yield* post(resume("ro-1", message), { user: "carol" })
        expect(carol.status).toBe(200)
        expect(env.runs).toEqual([{ tool: "refund", params: { order: "o-7" } }])
        const call = Messages.findTool((yield* stored(env, "ro-1")).messages, "r1")!
        expect(call.status).toMatchObject({ _tag: "Completed", decision: { by: "carol", roles: ["finance"], kind: "approve" } })
      })))

  it.effect("a quorum of two: the first yes waits (votes shown), the same person again is 403, a second person runs it once", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("q-1", Fixture.asking([{ id: "p1", name: "pay", arguments: { amount: 5 } }])))
        const approvalId = approvals(first).get("p1")!
        expect(callData(first).at(-1)).toMatchObject({ status: "awaiting-approval", policy: { quorum: 2 } })
        const message = respond(first.message!, approvalId, true)
        const one = yield* post(resume("q-1", message), { user: "alice" })
        expect(one.status).toBe(200)
        expect(env.runs).toEqual([])
        // Still waiting, with alice's vote: one of two.
        expect(approvals(one).get("p1")).toBe(approvalId)
        const waiting = callData(one).at(-1)!
        expect(waiting).toMatchObject({ status: "awaiting-approval", policy: { quorum: 2 } })
        expect(waiting.votes!.map((vote) => vote.by)).toEqual(["alice"])
        expect(one.chunks.at(-1)).toMatchObject({ type: "finish", messageMetadata: { turn: "paused" } })
        // alice again: a duplicate vote, refused, nothing changes.
        const before = yield* stored(env, "q-1")
        const again = yield* post(resume("q-1", message), { user: "alice" })
        expect([again.status, again.error?._tag]).toEqual([403, "Forbidden"])
        expect(again.error!.message).toContain("already approved")
        expect(yield* stored(env, "q-1")).toEqual(before)
        // bob completes the quorum: it runs, once.
        const two = yield* post(resume("q-1", respond(one.message!, approvalId, true)), { user: "bob" })
        expect(two.status).toBe(200)
        expect(two.chunks).toContainEqual({ type: "tool-output-available", toolCallId: "p1", output: { paid: 5 } })
        const done = callData(two).at(-1)!
        expect(done).toMatchObject({ status: "completed", decidedBy: "bob" })
        expect(done.votes!.map((vote) => vote.by)).toEqual(["alice", "bob"])
        expect(env.runs).toEqual([{ tool: "pay", params: { amount: 5 } }])
        // A third approval of the completed call is a no-op.
        const late = yield* post(resume("q-1", message), { user: "carol" })
        expect(late.chunks[0]).toMatchObject({ messageMetadata: { duplicate: true } })
        expect(env.runs).toHaveLength(1)
      })))
})

describe("a quorum and a rejection", () => {
  it.effect("one rejection rejects a quorum call that has a vote already: denied, never run", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("qr-1", Fixture.asking([{ id: "p1", name: "pay", arguments: { amount: 9 } }])))
        const approvalId = approvals(first).get("p1")!
        const one = yield* post(resume("qr-1", respond(first.message!, approvalId, true)), { user: "alice" })
        expect(callData(one).at(-1)!.votes!.map((vote) => vote.by)).toEqual(["alice"])
        const no = yield* post(resume("qr-1", respond(one.message!, approvalId, false, "too much")), { user: "bob" })
        expect(no.status).toBe(200)
        expect(no.chunks).toContainEqual({ type: "tool-output-denied", toolCallId: "p1" })
        expect(callData(no).at(-1)).toMatchObject({ status: "rejected", decidedBy: "bob", reason: "too much" })
        expect(env.runs).toEqual([])
      })))
})

describe("expired and cancelled calls", () => {
  it.effect("an approval after the deadline: the call expires, an output error with what the model is told, status expired", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("ex-1", Fixture.asking([{ id: "m1", name: "send_email", arguments: { to: "a@b.c" } }])))
        expect(callData(first).at(-1)).toMatchObject({ status: "awaiting-approval", deadline: 60_000 })
        yield* TestClock.adjust("2 minutes")
        const late = yield* post(resume("ex-1", respond(first.message!, approvals(first).get("m1")!, true)))
        expect(late.status).toBe(200)
        const error = late.chunks.find((c) => c.type === "tool-output-error")
        expect(error).toEqual({ type: "tool-output-error", toolCallId: "m1", errorText: Messages.expiryText({ _tag: "Expired", expiresAt: 60_000, approvedLate: true }) })
        expect(callData(late).at(-1)).toMatchObject({ status: "expired", approvedLate: true })
        const part = late.message!.parts.find((p) => p.type === "tool-send_email")
        expect(part).toMatchObject({ state: "output-error" })
        expect(env.runs).toEqual([])
        const call = Messages.findTool((yield* stored(env, "ex-1")).messages, "m1")!
        expect(call.status._tag).toBe("Expired")
      })))

  it.effect("a new message while calls wait steers: they are cancelled (their data parts say so), the message is answered, nothing runs", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("st-1", Fixture.asking([
          { id: "m1", name: "send_email", arguments: { to: "a@b.c" } },
          { id: "p1", name: "pay", arguments: { amount: 1 } }
        ])), { user: "alice" })
        expect(approvals(first).size).toBe(2)
        const steered = yield* post(say("st-1", "never mind, what time is it?", [], "m-steer"), { user: "alice" })
        expect(steered.status).toBe(200)
        // The cancelled calls are of the earlier UI message: their data parts lead the stream, before the answer.
        expect(steered.chunks.slice(1, 3).map((c) => c.type === "data-chat-ts-call" ? [c.data.callId, c.data.status, c.data.cancelledBy, c.data.reason] : c.type)).toEqual([
          ["m1", "cancelled", "user-message", Steering.defaultReason],
          ["p1", "cancelled", "user-message", Steering.defaultReason]
        ])
        expect(steered.chunks.some((c) => c.type === "tool-output-error" || c.type === "tool-approval-request")).toBe(false)
        const text = steered.chunks.flatMap((c) => c.type === "text-delta" ? [c.delta] : []).join("")
        expect(text).toBe("you said: never mind, what time is it?")
        expect(steered.chunks.at(-1)).toMatchObject({ type: "finish", messageMetadata: { turn: "complete" } })
        // The model was told why the calls did not run.
        expect(JSON.stringify(env.model.requests.at(-1)!.messages)).toContain("new message")
        expect(env.runs).toEqual([])
        // Stored: the calls cancelled (who and when recorded), the message kept whole with its sender.
        const messages = (yield* stored(env, "st-1")).messages
        expect(Messages.findTool(messages, "m1")!.status).toMatchObject({ _tag: "Cancelled", by: "user-message", cancellation: { by: "alice" } })
        const last = messages.filter((m) => m.role === "user").at(-1)!
        expect([Messages.textOf(last), last.sender]).toEqual(["never mind, what time is it?", { id: "alice" }])
        // The same message again (a retrying client): a no-op.
        const before = yield* stored(env, "st-1")
        const again = yield* post(say("st-1", "never mind, what time is it?", [], "m-steer"), { user: "alice" })
        expect(again.chunks[0]).toMatchObject({ messageMetadata: { duplicate: true } })
        expect(yield* stored(env, "st-1")).toEqual(before)
        // An approval of a cancelled call: 409, nothing runs.
        const approve = yield* post(resume("st-1", respond(first.message!, approvals(first).get("m1")!, true)))
        expect([approve.status, approve.error?.reason]).toEqual([409, "AlreadyDecided"])
        expect(env.runs).toEqual([])
      })))

  it.effect("a new message would withdraw a call under a policy: 403 unless its sender asked for it or may reject it", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("st-p", Fixture.asking([{ id: "r1", name: "refund", arguments: { order: "o-1" } }])), { user: "alice" })
        expect(approvals(first).size).toBe(1)
        const before = yield* stored(env, "st-p")
        // bob neither asked for it nor holds finance (who may reject it): refused, nothing stored.
        const bobs = yield* post(say("st-p", "cancel that refund", [], "m-bob"), { user: "bob" })
        expect([bobs.status, bobs.error?._tag]).toEqual([403, "Forbidden"])
        expect(bobs.error!.message).toContain("may not cancel tool call 'r1'")
        expect(yield* stored(env, "st-p")).toEqual(before)
        // alice asked for it: her new message withdraws it.
        const alices = yield* post(say("st-p", "never mind", [], "m-alice"), { user: "alice" })
        expect(alices.status).toBe(200)
        const messages = (yield* stored(env, "st-p")).messages
        expect(Messages.findTool(messages, "r1")!.status).toMatchObject({ _tag: "Cancelled", by: "user-message", cancellation: { by: "alice" } })
        expect(env.runs).toEqual([])
      })))

  it.effect("a new message while an approved call is still to run: 409 Paused, nothing changes or runs", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const approved: Messages.Message = {
          role: "assistant",
          parts: [{ _tag: "ToolCall", id: "m1", name: "send_email", arguments: "{\"to\":\"a@b.c\"}", status: { _tag: "Approved" } }]
        }
        yield* env.store.save("ap-1", [Messages.user("mail a@b.c"), approved], { expectedVersion: 0 })
        const before = yield* stored(env, "ap-1")
        const answer = yield* post(say("ap-1", "and another thing"))
        expect([answer.status, answer.error?.reason]).toEqual([409, "Paused"])
        expect(answer.error!.message).toContain("m1")
        expect(yield* stored(env, "ap-1")).toEqual(before)
        expect(env.model.requests).toHaveLength(0)
        expect(env.runs).toEqual([])
      })))

  for (const options of [{ steering: "refuse" }, { whilePaused: "refuse" }] as const) {
  it.effect(`with ${JSON.stringify(options)}, a new message while calls wait is 409 Paused and changes nothing`, () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        yield* post(say("rf-1", Fixture.asking([{ id: "m1", name: "send_email", arguments: { to: "a@b.c" } }])))
        const before = yield* stored(env, "rf-1")
        const calls = env.model.requests.length
        const answer = yield* post(say("rf-1", "and another thing"))
        expect([answer.status, answer.error?.reason]).toEqual([409, "Paused"])
        expect(yield* stored(env, "rf-1")).toEqual(before)
        expect(env.model.requests.length).toBe(calls)
      }), options))
  }
})

describe("the call data", () => {
  const call = (status: Messages.ToolCallStatus): Messages.ToolCallPart => ({ _tag: "ToolCall", id: "c1", name: "pay", arguments: "{\"amount\":1}", status })

  it("shows the reviewer's verdict, the policy and the votes so far while a call waits", () => {
    const vote = { by: "alice", roles: ["finance"], at: 5, argumentsHash: "h" }
    const data = Chunks.callData(call({
      _tag: "AwaitingApproval",
      review: { verdict: "needs-person", reason: "a large amount", confidence: 0.9 },
      policy: { approve: { roles: ["finance"] }, quorum: 2 },
      votes: [vote]
    }), undefined)
    expect(data).toEqual({
      callId: "c1",
      tool: "pay",
      status: "awaiting-approval",
      arguments: "{\"amount\":1}",
      edited: false,
      review: { verdict: "needs-person", reason: "a large amount", confidence: 0.9 },
      policy: { approve: { roles: ["finance"] }, quorum: 2 },
      votes: [{ by: "alice", roles: ["finance"], at: 5 }]
    })
  })

  it("tells an expiry, an approval too late and each kind of cancellation apart", () => {
    expect(Chunks.callData(call({ _tag: "Expired", expiresAt: 10 }), undefined)).toMatchObject({ status: "expired" })
    expect(Chunks.callData(call({ _tag: "Expired", expiresAt: 10 }), undefined)).not.toHaveProperty("approvedLate")
    expect(Chunks.callData(call({ _tag: "Expired", expiresAt: 10, approvedLate: true }), undefined)).toMatchObject({ status: "expired", approvedLate: true })
    for (const by of ["requester", "user-message", "operator"] as const) {
      expect(Chunks.callData(call({ _tag: "Cancelled", by, reason: "why" }), undefined)).toMatchObject({ status: "cancelled", cancelledBy: by, reason: "why" })
    }
  })
})
