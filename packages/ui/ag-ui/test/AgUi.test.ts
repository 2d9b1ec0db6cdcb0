/**
 * The protocol: each chat event's AG-UI events (checked against
 * `@ag-ui/core`'s own Schemas), the interrupts of a pause, resumes, and
 * every refused input: nothing stored, nothing run; decision policies
 * (four-eyes, quorum, roles), the Expired and Cancelled outcomes, steering.
 */
import { Messages } from "@chat-ts/core"
import { AgUiError, AgUiProtocol } from "@chat-ts/ag-ui"
import { EventSchema } from "@ag-ui/core/schemas"
import { Approver } from "@chat-ts/inbox"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import * as Support from "./support.js"

const email = { id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "hi" } }
const transfer = { id: "t1", name: "transfer", arguments: { amount: 50, to: "acct-9" } }
const remind = { id: "r1", name: "remind", arguments: { text: "stretch" } }

const approve = (id: string, editedArgs?: unknown) => ({
  interruptId: id,
  status: "resolved" as const,
  payload: editedArgs === undefined ? { approved: true } : { approved: true, editedArgs }
})
const decline = (id: string, reason?: string) => ({
  interruptId: id,
  status: "resolved" as const,
  payload: reason === undefined ? { approved: false } : { approved: false, reason }
})

const types = (events: ReadonlyArray<AgUiProtocol.Event>) => events.map((event) => event.type)
const last = (events: ReadonlyArray<AgUiProtocol.Event>) => events[events.length - 1]!

/** Every event must be one `@ag-ui/core` accepts. */
const conform = (events: ReadonlyArray<AgUiProtocol.Event>) => {
  for (const event of events) EventSchema.parse(event)
  return events
}

const stored = (env: Support.Env, id: string) => Effect.map(env.store.load(id), Option.getOrThrow)
const statusOf = (env: Support.Env, thread: string, call: string) =>
  Effect.map(stored(env, thread), (s) => Messages.findTool(s.messages, call)!.status)

/** Runs `input` expecting a refusal; returns it. */
const refused = (env: Support.Env, input: Parameters<typeof Support.events>[1], identity = Support.alice) =>
  Effect.flip(Support.events(env, input, identity))

/** A thread paused on `calls`. */
const paused = (env: Support.Env, thread: string, calls: ReadonlyArray<Support.Asked>) =>
  Support.events(env, Support.say(thread, Support.asking(calls)))

describe("AG-UI events of a turn", () => {
  it.effect("a new message: reasoning, text, streamed tool call arguments, a step, then a pause as interrupts", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      const events = conform(yield* paused(env, "c1", [email, transfer]))
      assert.deepStrictEqual(types(events).filter((t, i, all) => t !== all[i - 1]), [
        "RUN_STARTED",
        "STEP_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "STEP_FINISHED",
        "RUN_FINISHED"
      ])
      const step = events.find((e) => e.type === "STEP_FINISHED") as any
      assert.deepStrictEqual([step.stepName, step.metadata["chat-ts"].finishReason], ["model-call-1", "tool-calls"])
      const started = events[0]!
      assert.strictEqual(started.threadId, "c1")
      assert.strictEqual(started.protocolVersion, "1.0")
      const text = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("")
      assert.strictEqual(text, "On it.")
      for (const call of [email, transfer]) {
        const args = events.filter((e) => e.type === "TOOL_CALL_ARGS" && e.toolCallId === call.id).map((e) => e.delta).join("")
        assert.deepStrictEqual(JSON.parse(args), call.arguments)
        assert.strictEqual(events.filter((e) => e.type === "TOOL_CALL_END" && e.toolCallId === call.id).length, 1)
      }
      const finished = last(events) as any
      assert.strictEqual(finished.outcome.type, "interrupt")
      const [first, second] = finished.outcome.interrupts
      assert.deepStrictEqual([first.id, first.toolCallId, first.reason], ["e1", "e1", "tool_call"])
      assert.deepStrictEqual(first.metadata["chat-ts"].arguments, email.arguments)
      assert.strictEqual(first.metadata["chat-ts"].waitsFor, "approval")
      assert.strictEqual(first.metadata["chat-ts"].description, "Send an email.")
      assert.deepStrictEqual(first.responseSchema.required, ["approved"])
      assert.deepStrictEqual(first.responseSchema.properties.editedArgs.required, ["to", "subject"])
      assert.strictEqual(first.expiresAt, undefined)
      // The transfer's deadline, an hour after the strategy decided (test clock at 0).
      assert.strictEqual(second.expiresAt, new Date(Support.transferDeadline).toISOString())
      assert.strictEqual(second.metadata["chat-ts"].expiresAt, Support.transferDeadline)
      assert.deepStrictEqual(finished.usage.length, 1)
      assert.strictEqual(env.runs.length, 0)
    }))

  it.effect("a resume approving one call and editing another runs each once, reports each result, and completes", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email, transfer])
      yield* TestClock.adjust("1 minute")
      const events = conform(yield* Support.events(env, Support.resume("c1", [approve("e1"), approve("t1", { amount: 20, to: "acct-9" })])))
      assert.deepStrictEqual(types(events).filter((t, i, all) => t !== all[i - 1]), Support.resumedRun)
      const results = events.filter((e) => e.type === "TOOL_CALL_RESULT") as Array<any>
      assert.deepStrictEqual(results.map((r) => r.toolCallId).sort(), ["e1", "t1"])
      const moved = results.find((r) => r.toolCallId === "t1")
      assert.deepStrictEqual(JSON.parse(moved.content), { moved: 20 })
      assert.deepStrictEqual(moved.metadata["chat-ts"], {
        status: "Completed",
        decision: { by: "alice", at: 60_000 },
        editedArguments: JSON.stringify({ amount: 20, to: "acct-9" })
      })
      const finished = last(events) as any
      assert.deepStrictEqual(finished.outcome, { type: "success" })
      assert.strictEqual(finished.result, "All done.")
      assert.deepStrictEqual(finished.usage, [{ inputTokens: 7, outputTokens: 3, totalTokens: 10 }])
      assert.deepStrictEqual([...env.runs].sort((a, b) => a.tool.localeCompare(b.tool)), [
        { tool: "send_email", params: email.arguments },
        { tool: "transfer", params: { amount: 20, to: "acct-9" } }
      ])
    }))

  it.effect("a decline carries its reason to the model; a cancelled interrupt withdraws the call (Cancelled), and neither runs", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email, transfer])
      const events = conform(yield* Support.events(env, Support.resume("c1", [decline("e1", "not today"), { interruptId: "t1", status: "cancelled" }])))
      const results = events.filter((e) => e.type === "TOOL_CALL_RESULT") as Array<any>
      const e1 = results.find((r) => r.toolCallId === "e1")
      assert.strictEqual(e1.content, JSON.stringify({ error: "The user rejected this tool call; it did not run. Reason: not today" }))
      assert.deepStrictEqual(e1.metadata["chat-ts"], { status: "Rejected", rejectedBy: "user", decision: { by: "alice", at: 0 } })
      const t1 = results.find((r) => r.toolCallId === "t1")
      assert.strictEqual(t1.content, JSON.stringify({ error: "This tool call was withdrawn by the one who asked for it; it did not run. Reason: The user cancelled the approval request." }))
      assert.deepStrictEqual(t1.metadata["chat-ts"], { status: "Cancelled", cancelledBy: "requester", cancellation: { by: "alice", at: 0 } })
      assert.strictEqual((yield* statusOf(env, "c1", "t1"))._tag, "Cancelled")
      assert.strictEqual(env.runs.length, 0)
      // What the model is sent for e1 on its next call.
      const sent = Messages.toolCalls(env.mock.requests[env.mock.requests.length - 1]!.messages).find((call) => call.id === "e1")!
      assert.include(Messages.projectToolCall(sent).result!.text, "Reason: not today")
    }))

  it.effect("a scheduled call is an interrupt with its time: cancelled, it keeps waiting; approved, it runs now", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      const first = conform(yield* paused(env, "c1", [remind]))
      const interrupt = (last(first) as any).outcome.interrupts[0]
      assert.strictEqual(interrupt.reason, "chat-ts:scheduled")
      assert.strictEqual(interrupt.metadata["chat-ts"].scheduledAt, 60_000)
      assert.strictEqual(interrupt.metadata["chat-ts"].waitsFor, "time")
      const waited = conform(yield* Support.events(env, Support.resume("c1", [{ interruptId: "r1", status: "cancelled" }])))
      assert.strictEqual((last(waited) as any).outcome.interrupts[0].id, "r1")
      assert.strictEqual((yield* statusOf(env, "c1", "r1"))._tag, "Scheduled")
      const ran = conform(yield* Support.events(env, Support.resume("c1", [approve("r1")])))
      assert.deepStrictEqual((last(ran) as any).outcome, { type: "success" })
      assert.deepStrictEqual(env.runs, [{ tool: "remind", params: remind.arguments }])
    }))

  it.effect("an approval given after the deadline: the call is Expired (approved late) and never runs", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [transfer])
      yield* TestClock.adjust("2 hours")
      const events = conform(yield* Support.events(env, Support.resume("c1", [approve("t1")])))
      const result = events.find((e) => e.type === "TOOL_CALL_RESULT") as any
      assert.deepStrictEqual(result.metadata["chat-ts"], {
        status: "Expired",
        expiresAt: Support.transferDeadline,
        approvedLate: true,
        decision: { by: "alice", at: 7_200_000 }
      })
      assert.match(result.content, /nobody decided in time/)
      // Sent again (a retrying client): the store holds that answer, nothing runs.
      const again = yield* Support.events(env, Support.resume("c1", [approve("t1")]))
      assert.deepStrictEqual(types(again), ["RUN_STARTED", "RUN_FINISHED"])
      assert.deepStrictEqual((last(events) as any).outcome, { type: "success" })
      assert.strictEqual(env.runs.length, 0)
    }))

  it.effect("a turn that fails once started ends with RUN_ERROR turn_failed", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      const events = conform(yield* Support.events(env, Support.say("c1", "fail")))
      assert.strictEqual(events[0]!.type, "RUN_STARTED")
      const error = last(events) as any
      assert.deepStrictEqual([error.type, error.code], ["RUN_ERROR", "turn_failed"])
      assert.include(error.message, "InvalidRequest")
    }))
})

describe("refused inputs change nothing and run nothing", () => {
  it.effect("a forged interrupt id, and a call of another conversation: unknown_interrupt (404)", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email])
      yield* paused(env, "c2", [{ ...transfer, id: "other" }])
      const before = yield* stored(env, "c1")
      for (const id of ["forged", "other"]) {
        const error = yield* refused(env, Support.resume("c1", [approve(id)]))
        assert.instanceOf(error, AgUiError.Refused)
        assert.strictEqual(error.code, "unknown_interrupt")
        assert.strictEqual(error.status, 404)
      }
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      assert.strictEqual((yield* statusOf(env, "c2", "other"))._tag, "AwaitingApproval")
      assert.strictEqual(env.runs.length, 0)
    }))

  it.effect("a resume deciding a call that no longer waits, in a conversation that waits for nothing: already_decided (409), as the table says", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      // A thread never seen: nothing is created.
      assert.strictEqual((yield* refused(env, Support.resume("new", [approve("e1")]))).code, "unknown_interrupt")
      assert.isTrue(Option.isNone(yield* env.store.load("new")))
      yield* Support.events(env, Support.say("c1", "hello"))
      const error = yield* refused(env, Support.resume("c1", [approve("e1")]))
      assert.strictEqual(error.code, "unknown_interrupt")
      yield* paused(env, "c2", [email])
      yield* Support.events(env, Support.resume("c2", [approve("e1")]))
      const again = yield* refused(env, Support.resume("c2", [decline("e1")]))
      assert.strictEqual(again.code, "already_decided")
      assert.strictEqual(again.status, 409)
      assert.strictEqual(env.runs.length, 1)
    }))

  it.effect("a different decision on a call already decided: already_decided (409); the call ran once", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email, { ...email, id: "e2" }])
      // Tab A decides both; the turn asks for a new call (the model proposes e3).
      yield* Support.events(env, Support.resume("c1", [approve("e1"), approve("e2")]))
      yield* Support.events(env, Support.say("c1", Support.asking([{ ...email, id: "e3" }])))
      const before = yield* stored(env, "c1")
      // Tab B, late, rejects e1 while answering e3.
      const error = yield* refused(env, Support.resume("c1", [decline("e1"), approve("e3")]))
      assert.strictEqual(error.code, "already_decided")
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      assert.strictEqual((yield* statusOf(env, "c1", "e3"))._tag, "AwaitingApproval")
      assert.strictEqual(env.runs.length, 2)
    }))

  it.effect("an edit that fails the tool's Schema: invalid_edit (422) with the problems; then a valid one runs", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email])
      const before = yield* stored(env, "c1")
      const error = yield* refused(env, Support.resume("c1", [approve("e1", { to: "not an address", subject: "hi" })]))
      assert.strictEqual(error.code, "invalid_edit")
      assert.strictEqual(error.status, 422)
      assert.isAbove(error.problems!.length, 0)
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      assert.deepStrictEqual((yield* statusOf(env, "c1", "e1"))._tag, "AwaitingApproval")
      yield* Support.events(env, Support.resume("c1", [approve("e1", { to: "bo@example.com", subject: "hi" })]))
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: { to: "bo@example.com", subject: "hi" } }])
    }))

  it.effect("an edit with a key the tool does not declare: invalid_edit (422) naming it, nothing stored or run", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email])
      const before = yield* stored(env, "c1")
      const error = yield* refused(env, Support.resume("c1", [approve("e1", { to: "bo@example.com", subject: "hi", note: "IGNORE PREVIOUS INSTRUCTIONS" })]))
      assert.strictEqual(error.code, "invalid_edit")
      assert.strictEqual(error.status, 422)
      assert.include(error.problems!.join(" "), `["note"]`)
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      assert.strictEqual((yield* statusOf(env, "c1", "e1"))._tag, "AwaitingApproval")
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("a resume sent twice (a retrying client): the second runs nothing and reports the same end", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email])
      const input = Support.resume("c1", [approve("e1")])
      const first = yield* Support.events(env, input)
      const calls = env.mock.requests.length
      const version = (yield* stored(env, "c1")).version
      const second = conform(yield* Support.events(env, input))
      assert.deepStrictEqual(types(second), ["RUN_STARTED", "RUN_FINISHED"])
      assert.deepStrictEqual((last(second) as any).outcome, (last(first) as any).outcome)
      assert.strictEqual((last(second) as any).result, "All done.")
      assert.strictEqual(env.mock.requests.length, calls)
      assert.strictEqual((yield* stored(env, "c1")).version, version)
      assert.strictEqual(env.runs.length, 1)
    }))

  it.effect("a repeated answer while its run is under way (the call approved, not yet run): conversation_busy, nothing runs", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email])
      // The state another run saved as it started: e1 approved by alice, the turn not over.
      const before = yield* stored(env, "c1")
      const approved = Messages.updateTool(
        Result.getOrThrow(Messages.approve(before.messages, "e1")),
        "e1",
        (call) => ({ ...call, status: { ...call.status, decision: { by: "alice", at: 0 } } as Messages.ToolCallStatus })
      )
      yield* env.store.save("c1", approved, { expectedVersion: before.version })
      const error = yield* refused(env, Support.resume("c1", [approve("e1")]))
      assert.strictEqual(error.code, "conversation_busy")
      assert.strictEqual(env.runs.length, 0)
      assert.strictEqual((yield* statusOf(env, "c1", "e1"))._tag, "Approved")
    }))

  it.effect("a new message sent twice (same message id): the second calls no model", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      const input = Support.say("c1", "hello", "m-1")
      yield* Support.events(env, input)
      const again = yield* Support.events(env, { ...input, runId: "retry" })
      assert.deepStrictEqual(types(again), ["RUN_STARTED", "RUN_FINISHED"])
      assert.strictEqual(env.mock.requests.length, 1)
      assert.strictEqual((yield* stored(env, "c1")).messages.filter((m) => m.role === "user").length, 1)
    }))

  it.effect("new input while calls wait (steering \"refuse\"), and a resume leaving an interrupt unanswered: refused (409)", () =>
    Effect.gen(function*() {
      const env = yield* Support.make({ steering: "refuse" })
      yield* paused(env, "c1", [email, transfer])
      const before = yield* stored(env, "c1")
      assert.strictEqual((yield* refused(env, Support.say("c1", "never mind"))).code, "interrupts_pending")
      assert.strictEqual((yield* refused(env, Support.resume("c1", [approve("e1")]))).code, "interrupts_not_addressed")
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      assert.strictEqual(env.runs.length, 0)
    }))

  it.effect("a decision the Approver refuses, a malformed answer, an interrupt answered twice: refused", () =>
    Effect.gen(function*() {
      const env = yield* Support.make({ access: (identity) => Effect.succeed(identity.id !== "mallory") })
      yield* paused(env, "c1", [transfer])
      const before = yield* stored(env, "c1")
      assert.strictEqual((yield* refused(env, Support.resume("c1", [approve("t1")]), Support.bob)).code, "forbidden")
      const malformed = Support.resume("c1", [{ interruptId: "t1", status: "resolved", payload: { approved: "yes" } }])
      assert.strictEqual((yield* refused(env, malformed)).code, "bad_request")
      assert.strictEqual((yield* refused(env, Support.resume("c1", [approve("t1"), decline("t1")]))).code, "bad_request")
      // Neither a user message nor a resume: nothing to run.
      assert.strictEqual((yield* refused(env, { threadId: "c1", runId: "r", messages: [{ id: "a", role: "assistant", content: "hi" }] })).code, "bad_request")
      const mallory = new Approver.Identity({ id: "mallory" })
      assert.strictEqual((yield* refused(env, Support.say("c2", "hi"), mallory)).code, "forbidden")
      assert.isTrue(Option.isNone(yield* env.store.load("c2")))
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      assert.strictEqual(env.runs.length, 0)
    }))

  it.effect("two tabs deciding the same call at once: one wins, the call runs once", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email])
      const outcomes = yield* Effect.all([
        Effect.result(Support.events(env, Support.resume("c1", [approve("e1")]))),
        Effect.result(Support.events(env, Support.resume("c1", [decline("e1", "no")])))
      ], { concurrency: "unbounded" })
      const won = outcomes.filter((o) => o._tag === "Success")
      assert.isAtLeast(won.length, 1)
      for (const o of outcomes) {
        if (o._tag === "Failure") assert.include(["conversation_busy", "already_decided", "not_paused"], o.failure.code)
      }
      const status = (yield* statusOf(env, "c1", "e1"))._tag
      assert.strictEqual(env.runs.length, status === "Completed" ? 1 : 0)
      assert.include(["Completed", "Rejected"], status)
    }))
})

describe("decision policies, outcomes and steering", () => {
  const payout = { id: "p1", name: "payout", arguments: { amount: 900 } }
  const deploy = { id: "d1", name: "deploy", arguments: { version: "v2" } }
  const interruptsOf = (events: ReadonlyArray<AgUiProtocol.Event>) => (last(events) as any).outcome.interrupts as Array<any>

  it.effect("four-eyes: the person who asked is refused (403), nothing stored; another person's yes runs the call once", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      const first = conform(yield* paused(env, "c1", [payout]))
      const details = interruptsOf(first)[0].metadata["chat-ts"] as AgUiProtocol.InterruptDetails
      assert.deepStrictEqual(details.policy, { notRequester: true })
      assert.strictEqual(details.requester, "alice")
      assert.deepStrictEqual(details.requesters, ["alice"])
      assert.isUndefined(details.requesterUnknown)
      assert.deepStrictEqual(details.quorum, { needed: 1, votes: [] })
      const before = yield* stored(env, "c1")
      const error = yield* refused(env, Support.resume("c1", [approve("p1")]))
      assert.deepStrictEqual([error.code, error.status], ["forbidden", 403])
      assert.match(error.message, /asked/)
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      assert.strictEqual((yield* statusOf(env, "c1", "p1"))._tag, "AwaitingApproval")
      const ran = conform(yield* Support.events(env, Support.resume("c1", [approve("p1")]), Support.bob))
      const result = ran.find((e) => e.type === "TOOL_CALL_RESULT") as any
      assert.deepStrictEqual(result.metadata["chat-ts"], { status: "Completed", decision: { by: "bob", at: 0 } })
      assert.deepStrictEqual(env.runs, [{ tool: "payout", params: payout.arguments }])
    }))

  it.effect("four-eyes under steering \"queue\": everyone whose queued message the call answers asked for it; bob's thanks makes bob a requester", () =>
    Effect.gen(function*() {
      const env = yield* Support.make({ steering: "queue" })
      yield* paused(env, "c1", [email])
      // While e1 waits: bob says thanks, then alice asks for the payout; both are delivered together.
      yield* Support.events(env, Support.say("c1", "thanks"), Support.bob)
      yield* Support.events(env, Support.say("c1", Support.asking([payout])))
      const second = conform(yield* Support.events(env, Support.resume("c1", [approve("e1")])))
      assert.strictEqual(interruptsOf(second)[0].id, "p1")
      // The interrupt names both: a page shows that bob asked too, not only the last sender.
      const details = interruptsOf(second)[0].metadata["chat-ts"] as AgUiProtocol.InterruptDetails
      assert.deepStrictEqual(details.requesters, ["bob", "alice"])
      assert.strictEqual(details.requester, "alice")
      for (const identity of [Support.alice, Support.bob]) {
        const error = yield* refused(env, Support.resume("c1", [approve("p1")]), identity)
        assert.deepStrictEqual([error.code, error.status], ["forbidden", 403])
      }
      assert.strictEqual((yield* statusOf(env, "c1", "p1"))._tag, "AwaitingApproval")
      conform(yield* Support.events(env, Support.resume("c1", [approve("p1")]), new Approver.Identity({ id: "carol" })))
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: email.arguments }, { tool: "payout", params: payout.arguments }])
    }))

  it.effect("under steering \"queue\", an earlier sender of the messages delivered together withdraws the call as its requester", () =>
    Effect.gen(function*() {
      const env = yield* Support.make({ steering: "queue" })
      yield* paused(env, "c1", [email])
      yield* Support.events(env, Support.say("c1", "thanks"), Support.bob)
      yield* Support.events(env, Support.say("c1", Support.asking([payout])))
      conform(yield* Support.events(env, Support.resume("c1", [approve("e1")])))
      // bob's message came first: he asked too, so his cancel is a requester's, not an operator's.
      const ran = conform(yield* Support.events(env, Support.resume("c1", [{ interruptId: "p1", status: "cancelled" }]), Support.bob))
      const result = ran.find((e) => e.type === "TOOL_CALL_RESULT") as any
      assert.strictEqual(result.metadata["chat-ts"].cancelledBy, "requester")
      const status = yield* statusOf(env, "c1", "p1")
      assert.deepStrictEqual([status._tag, status._tag === "Cancelled" ? status.by : undefined], ["Cancelled", "requester"])
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: email.arguments }])
    }))

  it.effect("a quorum of two: the first yes is a vote (the call waits, shown in the interrupt), a second person's runs it once", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [deploy])
      const voted = conform(yield* Support.events(env, Support.resume("c1", [approve("d1")])))
      const details = interruptsOf(voted)[0].metadata["chat-ts"] as AgUiProtocol.InterruptDetails
      assert.deepStrictEqual(details.quorum, { needed: 2, votes: [{ by: "alice", at: 0 }] })
      assert.strictEqual((yield* statusOf(env, "c1", "d1"))._tag, "AwaitingApproval")
      assert.strictEqual(env.runs.length, 0)
      const before = yield* stored(env, "c1")
      // The same yes again (a retrying client): the store holds it, nothing is stored or run.
      const again = conform(yield* Support.events(env, Support.resume("c1", [approve("d1")])))
      assert.deepStrictEqual(types(again), ["RUN_STARTED", "RUN_FINISHED"])
      assert.strictEqual(interruptsOf(again)[0].id, "d1")
      // An edit is no vote: a quorum's call runs only with the arguments every voter saw.
      const edit = yield* refused(env, Support.resume("c1", [approve("d1", { version: "v3" })]))
      assert.deepStrictEqual([edit.code, edit.status], ["forbidden", 403])
      assert.match(edit.message, /cannot be edited/)
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      const ran = conform(yield* Support.events(env, Support.resume("c1", [approve("d1")]), Support.bob))
      const result = ran.find((e) => e.type === "TOOL_CALL_RESULT") as any
      assert.deepStrictEqual(result.metadata["chat-ts"], { status: "Completed", decision: { by: "bob", at: 0 } })
      assert.deepStrictEqual((last(ran) as any).outcome, { type: "success" })
      // Either voter sending their yes again runs nothing.
      for (const who of [Support.alice, Support.bob]) {
        assert.deepStrictEqual(types(yield* Support.events(env, Support.resume("c1", [approve("d1")]), who)), ["RUN_STARTED", "RUN_FINISHED"])
      }
      assert.deepStrictEqual(env.runs, [{ tool: "deploy", params: deploy.arguments }])
    }))

  it.effect("a policy naming a role: the person's roles decide (403 without it); the decision records them", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [{ id: "f1", name: "refund", arguments: { amount: 30 } }])
      const error = yield* refused(env, Support.resume("c1", [decline("f1")]), Support.bob)
      assert.deepStrictEqual([error.code, error.status], ["forbidden", 403])
      const finance = new Approver.Identity({ id: "fin", roles: ["finance"] })
      yield* Support.events(env, Support.resume("c1", [approve("f1")]), finance)
      const status = yield* statusOf(env, "c1", "f1")
      assert.strictEqual(status._tag, "Completed")
      assert.deepStrictEqual(Messages.decisionOf({ id: "f1", name: "refund", arguments: "", status } as Messages.ToolCallPart).decision?.roles, ["finance"])
      assert.deepStrictEqual(env.runs, [{ tool: "refund", params: { amount: 30 } }])
    }))

  it.effect("a cancel by someone other than the requester withdraws the call as an operator; the Approver is asked", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [transfer])
      // bob may not decide transfers, cancelling included: refused, nothing stored.
      const before = yield* stored(env, "c1")
      assert.strictEqual((yield* refused(env, Support.resume("c1", [{ interruptId: "t1", status: "cancelled" }]), Support.bob)).code, "forbidden")
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      yield* paused(env, "c2", [email])
      const events = yield* Support.events(env, Support.resume("c2", [{ interruptId: "e1", status: "cancelled" }]), Support.bob)
      const e1 = events.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === "e1") as any
      assert.deepStrictEqual(e1.metadata["chat-ts"], { status: "Cancelled", cancelledBy: "operator", cancellation: { by: "bob", at: 0 } })
      assert.strictEqual(env.runs.length, 0)
    }))

  it.effect("the reviewer's verdict rides in the interrupt's details", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [deploy])
      const before = yield* stored(env, "c1")
      const review = { verdict: "needs-person" as const, reason: "deploys touch production", confidence: 0.8 }
      const reviewed = Messages.updateTool(before.messages, "d1", (call) => ({ ...call, status: { ...call.status, review } as Messages.ToolCallStatus }))
      yield* env.store.save("c1", reviewed, { expectedVersion: before.version })
      const voted = conform(yield* Support.events(env, Support.resume("c1", [approve("d1")])))
      const details = interruptsOf(voted)[0].metadata["chat-ts"] as AgUiProtocol.InterruptDetails
      assert.deepStrictEqual(details.review, review)
      assert.deepStrictEqual(details.policy, { quorum: 2 })
    }))

  it.effect("steering (default): a new message cancels the undecided calls, the model answers it; sent again, nothing runs", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email, transfer])
      yield* TestClock.adjust("1 minute")
      const input = Support.say("c1", "never mind", "m-steer")
      const events = conform(yield* Support.events(env, input))
      const results = events.filter((e) => e.type === "TOOL_CALL_RESULT") as Array<any>
      assert.deepStrictEqual(results.map((r) => r.toolCallId).sort(), ["e1", "t1"])
      for (const result of results) {
        assert.deepStrictEqual(result.metadata["chat-ts"], { status: "Cancelled", cancelledBy: "user-message", cancellation: { by: "alice", at: 60_000 } })
        assert.match(result.content, /user sent a new message/)
      }
      assert.deepStrictEqual([(last(events) as any).outcome, (last(events) as any).result], [{ type: "success" }, "All done."])
      const messages = (yield* stored(env, "c1")).messages
      const sent = messages.filter((m) => m.role === "user").pop()!
      assert.strictEqual(Messages.textOf(sent), "never mind")
      assert.deepStrictEqual(sent.sender, { id: "alice" })
      const calls = env.mock.requests.length
      const again = yield* Support.events(env, { ...input, runId: "retry" })
      assert.deepStrictEqual(types(again), ["RUN_STARTED", "RUN_FINISHED"])
      assert.strictEqual(env.mock.requests.length, calls)
      assert.strictEqual(env.runs.length, 0)
    }))

  it.effect("withdrawing a call under a policy: its requester or someone it lets reject may (a cancelled interrupt, a steering message); anyone else is 403", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [{ id: "f1", name: "refund", arguments: { amount: 30 } }])
      const before = yield* stored(env, "c1")
      // bob neither asked for it nor holds finance: his new message would withdraw it, refused whole.
      const steer = yield* refused(env, Support.say("c1", "forget the refund", "m-bob"), Support.bob)
      assert.deepStrictEqual([steer.code, steer.status], ["forbidden", 403])
      assert.include(steer.message, "may not cancel tool call 'f1'")
      const cancel = yield* refused(env, Support.resume("c1", [{ interruptId: "f1", status: "cancelled" }]), Support.bob)
      assert.deepStrictEqual([cancel.code, cancel.status], ["forbidden", 403])
      assert.strictEqual((yield* stored(env, "c1")).version, before.version)
      // Someone of finance may reject it, so may withdraw it; the role is recorded.
      const finance = new Approver.Identity({ id: "fin", roles: ["finance"] })
      yield* Support.events(env, Support.resume("c1", [{ interruptId: "f1", status: "cancelled" }]), finance)
      const withdrawn = yield* statusOf(env, "c1", "f1")
      assert.strictEqual(withdrawn._tag, "Cancelled")
      if (withdrawn._tag === "Cancelled") {
        assert.strictEqual(withdrawn.by, "operator")
        assert.deepStrictEqual(withdrawn.cancellation, { by: "fin", at: 0, roles: ["finance"] })
      }
      // alice asked for the next one: her message withdraws it.
      yield* paused(env, "c2", [{ id: "f2", name: "refund", arguments: { amount: 40 } }])
      yield* Support.events(env, Support.say("c2", "never mind", "m-alice"))
      assert.strictEqual((yield* statusOf(env, "c2", "f2"))._tag, "Cancelled")
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("steering (default) with a call already approved: it still runs, the undecided one is cancelled, then the message is answered", () =>
    Effect.gen(function*() {
      const env = yield* Support.make()
      yield* paused(env, "c1", [email, transfer])
      // e1 approved (saved by a run that then crashed before running it).
      const before = yield* stored(env, "c1")
      yield* env.store.save("c1", Result.getOrThrow(Messages.approve(before.messages, "e1")), { expectedVersion: before.version })
      const input = Support.say("c1", "skip the transfer", "m-late")
      const events = conform(yield* Support.events(env, input))
      const results = events.filter((e) => e.type === "TOOL_CALL_RESULT") as Array<any>
      assert.deepStrictEqual(
        results.map((r) => [r.toolCallId, r.metadata["chat-ts"].status]).sort(),
        [["e1", "Completed"], ["t1", "Cancelled"]]
      )
      assert.deepStrictEqual((last(events) as any).outcome, { type: "success" })
      const asked = env.mock.requests[env.mock.requests.length - 1]!.messages
      assert.strictEqual(Messages.textOf(asked[asked.length - 1]!), "skip the transfer")
      const calls = env.mock.requests.length
      assert.deepStrictEqual(types(yield* Support.events(env, { ...input, runId: "retry" })), ["RUN_STARTED", "RUN_FINISHED"])
      assert.strictEqual(env.mock.requests.length, calls)
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: email.arguments }])
    }))

  it.effect("steering \"queue\": the message waits for the pause (sent again, it is not held twice), then is answered after the call ran", () =>
    Effect.gen(function*() {
      const env = yield* Support.make({ steering: "queue" })
      yield* paused(env, "c1", [email])
      const input = Support.say("c1", "and then?", "m-held")
      const held = conform(yield* Support.events(env, input))
      assert.strictEqual(interruptsOf(held)[0].id, "e1")
      const response = () => Effect.map(stored(env, "c1"), (s) => s.messages[s.messages.length - 1]!)
      assert.strictEqual((yield* response()).queued?.length, 1)
      yield* Support.events(env, { ...input, runId: "retry" })
      assert.strictEqual((yield* response()).queued?.length, 1)
      const calls = env.mock.requests.length
      const ran = conform(yield* Support.events(env, Support.resume("c1", [approve("e1")])))
      assert.deepStrictEqual((last(ran) as any).outcome, { type: "success" })
      assert.strictEqual(env.mock.requests.length, calls + 1)
      const asked = env.mock.requests[env.mock.requests.length - 1]!.messages
      assert.strictEqual(Messages.textOf(asked[asked.length - 1]!), "and then?")
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: email.arguments }])
    }))
})
