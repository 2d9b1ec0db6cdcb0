import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, Logger, Schema } from "effect"
import * as TestClock from "effect/testing/TestClock"
import {
  Action,
  Chat,
  type ChatOutcome,
  ConversationStore,
  Grant,
  type LanguageModel,
  Messages,
  PauseReason,
  Reviewer,
  Tool,
  Toolkit,
  Worker
} from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

const SendEmail = Tool.make("send_email", {
  description: "Send an email.",
  parameters: { to: Schema.String, body: Schema.String },
  success: Schema.String
})

/** Every email needs a person, unless a live grant covers it. */
const kit = Toolkit.withStrategy(Toolkit.make(SendEmail), Grant.grantedOr(() => Action.RequireApproval()))

const mail = (id: string, to: string) => MockLanguageModel.toolCalls([{ id, name: "send_email", arguments: { to, body: "hi" } }])

const setup = (script: ReadonlyArray<MockLanguageModel.ScriptedResponse>) =>
  Effect.gen(function*() {
    const sent: Array<string> = []
    const model = MockLanguageModel.make(script)
    const chat = yield* Chat.make({ tools: kit }).pipe(
      Effect.provide(Layer.merge(model.layer, kit.toLayer({ send_email: ({ to }) => Effect.sync(() => (sent.push(to), `sent to ${to}`)) })))
    )
    return { chat, sent, model }
  })

/** A grant for mail to a@x.com, made now, for an hour. */
const grantToA = (messages: Messages.Messages, id = "g1") =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.fromResult(Messages.grant(messages, { id, tool: "send_email", where: { path: ["to"], equals: "a@x.com" }, by: "alice", at: now, expiresAfter: "1 hour" })))

/** The calls a paused turn waits on for a person (none when it did not pause). */
const waiting = (result: ChatOutcome.Result): ReadonlyArray<string> =>
  result.outcome._tag === "Paused" ? PauseReason.approvalIds(result.outcome.reason) : []

describe("Chat: grants", () => {
  it.effect("a grant made during a pause leaves the pending call pending, and settles the next call it covers", () =>
    Effect.gen(function*() {
      const { chat, sent } = yield* setup([mail("c1", "a@x.com"), mail("c2", "a@x.com"), MockLanguageModel.text("Both sent.")])
      const first = yield* chat.complete(Messages.fromUser("Mail a twice."))
      expect(waiting(first)).toEqual(["c1"])
      const granted = yield* grantToA(first.messages)
      // Resuming with only the grant: c1 was pending when it was made, so it still waits.
      const again = yield* chat.resume(granted)
      expect(waiting(again)).toEqual(["c1"])
      expect(sent).toEqual([])
      // A person approves c1; c2, proposed after the grant, runs on it without a pause.
      const done = yield* chat.resume(yield* chat.approve(again.messages, "c1"))
      expect(done.outcome._tag).toBe("Complete")
      expect(sent).toEqual(["a@x.com", "a@x.com"])
      expect(Grant.settledBy(Messages.findTool(done.messages, "c1")!)).toBeUndefined()
      expect(Messages.findTool(done.messages, "c2")!.status).toMatchObject({ _tag: "Completed", decision: { by: "alice", grant: "g1" } })
    }))

  it.effect("a tool with a decision policy is never settled by a grant: the call waits under the policy", () =>
    Effect.gen(function*() {
      const Guarded = Tool.make("send_email", {
        description: "Send an email.",
        parameters: { to: Schema.String, body: Schema.String },
        success: Schema.String,
        decisionPolicy: { approve: { roles: ["ops"] } }
      })
      const guarded = Toolkit.withStrategy(Toolkit.make(Guarded), Grant.grantedOr(() => Action.RequireApproval()))
      const sent: Array<string> = []
      const model = MockLanguageModel.make([mail("c1", "b@x.com"), mail("c2", "a@x.com"), MockLanguageModel.text("ok")])
      const chat = yield* Chat.make({ tools: guarded }).pipe(
        Effect.provide(Layer.merge(model.layer, guarded.toLayer({ send_email: ({ to }) => Effect.sync(() => (sent.push(to), `sent to ${to}`)) })))
      )
      const first = yield* chat.complete(Messages.fromUser("Mail b, then a."))
      const granted = yield* grantToA(first.messages)
      const ops = { id: "olga", roles: ["ops"] }
      const second = yield* chat.resume(yield* chat.approve(granted, "c1", undefined, { decider: ops }))
      // c2 is covered by the live grant, but its tool names who may decide: it waits for them.
      expect(waiting(second)).toEqual(["c2"])
      expect(Messages.findTool(second.messages, "c2")!.status).toEqual({ _tag: "AwaitingApproval", policy: { approve: { roles: ["ops"] } } })
      expect(sent).toEqual(["b@x.com"])
    }))

  it.effect("a grant that expires while the turn is paused settles nothing after it (test clock)", () =>
    Effect.gen(function*() {
      const { chat, sent } = yield* setup([mail("c1", "b@x.com"), mail("c2", "a@x.com"), MockLanguageModel.text("ok")])
      const first = yield* chat.complete(Messages.fromUser("Mail b, then a."))
      const granted = yield* grantToA(first.messages)
      yield* TestClock.adjust("61 minutes")
      const afterExpiry = yield* chat.resume(yield* chat.approve(granted, "c1"))
      // c2 (to a@x.com, covered but for the time) now waits for a person.
      expect(waiting(afterExpiry)).toEqual(["c2"])
      expect(sent).toEqual(["b@x.com"])
    }))

  it.effect("a revoked grant settles nothing; a call to another address waits for a person", () =>
    Effect.gen(function*() {
      const { chat, sent } = yield* setup([mail("c1", "b@x.com"), mail("c2", "a@x.com"), mail("c3", "z@evil.com"), MockLanguageModel.text("ok")])
      const first = yield* chat.complete(Messages.fromUser("Mail three."))
      const revoked = yield* Effect.fromResult(Messages.revokeGrant(yield* grantToA(first.messages), "g1", { by: "bob", at: 0 }))
      const second = yield* chat.resume(yield* chat.approve(revoked, "c1"))
      expect(waiting(second)).toEqual(["c2"])
      // A fresh grant; c2 was pending when it was made, c3 (another address) is not covered.
      const regranted = yield* grantToA(second.messages, "g2")
      const third = yield* chat.resume(yield* chat.approve(regranted, "c2"))
      expect(waiting(third)).toEqual(["c3"])
      expect(sent).toEqual(["b@x.com", "a@x.com"])
    }))

  it.effect("a forged strategy naming a grant that cannot settle the call: it waits for a person", () =>
    Effect.gen(function*() {
      const forged = Toolkit.withStrategy(Toolkit.make(SendEmail), () => Action.Granted({ grant: "g1" }))
      const model = MockLanguageModel.make([mail("c1", "a@x.com")])
      const sent: Array<string> = []
      const chat = yield* Chat.make({ tools: forged }).pipe(
        Effect.provide(Layer.merge(model.layer, forged.toLayer({ send_email: ({ to }) => Effect.sync(() => (sent.push(to), "sent")) })))
      )
      // The grant exists, but only after the user message the call answers: proposed after it, so it would cover it…
      const withGrant = yield* grantToA(Messages.fromUser("Mail a."))
      const revoked = yield* Effect.fromResult(Messages.revokeGrant(withGrant, "g1", { by: "bob", at: 0 }))
      // …but it was revoked: the strategy's Granted is refused by the reducer.
      const logs: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => void logs.push(`${logLevel} ${String(message)}`))
      const result = yield* chat.complete(revoked).pipe(Effect.provide(Logger.layer([logger])))
      expect(waiting(result)).toEqual(["c1"])
      expect(Messages.findTool(result.messages, "c1")!.status).toStrictEqual({ _tag: "AwaitingApproval" })
      expect(sent).toEqual([])
      expect(logs.some((line) => line.startsWith("Warn") && line.includes("Grant 'g1' cannot settle call 'c1'") && line.includes("revoked"))).toBe(true)
    }))

  it.effect("a grant scoped to a conversation applies through Worker.resume of that conversation only", () =>
    Effect.gen(function*() {
      // One model serves both conversations: each resume asks it once for c2 (and conv-1 once more, after c2 ran).
      const { chat, sent } = yield* setup([mail("c1", "b@x.com"), mail("c2", "a@x.com"), mail("c2", "a@x.com"), MockLanguageModel.text("ok")])
      const store = yield* ConversationStore.makeMemory
      const first = yield* chat.complete(Messages.fromUser("Mail b, then a."))
      const now = yield* Clock.currentTimeMillis
      const scoped = yield* Effect.fromResult(Messages.grant(first.messages, {
        id: "g1",
        tool: "send_email",
        scope: { conversation: "conv-1" },
        by: "alice",
        at: now,
        expiresAfter: { hours: 1 }
      }))
      yield* store.save("conv-1", scoped)
      yield* store.save("conv-2", scoped)
      const run = (id: string) =>
        Worker.resume(chat, id, (stored) => chat.approve(stored.messages, "c1")).pipe(
          Effect.provideService(ConversationStore.ConversationStore, store)
        )
      const other = yield* run("conv-2")
      expect(waiting(other)).toEqual(["c2"])
      const own = yield* run("conv-1")
      expect(own.outcome._tag).toBe("Complete")
      expect(sent).toEqual(["b@x.com", "b@x.com", "a@x.com"])
    }))
  it.effect("grantedOr asks its fallback: a * grant never settles a call the fallback put under a per-call quorum, nor one it rejects", () =>
    Effect.gen(function*() {
      const Refund = Tool.make("refund", {
        description: "Refund a customer.",
        parameters: { amount: Schema.Number },
        success: Schema.Struct({ refunded: Schema.Number })
      })
      // Large refunds need two of finance; refunds of a million are refused; the rest need a person.
      const refunds = Toolkit.withStrategy(
        Toolkit.make(Refund),
        Grant.grantedOr((call) =>
          call.params.amount >= 1_000_000
            ? Action.Reject({ reason: "Too large." })
            : call.params.amount > 1_000
            ? Action.RequireApproval({ policy: { approve: { roles: ["finance"] }, quorum: 2 } })
            : Effect.succeed(Action.RequireApproval()))
      )
      const refunded: Array<number> = []
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "r0", name: "refund", arguments: { amount: 1 } }]),
        MockLanguageModel.toolCalls([
          { id: "big", name: "refund", arguments: { amount: 5_000 } },
          { id: "small", name: "refund", arguments: { amount: 50 } },
          { id: "huge", name: "refund", arguments: { amount: 1_000_000 } }
        ]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* Chat.make({ tools: refunds }).pipe(
        Effect.provide(Layer.merge(model.layer, refunds.toLayer({ refund: ({ amount }) => Effect.sync(() => (refunded.push(amount), { refunded: amount })) })))
      )
      const first = yield* chat.complete(Messages.fromUser("Refund them."))
      const now = yield* Clock.currentTimeMillis
      const granted = yield* Effect.fromResult(Messages.grant(first.messages, { id: "g-all", tool: "*", by: "alice", at: now, expiresAfter: "1 hour" }))
      const second = yield* chat.resume(yield* chat.approve(granted, "r0"))
      // The small refund ran on alice's grant; the 5,000 waits for two of finance; the million is refused.
      expect(waiting(second)).toEqual(["big"])
      expect(refunded).toEqual([1, 50])
      expect(Messages.findTool(second.messages, "small")!.status).toMatchObject({ _tag: "Completed", decision: { by: "alice", grant: "g-all" } })
      expect(Messages.findTool(second.messages, "big")!.status).toStrictEqual({
        _tag: "AwaitingApproval",
        policy: { approve: { roles: ["finance"] }, quorum: 2 }
      })
      expect(Messages.findTool(second.messages, "huge")!.status).toMatchObject({ _tag: "Rejected", by: "policy" })
      // Alice alone cannot run it either.
      const one = yield* chat.approve(second.messages, "big", undefined, { decider: { id: "alice", roles: ["finance"] } })
      expect(waiting(yield* chat.resume(one))).toEqual(["big"])
      expect(refunded).toEqual([1, 50])
    }))

  it.effect("grantedOr around a reviewed strategy: a grant never settles a call the reviewer sent to a person (refuse, needs-person); the verdict stays on it", () =>
    Effect.gen(function*() {
      // The reviewer answers by the address in the arguments it is shown.
      const verdicts: Record<string, Reviewer.Verdict> = {
        "first@x.com": { verdict: "needs-person", reason: "First mail.", confidence: 0.9 },
        "refuse@x.com": { verdict: "refuse", reason: "Phishing.", confidence: 0.95 },
        "ask@x.com": { verdict: "needs-person", reason: "Unknown address.", confidence: 0.9 },
        "ok@x.com": { verdict: "safe", reason: "Known address.", confidence: 0.95 }
      }
      const textOf = (request: LanguageModel.Request) =>
        request.messages.flatMap((message) => message.parts.flatMap((part) => part._tag === "Text" ? [part.text] : [])).join("\n")
      const reviewer = MockLanguageModel.make((request) => {
        const to = Object.keys(verdicts).find((address) => textOf(request).includes(address))!
        return MockLanguageModel.text(JSON.stringify(verdicts[to]))
      })
      const reviewed = Reviewer.review(Toolkit.withStrategy(Toolkit.make(SendEmail), () => Action.Execute()), { model: reviewer })
      const guarded = Toolkit.withStrategy(Toolkit.make(SendEmail), Grant.grantedOr(reviewed.strategy!))
      const sent: Array<string> = []
      const model = MockLanguageModel.make([
        mail("c0", "first@x.com"),
        MockLanguageModel.toolCalls([
          { id: "c1", name: "send_email", arguments: { to: "refuse@x.com", body: "hi" } },
          { id: "c2", name: "send_email", arguments: { to: "ask@x.com", body: "hi" } },
          { id: "c3", name: "send_email", arguments: { to: "ok@x.com", body: "hi" } }
        ]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* Chat.make({ tools: guarded }).pipe(
        Effect.provide(Layer.merge(model.layer, guarded.toLayer({ send_email: ({ to }) => Effect.sync(() => (sent.push(to), `sent to ${to}`)) })))
      )
      const first = yield* chat.complete(Messages.fromUser("Mail them."))
      expect(waiting(first)).toEqual(["c0"])
      const now = yield* Clock.currentTimeMillis
      const granted = yield* Effect.fromResult(Messages.grant(first.messages, { id: "g-all", tool: "*", by: "alice", at: now, expiresAfter: "1 hour" }))
      const second = yield* chat.resume(yield* chat.approve(granted, "c0"))
      // The confident safe runs as the strategy decided; the grant settles neither flagged call.
      expect(waiting(second)).toEqual(["c1", "c2"])
      expect(sent).toEqual(["first@x.com", "ok@x.com"])
      expect(Messages.findTool(second.messages, "c1")!.status).toStrictEqual({
        _tag: "AwaitingApproval",
        review: { verdict: "refuse", reason: "Phishing.", confidence: 0.95 }
      })
      expect(Reviewer.reviewOf(second.messages, "c2")).toStrictEqual({ verdict: "needs-person", reason: "Unknown address.", confidence: 0.9 })
      expect(Grant.settledBy(Messages.findTool(second.messages, "c3")!)).toBeUndefined()
    }))
})
