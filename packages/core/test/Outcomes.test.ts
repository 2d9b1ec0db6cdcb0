/**
 * Rejected, Expired and Cancelled are three outcomes (issue 26, item 2): each its own status, its
 * own text for the model and its own audit record; a caller's own wait timing out is none of them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Result, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Action, Chat, ChatError, ConversationStore, Messages, Tool, Toolkit, Turn, Worker } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { call, conversation, expectOutcome, left, response, right, statusOf, step, T0 } from "./support/fixtures.js"

const { Event } = Turn

const alice: Messages.Decision = { by: "alice", at: T0 }
const ops: Messages.Decision = { by: "ops-bob", at: T0 + 5 }

/** The text the model reads for a call that did not run (its result is `{ error }`). */
const textOf = (messages: Messages.Messages, id: string): string =>
  (Messages.projectToolCall(Messages.findTool(messages, id)!).result!.value as { readonly error: string }).error

describe("Messages.cancel", () => {
  const paused = () =>
    conversation(response([
      call("asking", { _tag: "AwaitingApproval", expiresAt: T0 + 1000 }),
      call("scheduled", { _tag: "Scheduled", at: T0 + 5000 }),
      call("approved", { _tag: "Approved", decision: alice }),
      call("running", { _tag: "Running" }),
      call("proposed", { _tag: "Proposed" }),
      call("done", { _tag: "Completed", result: 1 })
    ]))

  it("withdraws a call awaiting approval, scheduled or approved: it becomes Cancelled, with who and why", () => {
    for (const id of ["asking", "scheduled", "approved"]) {
      const next = right(Messages.cancel(paused(), id, { by: "operator", reason: "Duplicate request.", cancellation: ops }))
      expect(statusOf(next, id)).toStrictEqual({
        _tag: "Cancelled",
        by: "operator",
        reason: "Duplicate request.",
        cancellation: ops,
        ...(id === "approved" ? { decision: alice } : {})
      })
      expect(Messages.isResolved(Messages.findTool(next, id)!)).toBe(true)
      expect(textOf(next, id)).toBe("This tool call was cancelled by an operator; it did not run. Reason: Duplicate request.")
    }
  })

  it("defaults to the requester, and says so to the model", () => {
    const next = right(Messages.cancel(paused(), "asking"))
    expect(statusOf(next, "asking")).toStrictEqual({ _tag: "Cancelled", by: "requester" })
    expect(textOf(next, "asking")).toBe("This tool call was withdrawn by the one who asked for it; it did not run.")
    const dataLast = right(Messages.cancel("asking", { reason: "changed my mind" })(paused()))
    expect(textOf(dataLast, "asking")).toContain("Reason: changed my mind")
  })

  it("refuses a call that is proposed, running, resolved or unknown, with the messages unchanged", () => {
    const before = paused()
    expect(left(Messages.cancel(before, "proposed"))).toBeInstanceOf(ChatError.ToolCallNotAwaitingDecision)
    expect(left(Messages.cancel(before, "running"))).toMatchObject({ _tag: "ToolCallAlreadyResolved", status: "Running" })
    expect(left(Messages.cancel(before, "done"))).toMatchObject({ _tag: "ToolCallAlreadyResolved", status: "Completed" })
    expect(left(Messages.cancel(before, "__proto__"))).toBeInstanceOf(ChatError.UnknownToolCall)
    const cancelled = right(Messages.cancel(before, "asking"))
    // Cancelled twice: the second is refused, the first stays.
    expect(left(Messages.cancel(cancelled, "asking"))).toMatchObject({ _tag: "ToolCallAlreadyResolved", status: "Cancelled" })
    expect(left(Messages.approve(cancelled, "asking"))).toMatchObject({ _tag: "ToolCallAlreadyResolved", status: "Cancelled" })
    expect(left(Messages.reject(cancelled, "asking"))).toMatchObject({ _tag: "ToolCallAlreadyResolved", status: "Cancelled" })
  })

  it("a cancelled call never starts, whatever else the resume starts", () => {
    const next = right(Messages.cancel(paused().map((m) => ({ ...m, parts: m.parts.filter((p) => p._tag !== "ToolCall" || p.id !== "proposed") })), "approved"))
    const [after, outcome] = step(next, Event.Resume({ now: T0 + 10_000 }))
    // The scheduled call is due and starts; the cancelled one is never started.
    expect(expectOutcome(outcome, "RunTools").calls.map((c) => c.id)).toEqual(["scheduled"])
    expect(statusOf(after, "approved")._tag).toBe("Cancelled")
  })
})

describe("the three outcomes, apart", () => {
  const waiting = conversation(response([
    call("no", { _tag: "AwaitingApproval", expiresAt: T0 + 1000 }),
    call("late", { _tag: "AwaitingApproval", expiresAt: T0 + 1000 }),
    call("gone", { _tag: "AwaitingApproval", expiresAt: T0 + 1000 })
  ]))

  it("each has its own status, its own text for the model and its own audit record", () => {
    const rejected = right(Messages.reject(waiting, "no", "Too expensive."))
    const withdrawn = right(Messages.cancel(rejected, "gone", { by: "requester", reason: "Not needed.", cancellation: ops }))
    const [after, outcome] = step(withdrawn, Event.Resume({ now: T0 + 1000 }))
    expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
    expect(statusOf(after, "no")).toStrictEqual({ _tag: "Rejected", by: "user", reason: "Too expensive." })
    expect(statusOf(after, "late")).toStrictEqual({ _tag: "Expired", expiresAt: T0 + 1000 })
    expect(statusOf(after, "gone")).toStrictEqual({ _tag: "Cancelled", by: "requester", reason: "Not needed.", cancellation: ops })
    const texts = ["no", "late", "gone"].map((id) => textOf(after, id))
    expect(texts[0]).toBe("The user rejected this tool call; it did not run. Reason: Too expensive.")
    expect(texts[1]).toContain("nobody decided in time")
    expect(texts[2]).toContain("withdrawn")
    expect(new Set(texts).size).toBe(3)
    // The audit records stay in the state and never reach the model.
    expect(JSON.stringify(Messages.toolCalls(after).map(Messages.projectToolCall))).not.toContain("ops-bob")
    // The stored form keeps them apart, and reads back the same.
    expect(right(Messages.fromJson(right(Messages.toJson(after))))).toStrictEqual(after)
  })

  it("a rejection by policy stays a rejection (a strategy's Reject is not an expiry)", () => {
    const [next] = step(
      conversation(response([call("a")])),
      Event.Decided({ now: T0, decisions: [{ id: "a", decision: Turn.Decision.Reject({ reason: "not on Sundays" }) }] })
    )
    expect(statusOf(next, "a")).toStrictEqual({ _tag: "Rejected", by: "policy", reason: "not on Sundays" })
  })

  it("before the deadline nothing changes: the call still awaits approval", () => {
    const [next, outcome] = step(waiting, Event.Resume({ now: T0 + 999 }))
    expect(expectOutcome(outcome, "Pause").reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["no", "late", "gone"] })
    expect(next).toBe(waiting)
  })

  it("a 0.1 document with a call rejected by policy after its deadline keeps meaning what it meant", () => {
    // What 0.1's reducer wrote for an expired approval request.
    const document = {
      format: "chat-ts/messages",
      version: 1,
      messages: [
        { role: "user", parts: [{ _tag: "Text", text: "Pay it." }] },
        {
          role: "assistant",
          parts: [{
            _tag: "ToolCall",
            id: "c1",
            name: "pay",
            arguments: "{}",
            status: { _tag: "Rejected", by: "policy", reason: "The approval request expired at 2025-01-01T00:00:01.000Z without a decision." }
          }]
        }
      ]
    }
    const messages = right(Messages.decode(document))
    expect(statusOf(messages, "c1")._tag).toBe("Rejected")
    expect(textOf(messages, "c1")).toBe(
      "This tool call was rejected by policy; it did not run. Reason: The approval request expired at 2025-01-01T00:00:01.000Z without a decision."
    )
    const [, outcome] = step(messages, Event.Resume({ now: T0 }))
    expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
  })

  it("a stored cancellation by a `by` this version does not know is refused by the Schema", () => {
    const bad = {
      format: "chat-ts/messages",
      version: 1,
      messages: [{ role: "assistant", parts: [{ _tag: "ToolCall", id: "c", name: "t", arguments: "{}", status: { _tag: "Cancelled", by: "__proto__" } }] }]
    }
    expect(left(Messages.decode(bad))).toBeInstanceOf(ChatError.StateDecodeError)
  })
})

const Pay = Tool.make("pay", {
  description: "Pay a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number })
})
const payments = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.RequireApproval({ expiresAt: 3_600_000 }))

describe("a caller's own wait timing out", () => {
  it.effect("is none of the three: the call stays pending in the store, with its deadline", () =>
    Effect.gen(function*() {
      const paid: Array<number> = []
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { amount: 5 } }]),
        MockLanguageModel.text("Paid.")
      ])
      const chat = yield* Chat.make({ tools: payments }).pipe(Effect.provide(Layer.merge(
        model.layer,
        payments.toLayer({ pay: ({ amount }) => Effect.sync(() => (paid.push(amount), { paid: amount })) })
      )))
      const store = yield* ConversationStore.ConversationStore
      const first = yield* chat.complete(Messages.fromUser("Pay 5."))
      yield* store.save("conv", first.messages, { expectedVersion: 0 })
      // A worker waits for a person who never answers, and gives up after a minute.
      const never = yield* Deferred.make<Messages.Messages>()
      const waited = yield* Worker.resume(chat, "conv", () => Deferred.await(never)).pipe(
        Effect.timeoutOption("1 minute"),
        Effect.forkChild
      )
      yield* TestClock.adjust("1 minute")
      expect(Option.isNone(yield* Fiber.join(waited))).toBe(true)
      const stored = Option.getOrThrow(yield* store.load("conv"))
      expect(statusOf(stored.messages, "p1")).toStrictEqual({ _tag: "AwaitingApproval", expiresAt: 3_600_000 })
      expect(paid).toEqual([])
      // The lease was given back: a person's approval still counts.
      const done = yield* Worker.resume(chat, "conv", (s) => Effect.fromResult(Messages.approve(s.messages, "p1")))
      expect(done.outcome._tag).toBe("Complete")
      expect(paid).toEqual([5])
      expect(Result.isSuccess(Messages.toJson(done.messages))).toBe(true)
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})
