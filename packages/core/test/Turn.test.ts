import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Messages from "../src/turn/Messages.js"
import type { Message } from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"
import {
  call,
  conversation,
  deepFreeze,
  expectOutcome,
  response,
  right,
  snapshot,
  statusOf,
  step,
  T0
} from "./support/fixtures.js"

const { Decision, Event } = Turn

const config = (overrides: Partial<Turn.Config> = {}): Turn.Config => ({ ...Turn.defaultConfig, ...overrides })

const usage1 = { inputTokens: 10, outputTokens: 5 }
const usage2 = { inputTokens: 20, outputTokens: 7, reasoningTokens: 3 }

/** A conversation whose last response proposes these calls (all `Proposed`). */
const proposing = (...ids: ReadonlyArray<string>): Messages.Messages =>
  conversation(response(ids.map((id) => call(id)), usage1))

/** Asserts that stepping leaves the (frozen) messages exactly as they were. */
const expectUnchanged = (before: Messages.Messages, after: Messages.Messages): void => {
  expect(after).toStrictEqual(snapshot(before))
}

describe("deepFreeze (the guard of every test here)", () => {
  it("makes any write to nested input data throw", () => {
    const messages = deepFreeze([Messages.user("x"), response([call("a", { _tag: "Running" })])])
    expect(() => {
      ;(messages as Array<Message>).push(Messages.user("y"))
    }).toThrow(TypeError)
    expect(() => {
      ;(messages[1]!.parts[0] as { status: unknown }).status = { _tag: "Completed", result: 1 }
    }).toThrow(TypeError)
    expect(() => {
      ;(messages[1]!.parts[0] as { status: { _tag: string } }).status._tag = "Completed"
    }).toThrow(TypeError)
  })
})

describe("Turn's public face", () => {
  it("exports the pure reducer and its types, not the shells' positioned step", async () => {
    const published = await import("../src/index.js")
    for (const module of [Turn, published.Turn]) {
      expect(Object.keys(module)).not.toContain("stepAt")
      expect(Object.keys(module)).not.toContain("positionOf")
      expect(Object.keys(module)).not.toContain("door")
      expect(typeof module.step).toBe("function")
      expect(typeof module.run).toBe("function")
    }
  })

  it("Stepping.stepAt, the shells' door, gives what Turn.step gives", async () => {
    const Stepping = await import("../src/turn/Stepping.js")
    const start = Messages.fromUser("Hi")
    const event = Event.Resume({ now: T0 })
    const [messages, outcome, position] = Stepping.stepAt(start, event)
    expect([messages, outcome]).toStrictEqual(Turn.step(start, event))
    expect(position.of).toBe(messages)
  })
})

describe("Turn.step", () => {
  describe("Resume", () => {
    it("calls the model with step 1 on a fresh turn and changes nothing", () => {
      const messages = conversation()
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }))
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 1 }))
      expectUnchanged(messages, next)
    })

    it("numbers model calls by the responses of the current turn only", () => {
      const messages = deepFreeze([
        Messages.user("earlier"),
        response([call("old", { _tag: "Completed", result: 1 })]),
        response([Messages.text("earlier answer")]),
        Messages.user("now"),
        response([call("a", { _tag: "Completed", result: 1 })]),
        response([call("b", { _tag: "Rejected", by: "user" })])
      ])
      const [, outcome] = step(messages, Event.Resume({ now: T0 }))
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 3 }))
    })

    it("runs approved calls without asking the strategies again", () => {
      const messages = conversation(response([call("a", { _tag: "Approved" }), call("b", { _tag: "Completed", result: 1 })]))
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }))
      const run = expectOutcome(outcome, "RunTools")
      expect(run.calls.map((c) => c.id)).toEqual(["a"])
      expect(run.calls[0]!.status).toEqual({ _tag: "Running" })
      expect(statusOf(next, "a")).toEqual({ _tag: "Running" })
      expect(statusOf(next, "b")).toEqual({ _tag: "Completed", result: 1 })
    })

    it("runs approved calls with their edited arguments and keeps them after completion", () => {
      const edited = JSON.stringify({ path: "/tmp/safe" })
      const messages = conversation(
        response([call("a", { _tag: "Approved", editedArguments: edited }, { arguments: "{\"path\":\"/\"}" })])
      )
      const [running, outcome] = step(messages, Event.Resume({ now: T0 }))
      const run = expectOutcome(outcome, "RunTools")
      expect(Messages.effectiveArguments(run.calls[0]!)).toBe(edited)
      expect(run.calls[0]!.arguments).toBe("{\"path\":\"/\"}")

      const [done, next] = step(running, Event.ToolSucceeded({ id: "a", result: { deleted: 0 } }))
      expect(next).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      const completed = Messages.findTool(done, "a")!
      expect(completed.status).toEqual({ _tag: "Completed", result: { deleted: 0 }, editedArguments: edited })
      expect(Messages.effectiveArguments(completed)).toBe(edited)
      expect(Messages.projectToolCall(completed).arguments).toBe(edited)
    })

    it("keeps edited arguments when an edited call fails", () => {
      const edited = "{\"n\":2}"
      const messages = conversation(response([call("a", { _tag: "Running", editedArguments: edited })]))
      const [next] = step(messages, Event.ToolFailed({ id: "a", error: "boom" }))
      expect(statusOf(next, "a")).toEqual({ _tag: "Failed", error: "boom", editedArguments: edited })
    })

    it("reports invalid edits, runs nothing and puts the refused calls back to awaiting approval", () => {
      const messages = conversation(
        response([
          call("a", { _tag: "Approved", editedArguments: "{\"n\":\"x\"}" }, { name: "count" }),
          call("b", { _tag: "Approved" }),
          call("c", { _tag: "Running" })
        ])
      )
      const [next, outcome] = step(
        messages,
        Event.Resume({ now: T0, invalidEdits: [{ id: "a", detail: "n: expected a number" }] })
      )
      expect(outcome).toEqual(
        Turn.Outcome.InvalidEdits({ edits: [{ id: "a", detail: "n: expected a number", name: "count" }] })
      )
      // Only the refused call changed: it waits for a new decision; the others are as they were (nothing started).
      expect(Messages.findTool(next, "a")?.status).toEqual({ _tag: "AwaitingApproval" })
      expect(Messages.findTool(next, "b")?.status).toEqual({ _tag: "Approved" })
      expect(Messages.findTool(next, "c")?.status).toEqual({ _tag: "Running" })
      // The person can decide again from these messages.
      expect(Result.isSuccess(Messages.approve(next, "a", { n: 1 }))).toBe(true)
    })

    it("ignores reported invalid edits of calls that have no edited arguments", () => {
      const messages = conversation(response([call("a", { _tag: "Approved" })]))
      const [, outcome] = step(
        messages,
        Event.Resume({ now: T0, invalidEdits: [{ id: "a", detail: "?" }, { id: "nope", detail: "?" }] })
      )
      expect(expectOutcome(outcome, "RunTools").calls.map((c) => c.id)).toEqual(["a"])
    })

    it("records a call left Running (by a crash) as failed and never runs it again", () => {
      const edited = "{\"x\":1}"
      const messages = conversation(
        response([call("a", { _tag: "Running", editedArguments: edited }), call("b", { _tag: "Completed", result: 2 })])
      )
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }))
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      const status = statusOf(next, "a")
      expect(status._tag).toBe("Failed")
      expect(status).toMatchObject({ editedArguments: edited })
      expect(String((status as { error: unknown }).error)).toMatch(/interrupted/)
      // Resuming again leaves the failure alone.
      const [again, outcome2] = step(next, Event.Resume({ now: T0 + 1 }))
      expect(outcome2).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      expect(again).toStrictEqual(snapshot(next))
    })

    it("fails a stale running call and still pauses for the calls awaiting approval", () => {
      const messages = conversation(response([call("a", { _tag: "Running" }), call("b", { _tag: "AwaitingApproval" })]))
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }))
      expect(statusOf(next, "a")._tag).toBe("Failed")
      expect(expectOutcome(outcome, "Pause").reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["b"] })
    })

    it("keeps a scheduled call paused before its time and runs it once due", () => {
      const at = T0 + 60_000
      const messages = conversation(response([call("a", { _tag: "Scheduled", at })], usage1))

      const [early, notYet] = step(messages, Event.Resume({ now: at - 1 }))
      expect(notYet).toEqual(
        Turn.Outcome.Pause({ reason: { _tag: "Scheduled", toolIds: ["a"], earliest: at }, usage: usage1 })
      )
      expectUnchanged(messages, early)

      const [due, outcome] = step(messages, Event.Resume({ now: at }))
      expect(expectOutcome(outcome, "RunTools").calls.map((c) => c.id)).toEqual(["a"])
      expect(statusOf(due, "a")).toEqual({ _tag: "Running" })
    })

    it("runs only the scheduled calls that are due", () => {
      const messages = conversation(
        response([call("a", { _tag: "Scheduled", at: T0 + 10 }), call("b", { _tag: "Scheduled", at: T0 + 20 })])
      )
      const [next, outcome] = step(messages, Event.Resume({ now: T0 + 15 }))
      expect(expectOutcome(outcome, "RunTools").calls.map((c) => c.id)).toEqual(["a"])
      expect(statusOf(next, "b")).toEqual({ _tag: "Scheduled", at: T0 + 20 })
      const [, after] = step(next, Event.ToolSucceeded({ id: "a", result: null }))
      expect(expectOutcome(after, "Pause").reason).toEqual({ _tag: "Scheduled", toolIds: ["b"], earliest: T0 + 20 })
    })

    it("waits for the earliest scheduled call with waitForScheduled when no approval is pending", () => {
      const messages = conversation(
        response([call("a", { _tag: "Scheduled", at: T0 + 500 }), call("b", { _tag: "Scheduled", at: T0 + 200 })])
      )
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }), config({ waitForScheduled: true }))
      expect(outcome).toEqual(
        Turn.Outcome.Wait({ until: T0 + 200, reason: { _tag: "Scheduled", toolIds: ["a", "b"], earliest: T0 + 200 } })
      )
      expectUnchanged(messages, next)
      // Without the option the same state pauses.
      expect(step(messages, Event.Resume({ now: T0 }))[1]._tag).toBe("Pause")
    })

    it("pauses instead of waiting when an approval is pending too", () => {
      const messages = conversation(
        response([call("a", { _tag: "Scheduled", at: T0 + 500 }), call("b", { _tag: "AwaitingApproval" })])
      )
      const [, outcome] = step(messages, Event.Resume({ now: T0 }), config({ waitForScheduled: true }))
      expect(expectOutcome(outcome, "Pause").reason).toEqual({
        _tag: "Mixed",
        approvals: ["b"],
        scheduled: [{ id: "a", at: T0 + 500 }]
      })
    })

    it("rejects an expired approval request by policy, with a reason", () => {
      const expiresAt = T0 + 1000
      const messages = conversation(response([call("a", { _tag: "AwaitingApproval", expiresAt })]))

      const [before, stillWaiting] = step(messages, Event.Resume({ now: expiresAt - 1 }))
      expect(expectOutcome(stillWaiting, "Pause").reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["a"] })
      expectUnchanged(messages, before)

      const [next, outcome] = step(messages, Event.Resume({ now: expiresAt }))
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      const status = statusOf(next, "a")
      expect(status).toStrictEqual({ _tag: "Expired", expiresAt })
      const projected = Messages.projectToolCall(Messages.findTool(next, "a")!).result
      expect(projected?.isError).toBe(true)
      expect(projected?.text).toContain(new Date(expiresAt).toISOString())
      expect(projected?.text).toContain("nobody decided in time")
      expect(projected?.text).not.toContain("rejected")
    })

    it("an approval counts only if the turn resumes before the request's deadline (fail closed)", () => {
      const expiresAt = T0 + 1000
      const waiting = conversation(response([call("a", { _tag: "AwaitingApproval", expiresAt })]))
      const approved = Messages.approve(waiting, "a")
      if (Result.isFailure(approved)) throw approved.failure
      expect(statusOf(approved.success, "a")).toEqual({ _tag: "Approved", expiresAt })

      const [inTime, runs] = step(approved.success, Event.Resume({ now: expiresAt - 1 }))
      expect(expectOutcome(runs, "RunTools").calls.map((c) => c.id)).toEqual(["a"])
      expect(statusOf(inTime, "a")).toEqual({ _tag: "Running" })

      const [late, outcome] = step(approved.success, Event.Resume({ now: expiresAt }))
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      expect(statusOf(late, "a")).toStrictEqual({ _tag: "Expired", expiresAt, approvedLate: true })
      expect(Messages.projectToolCall(Messages.findTool(late, "a")!).result?.text).toContain("came too late")
    })

    it("stays total for an expiry outside the range of dates (e.g. nanoseconds by mistake)", () => {
      const expiresAt = 6_629_409_702_163_775_000
      const messages = conversation(response([call("a", { _tag: "AwaitingApproval", expiresAt })]))
      const [next, outcome] = step(messages, Event.Resume({ now: expiresAt }))
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      // A deadline no Date can hold is no valid stored time: it is left out (and counted as passed).
      expect(statusOf(next, "a")).toStrictEqual({ _tag: "Expired" })
      expect(Result.isSuccess(Messages.toJson(next))).toBe(true)
      expect(Messages.projectToolCall(Messages.findTool(next, "a")!).result?.text).toContain("not a valid time")
    })

    it("never expires an approval request without an expiry", () => {
      const messages = conversation(response([call("a", { _tag: "AwaitingApproval" })]))
      const [next, outcome] = step(messages, Event.Resume({ now: Number.MAX_SAFE_INTEGER }))
      expect(outcome._tag).toBe("Pause")
      expectUnchanged(messages, next)
    })

    it("stops at the step limit, counting responses from the messages (survives JSON)", () => {
      const messages = conversation(
        response([call("a", { _tag: "Completed", result: 1 })]),
        response([call("b", { _tag: "Failed", error: "x" })])
      )
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }), config({ maxSteps: 2 }))
      expect(outcome).toEqual(Turn.Outcome.StepLimit({ maxSteps: 2 }))
      expectUnchanged(messages, next)

      const restored = right(Messages.fromJson(Result.getOrThrow(Messages.toJson(messages))))
      expect(step(restored, Event.Resume({ now: T0 }), config({ maxSteps: 2 }))[1]).toEqual(
        Turn.Outcome.StepLimit({ maxSteps: 2 })
      )
      expect(step(restored, Event.Resume({ now: T0 }), config({ maxSteps: 3 }))[1]).toEqual(
        Turn.Outcome.CallModel({ step: 3 })
      )
    })

    it("does not call the model at all with maxSteps 0", () => {
      const messages = conversation()
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }), config({ maxSteps: 0 }))
      expect(outcome).toEqual(Turn.Outcome.StepLimit({ maxSteps: 0 }))
      expectUnchanged(messages, next)
    })

    it("reaches the step limit after the tools of the last allowed response ran", () => {
      const messages = conversation(response([call("a", { _tag: "Running" })]))
      const [, outcome] = step(messages, Event.ToolSucceeded({ id: "a", result: 1 }), config({ maxSteps: 1 }))
      expect(outcome).toEqual(Turn.Outcome.StepLimit({ maxSteps: 1 }))
    })

    it("returns the same Complete when a completed turn is resumed, without a model call", () => {
      const final = response([Messages.text("All done.")], usage2)
      const messages = conversation(response([call("a", { _tag: "Completed", result: 1 })], usage1), final)
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }))
      const complete = expectOutcome(outcome, "Complete")
      expect(complete.response).toStrictEqual(final)
      expect(complete.usage).toEqual({ inputTokens: 30, outputTokens: 12, reasoningTokens: 3 })
      expectUnchanged(messages, next)
      expect(step(next, Event.Resume({ now: T0 + 999 }))).toStrictEqual([next, outcome])
      // Even at the step limit, a final answer is a Complete.
      expect(step(messages, Event.Resume({ now: T0 }), config({ maxSteps: 2 }))[1]._tag).toBe("Complete")
    })

    it("reports calls left pending before a newer user message (appended without Messages.append)", () => {
      const messages = deepFreeze([
        Messages.user("Delete the logs."),
        response([call("a", { _tag: "AwaitingApproval" }), call("b", { _tag: "Completed", result: 1 })]),
        Messages.user("Actually, never mind.")
      ])
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }))
      expect(outcome).toEqual(Turn.Outcome.PendingCalls({ ids: ["a"] }))
      expectUnchanged(messages, next)

      // A model response is not taken in that state.
      const [ignored, again] = step(messages, Event.ModelResponded({ message: Messages.assistant("hi") }))
      expect(again).toEqual(Turn.Outcome.PendingCalls({ ids: ["a"] }))
      expectUnchanged(messages, ignored)

      // Superseding the pending calls lets the turn go on.
      const superseded = right(
        Messages.append(messages.slice(0, 2), Messages.user("Actually, never mind."), { supersede: "changed my mind" })
      )
      expect(step(superseded, Event.Resume({ now: T0 }))[1]).toEqual(Turn.Outcome.CallModel({ step: 1 }))
    })

    it("reports calls of an earlier response left pending when other messages follow it", () => {
      // `Messages.append` accepts assistant messages while calls are pending; the
      // pending call must not be stranded (sent to the model without a result).
      const messages = deepFreeze([
        Messages.user("Delete the logs."),
        response([call("a", { _tag: "AwaitingApproval" })]),
        response([call("b", { _tag: "Completed", result: 1 })])
      ])
      const [next, outcome] = step(messages, Event.Resume({ now: T0 }))
      expect(outcome).toEqual(Turn.Outcome.PendingCalls({ ids: ["a"] }))
      expectUnchanged(messages, next)

      const withText = deepFreeze([...messages.slice(0, 2), Messages.assistant("A canned answer.")])
      expect(step(withText, Event.Resume({ now: T0 }))[1]).toEqual(Turn.Outcome.PendingCalls({ ids: ["a"] }))
    })
  })

  describe("ModelResponded", () => {
    it("appends a final answer and completes with its usage", () => {
      const messages = conversation()
      const answer: Message = { ...Messages.assistant("Hello!"), usage: usage1, finishReason: "stop" }
      const [next, outcome] = step(messages, Event.ModelResponded({ message: answer }))
      expect(next).toStrictEqual([...snapshot(messages), answer])
      expect(outcome).toEqual(Turn.Outcome.Complete({ response: answer, usage: usage1 }))
    })

    it("completes on a response without tool calls, whatever its last part is", () => {
      const endings: ReadonlyArray<Message> = [
        response([Messages.text("Here it is."), { _tag: "Reasoning", text: "done thinking" }]),
        response([Messages.file({ mediaType: "image/png", base64: "AAAA" })]),
        response([])
      ]
      for (const answer of endings) {
        const [next, outcome] = step(conversation(), Event.ModelResponded({ message: answer }))
        expect(expectOutcome(outcome, "Complete").response).toStrictEqual(answer)
        expect(next).toHaveLength(2)
      }
    })

    it("keeps each response its own message, leaving the earlier ones as they were", () => {
      const first = response([call("a", { _tag: "Completed", result: 1 })], usage1)
      const messages = conversation(first)
      const second = response([Messages.text("Done.")], usage2)
      const [next] = step(messages, Event.ModelResponded({ message: second }))
      expect(next).toStrictEqual([...snapshot(messages), second])
      expect(next[1]).toBe(messages[1])
    })

    it("asks for decisions on the proposed calls", () => {
      const messages = conversation()
      const answer = response([Messages.text("Let me look."), Messages.toolCall({ id: "a", name: "ls", arguments: "{}" })])
      const [next, outcome] = step(messages, Event.ModelResponded({ message: answer }))
      expect(next).toHaveLength(2)
      const decide = expectOutcome(outcome, "Decide")
      expect(decide.calls).toEqual([Messages.toolCall({ id: "a", name: "ls", arguments: "{}" })])
    })

    it("takes the response as the assistant's whatever role it claims", () => {
      const messages = conversation()
      const [next] = step(messages, Event.ModelResponded({ message: { role: "user", parts: [Messages.text("hi")] } }))
      expect(next[1]!.role).toBe("assistant")
    })

    it("fails closed: calls claiming Approved, Completed, Running or Rejected start as Proposed", () => {
      const messages = conversation()
      const claimed = response([
        call("a", { _tag: "Approved", editedArguments: "{\"evil\":true}" }),
        call("b", { _tag: "Completed", result: "fake" }),
        call("c", { _tag: "Running" }),
        call("d", { _tag: "Rejected", by: "policy" }),
        call("e", { _tag: "Scheduled", at: 0 })
      ])
      const [next, outcome] = step(messages, Event.ModelResponded({ message: claimed }))
      const decide = expectOutcome(outcome, "Decide")
      expect(decide.calls.map((c) => c.id)).toEqual(["a", "b", "c", "d", "e"])
      for (const id of ["a", "b", "c", "d", "e"]) expect(statusOf(next, id)).toEqual({ _tag: "Proposed" })
      expect(Messages.effectiveArguments(Messages.findTool(next, "a")!)).toBe(JSON.stringify({ id: "a" }))
    })

    it("is ignored when the model is not due", () => {
      const answer = Messages.assistant("unexpected")
      const paused = conversation(response([call("a", { _tag: "AwaitingApproval" })], usage1))
      const cases: ReadonlyArray<readonly [Messages.Messages, Turn.Outcome["_tag"]]> = [
        [paused, "Pause"],
        [conversation(response([call("a", { _tag: "Running" })])), "AwaitTools"],
        [proposing("a"), "Decide"],
        [conversation(Messages.assistant("done")), "Complete"]
      ]
      for (const [messages, tag] of cases) {
        const [next, outcome] = step(messages, Event.ModelResponded({ message: answer }))
        expect(outcome._tag).toBe(tag)
        expectUnchanged(messages, next)
      }
    })

    it("is ignored once the step limit is reached", () => {
      const messages = conversation(response([call("a", { _tag: "Completed", result: 1 })]))
      const [next, outcome] = step(
        messages,
        Event.ModelResponded({ message: Messages.assistant("one more") }),
        config({ maxSteps: 1 })
      )
      expect(outcome).toEqual(Turn.Outcome.StepLimit({ maxSteps: 1 }))
      expectUnchanged(messages, next)
    })
  })

  describe("Decided", () => {
    it("runs Execute calls, marked Running", () => {
      const messages = proposing("a")
      const [next, outcome] = step(messages, Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.Execute() }] }))
      const run = expectOutcome(outcome, "RunTools")
      expect(run.calls).toEqual([{ ...call("a"), status: { _tag: "Running" } }])
      expect(statusOf(next, "a")).toEqual({ _tag: "Running" })
    })

    it("waits for every proposed call to be decided before running any", () => {
      const messages = proposing("a", "b")
      const [next, outcome] = step(messages, Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.Execute() }] }))
      expect(expectOutcome(outcome, "Decide").calls.map((c) => c.id)).toEqual(["b"])
      expect(statusOf(next, "a")).toEqual({ _tag: "Approved" })
      const [, after] = step(next, Event.Decided({ now: T0, decisions: [{ id: "b", decision: Decision.Execute() }] }))
      expect(expectOutcome(after, "RunTools").calls.map((c) => c.id)).toEqual(["a", "b"])
    })

    it("pauses on RequireApproval, keeping its expiry", () => {
      const messages = proposing("a", "b")
      const [next, outcome] = step(
        messages,
        Event.Decided({
          now: T0,
          decisions: [
            { id: "a", decision: Decision.RequireApproval({ expiresAt: T0 + 5000 }) },
            { id: "b", decision: Decision.RequireApproval({}) }
          ]
        })
      )
      expect(outcome).toEqual(
        Turn.Outcome.Pause({ reason: { _tag: "AwaitingApproval", toolIds: ["a", "b"] }, usage: usage1 })
      )
      expect(statusOf(next, "a")).toEqual({ _tag: "AwaitingApproval", expiresAt: T0 + 5000 })
      expect(statusOf(next, "b")).toStrictEqual({ _tag: "AwaitingApproval" })
    })

    it("schedules a call deferred to a future time", () => {
      const messages = proposing("a")
      const [next, outcome] = step(
        messages,
        Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.Defer({ at: T0 + 1 }) }] })
      )
      expect(statusOf(next, "a")).toEqual({ _tag: "Scheduled", at: T0 + 1 })
      expect(expectOutcome(outcome, "Pause").reason).toEqual({ _tag: "Scheduled", toolIds: ["a"], earliest: T0 + 1 })
    })

    it("runs a call deferred to a time already past (or now) at once", () => {
      for (const at of [T0 - 1000, T0]) {
        const [next, outcome] = step(
          proposing("a"),
          Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.Defer({ at }) }] })
        )
        expect(expectOutcome(outcome, "RunTools").calls.map((c) => c.id)).toEqual(["a"])
        expect(statusOf(next, "a")).toEqual({ _tag: "Running" })
      }
    })

    it("records a Reject by policy with its reason and lets the model see it", () => {
      const [next, outcome] = step(
        proposing("a"),
        Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.Reject({ reason: "not on Sundays" }) }] })
      )
      expect(statusOf(next, "a")).toEqual({ _tag: "Rejected", by: "policy", reason: "not on Sundays" })
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
    })

    it("records an Invalid call as failed with its message, without running it", () => {
      const [next, outcome] = step(
        proposing("a"),
        Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.Invalid({ message: "unknown tool" }) }] })
      )
      expect(statusOf(next, "a")).toEqual({ _tag: "Failed", error: "unknown tool" })
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
    })

    it("rejects at once an approval request whose expiry already passed", () => {
      const [next, outcome] = step(
        proposing("a"),
        Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.RequireApproval({ expiresAt: T0 }) }] })
      )
      expect(statusOf(next, "a")).toStrictEqual({ _tag: "Expired", expiresAt: T0 })
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
    })

    it("ignores decisions for calls that are not proposed (a decided call is not re-decided)", () => {
      const messages = conversation(response([call("a", { _tag: "AwaitingApproval" })], usage1))
      const [next, outcome] = step(
        messages,
        Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.Execute() }, { id: "zz", decision: Decision.Execute() }] })
      )
      expect(outcome._tag).toBe("Pause")
      expectUnchanged(messages, next)
    })

    describe("a mixed response (execute + approve + defer + reject)", () => {
      const decided = () =>
        step(
          proposing("run", "ask", "later", "no", "bad"),
          Event.Decided({
            now: T0,
            decisions: [
              { id: "run", decision: Decision.Execute() },
              { id: "ask", decision: Decision.RequireApproval({}) },
              { id: "later", decision: Decision.Defer({ at: T0 + 60_000 }) },
              { id: "no", decision: Decision.Reject({ reason: "forbidden" }) },
              { id: "bad", decision: Decision.Invalid({ message: "bad arguments" }) }
            ]
          })
        )

      it("runs the runnable calls first", () => {
        const [next, outcome] = decided()
        expect(expectOutcome(outcome, "RunTools").calls.map((c) => c.id)).toEqual(["run"])
        expect(statusOf(next, "ask")).toEqual({ _tag: "AwaitingApproval" })
        expect(statusOf(next, "later")).toEqual({ _tag: "Scheduled", at: T0 + 60_000 })
        expect(statusOf(next, "no")).toEqual({ _tag: "Rejected", by: "policy", reason: "forbidden" })
        expect(statusOf(next, "bad")).toEqual({ _tag: "Failed", error: "bad arguments" })
      })

      it("then pauses with a Mixed reason, each scheduled call with its own time", () => {
        const [running] = decided()
        const [paused, outcome] = step(running, Event.ToolSucceeded({ id: "run", result: "ok" }))
        expect(outcome).toEqual(
          Turn.Outcome.Pause({
            reason: { _tag: "Mixed", approvals: ["ask"], scheduled: [{ id: "later", at: T0 + 60_000 }] },
            usage: usage1
          })
        )
        expect(statusOf(paused, "run")).toEqual({ _tag: "Completed", result: "ok" })
      })

      it("expires approvals only when told the time, not on a tool result", () => {
        const [running] = step(
          proposing("run", "ask"),
          Event.Decided({
            now: T0,
            decisions: [
              { id: "run", decision: Decision.Execute() },
              { id: "ask", decision: Decision.RequireApproval({ expiresAt: T0 + 1 }) }
            ]
          })
        )
        const [paused, outcome] = step(running, Event.ToolSucceeded({ id: "run", result: "ok" }))
        expect(expectOutcome(outcome, "Pause").reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["ask"] })
        expect(statusOf(paused, "ask")).toEqual({ _tag: "AwaitingApproval", expiresAt: T0 + 1 })
        const [expired] = step(paused, Event.Resume({ now: T0 + 1 }))
        expect(statusOf(expired, "ask")).toStrictEqual({ _tag: "Expired", expiresAt: T0 + 1 })
      })

      it("does not call the model until every call of the response is resolved", () => {
        const [running] = decided()
        const [paused] = step(running, Event.ToolSucceeded({ id: "run", result: "ok" }))
        const approved = right(Messages.approve(paused, "ask"))

        // The approved call runs on resume; the scheduled one is not due yet.
        const [r1, o1] = step(approved, Event.Resume({ now: T0 + 1 }))
        expect(expectOutcome(o1, "RunTools").calls.map((c) => c.id)).toEqual(["ask"])
        const [r2, o2] = step(r1, Event.ToolSucceeded({ id: "ask", result: 1 }))
        expect(expectOutcome(o2, "Pause").reason).toEqual({ _tag: "Scheduled", toolIds: ["later"], earliest: T0 + 60_000 })

        // Still not due: still paused, no model call.
        const [r3, o3] = step(r2, Event.Resume({ now: T0 + 59_999 }))
        expect(o3._tag).toBe("Pause")

        const [r4, o4] = step(r3, Event.Resume({ now: T0 + 60_000 }))
        expect(expectOutcome(o4, "RunTools").calls.map((c) => c.id)).toEqual(["later"])
        const [done, o5] = step(r4, Event.ToolSucceeded({ id: "later", result: 2 }))
        expect(o5).toEqual(Turn.Outcome.CallModel({ step: 2 }))
        expect(Messages.pendingTools(done)).toEqual([])
      })

      it("pauses with the earliest time when only scheduled calls remain", () => {
        const [, outcome] = step(
          proposing("a", "b", "c"),
          Event.Decided({
            now: T0,
            decisions: [
              { id: "a", decision: Decision.Defer({ at: T0 + 300 }) },
              { id: "b", decision: Decision.Defer({ at: T0 + 100 }) },
              { id: "c", decision: Decision.Defer({ at: T0 + 200 }) }
            ]
          })
        )
        expect(expectOutcome(outcome, "Pause").reason).toEqual({
          _tag: "Scheduled",
          toolIds: ["a", "b", "c"],
          earliest: T0 + 100
        })
      })

      it("keeps each scheduled call's own time in a Mixed reason", () => {
        const [, outcome] = step(
          proposing("a", "b", "c"),
          Event.Decided({
            now: T0,
            decisions: [
              { id: "a", decision: Decision.Defer({ at: T0 + 300 }) },
              { id: "b", decision: Decision.RequireApproval({}) },
              { id: "c", decision: Decision.Defer({ at: T0 + 100 }) }
            ]
          })
        )
        expect(expectOutcome(outcome, "Pause").reason).toEqual({
          _tag: "Mixed",
          approvals: ["b"],
          scheduled: [{ id: "a", at: T0 + 300 }, { id: "c", at: T0 + 100 }]
        })
      })
    })
  })

  describe("ToolSucceeded and ToolFailed", () => {
    const running = () =>
      conversation(response([call("a", { _tag: "Running" }), call("b", { _tag: "Running" })], usage1))

    it("completes a running call and waits for the others", () => {
      const [next, outcome] = step(running(), Event.ToolSucceeded({ id: "a", result: { rows: [1, 2] } }))
      expect(statusOf(next, "a")).toEqual({ _tag: "Completed", result: { rows: [1, 2] } })
      expect(outcome).toEqual(Turn.Outcome.AwaitTools({ ids: ["b"] }))
    })

    it("records a failure the model will see, then calls the model", () => {
      const [r1] = step(running(), Event.ToolSucceeded({ id: "a", result: 1 }))
      const [next, outcome] = step(r1, Event.ToolFailed({ id: "b", error: { code: 42 } }))
      expect(statusOf(next, "b")).toEqual({ _tag: "Failed", error: { code: 42 } })
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      expect(Messages.projectToolCall(Messages.findTool(next, "b")!).result).toEqual({
        isError: true,
        value: { error: { code: 42 } },
        text: "{\"error\":{\"code\":42}}"
      })
    })

    it("changes nothing for a call that is not running", () => {
      const messages = conversation(
        response([
          call("done", { _tag: "Completed", result: "first" }),
          call("ask", { _tag: "AwaitingApproval" }),
          call("later", { _tag: "Scheduled", at: T0 + 10 }),
          call("no", { _tag: "Rejected", by: "user" }),
          call("run", { _tag: "Running" })
        ])
      )
      for (const id of ["done", "ask", "later", "no", "unknown"]) {
        for (const event of [Event.ToolSucceeded({ id, result: "second" }), Event.ToolFailed({ id, error: "e" })]) {
          const [next, outcome] = step(messages, event)
          expectUnchanged(messages, next)
          expect(outcome).toEqual(Turn.Outcome.AwaitTools({ ids: ["run"] }))
        }
      }
    })

    it("changes nothing for a proposed call (it was never decided)", () => {
      const messages = proposing("a")
      const [next, outcome] = step(messages, Event.ToolSucceeded({ id: "a", result: 1 }))
      expectUnchanged(messages, next)
      expect(outcome._tag).toBe("Decide")
    })

    it("does not let a late result overwrite a recorded one", () => {
      const [done] = step(running(), Event.ToolSucceeded({ id: "a", result: "first" }))
      const [again] = step(done, Event.ToolSucceeded({ id: "a", result: "second" }))
      expect(statusOf(again, "a")).toEqual({ _tag: "Completed", result: "first" })
    })

    it("adds up the usage of every response of the turn in Pause and Complete", () => {
      const history = deepFreeze([
        Messages.user("old"),
        { ...Messages.assistant("old answer"), usage: { inputTokens: 1000, outputTokens: 1000 } },
        Messages.user("new")
      ])
      const [s1] = step(history, Event.ModelResponded({ message: response([call("a")], usage1) }))
      const [s2, paused] = step(
        s1,
        Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.RequireApproval({}) }] })
      )
      expect(expectOutcome(paused, "Pause").usage).toEqual(usage1)
      const [s3] = step(right(Messages.approve(s2, "a")), Event.Resume({ now: T0 }))
      const [s4, o4] = step(s3, Event.ToolSucceeded({ id: "a", result: 1 }))
      expect(o4).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      const [, complete] = step(s4, Event.ModelResponded({ message: response([Messages.text("ok")], usage2) }))
      expect(expectOutcome(complete, "Complete").usage).toEqual({ inputTokens: 30, outputTokens: 12, reasoningTokens: 3 })
    })
  })

  describe("run", () => {
    it("applies events in order and returns the last result", () => {
      const [messages, outcome] = Turn.run(conversation(), [
        Event.ModelResponded({ message: response([call("a")]) }),
        Event.Decided({ now: T0, decisions: [{ id: "a", decision: Decision.Execute() }] }),
        Event.ToolSucceeded({ id: "a", result: 3 }),
        Event.ModelResponded({ message: Messages.assistant("3") })
      ])
      expect(outcome._tag).toBe("Complete")
      expect(messages).toHaveLength(3)
      expect(statusOf(messages, "a")).toEqual({ _tag: "Completed", result: 3 })
    })
  })

  describe("pauseReason", () => {
    it("names approvals, scheduled calls with their earliest time, or both with each time", () => {
      expect(Turn.pauseReason(["a"], [])).toEqual({ _tag: "AwaitingApproval", toolIds: ["a"] })
      expect(Turn.pauseReason([], [{ id: "b", at: 5 }, { id: "c", at: 3 }])).toEqual({
        _tag: "Scheduled",
        toolIds: ["b", "c"],
        earliest: 3
      })
      expect(Turn.pauseReason(["a"], [{ id: "b", at: 5 }, { id: "c", at: 3 }])).toEqual({
        _tag: "Mixed",
        approvals: ["a"],
        scheduled: [{ id: "b", at: 5 }, { id: "c", at: 3 }]
      })
    })
  })
})
