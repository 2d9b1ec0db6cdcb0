/**
 * The reducer under hostile input: refused edits, decisions it cannot read,
 * times that are not instants, and responses cut short. Each case fails
 * closed: nothing runs that a person or a valid decision did not allow.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Messages from "../src/turn/Messages.js"
import type { ToolCallStatus } from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"
import { call, conversation, expectOutcome, response, right, statusOf, step, T0 } from "./support/fixtures.js"

const { Event } = Turn

const approvedWithEdit = (status: ToolCallStatus) => {
  const paused = conversation(response([call("a", status)]))
  return right(Messages.approveJson(paused, "a", "{\"bad\":true}"))
}

describe("Turn: a refused edit leaves the pause exactly as it was", () => {
  it("keeps the approval's deadline, so a later approval after it never runs the call", () => {
    const deadline = T0 + 1000
    const approved = approvedWithEdit({ _tag: "AwaitingApproval", expiresAt: deadline })
    const [reverted, outcome] = step(approved, Event.Resume({ now: T0, invalidEdits: [{ id: "a", detail: "bad" }] }))
    expectOutcome(outcome, "InvalidEdits")
    expect(statusOf(reverted, "a")).toStrictEqual({ _tag: "AwaitingApproval", expiresAt: deadline })
    // The person approves again, after the deadline: expired, never run.
    const late = right(Messages.approve(reverted, "a"))
    const [after, next] = step(late, Event.Resume({ now: deadline + 1 }))
    expect(next._tag).not.toBe("RunTools")
    expect(statusOf(after, "a")).toStrictEqual({ _tag: "Expired", expiresAt: deadline, approvedLate: true })
  })

  it("puts a scheduled call approved early with a bad edit back on its schedule", () => {
    const approved = approvedWithEdit({ _tag: "Scheduled", at: T0 + 5000 })
    const [reverted, outcome] = step(approved, Event.Resume({ now: T0, invalidEdits: [{ id: "a", detail: "bad" }] }))
    expectOutcome(outcome, "InvalidEdits")
    expect(statusOf(reverted, "a")).toStrictEqual({ _tag: "Scheduled", at: T0 + 5000 })
  })

  it("expires an approval past its deadline, whether or not its edit is valid", () => {
    const approved = approvedWithEdit({ _tag: "AwaitingApproval", expiresAt: T0 + 10 })
    const [after, outcome] = step(approved, Event.Resume({ now: T0 + 10, invalidEdits: [{ id: "a", detail: "bad" }] }))
    expect(outcome._tag).toBe("CallModel")
    expect(statusOf(after, "a")).toStrictEqual({ _tag: "Expired", expiresAt: T0 + 10, approvedLate: true })
  })
})

describe("Turn: decisions and times it cannot read fail closed", () => {
  const proposed = conversation(response([call("a")]))
  const garbage: ReadonlyArray<[string, unknown]> = [
    ["an unknown tag", { _tag: "Exceute" }],
    ["undefined", undefined],
    ["null", null],
    ["a Defer at NaN", { _tag: "Defer", at: Number.NaN }],
    ["a Defer at Infinity", { _tag: "Defer", at: Number.POSITIVE_INFINITY }],
    ["a Defer with no time", { _tag: "Defer" }],
    ["a Defer past the range of Date", { _tag: "Defer", at: 9e15 }],
    ["a RequireApproval with a NaN deadline", { _tag: "RequireApproval", expiresAt: Number.NaN }],
    ["a Reject without a reason", { _tag: "Reject" }]
  ]
  for (const [what, decision] of garbage) {
    it(`${what}: the call awaits approval (no deadline), nothing runs`, () => {
      const [after, outcome] = step(
        proposed,
        Event.Decided({ now: T0, decisions: [{ id: "a", decision: decision as Turn.Decision }] })
      )
      expect(statusOf(after, "a")).toStrictEqual({ _tag: "AwaitingApproval" })
      expect(expectOutcome(outcome, "Pause").reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["a"] })
    })
  }

  it("a scheduled time that is not an instant (state built by hand) never waits on it: the call awaits approval", () => {
    for (const at of [Number.NaN, Number.POSITIVE_INFINITY, 1e300]) {
      const scheduled = conversation(response([call("a", { _tag: "Scheduled", at })]))
      const [after, outcome] = step(scheduled, Event.Resume({ now: T0 }), { maxSteps: 10, waitForScheduled: true })
      expect(outcome._tag).toBe("Pause")
      expect(statusOf(after, "a")).toStrictEqual({ _tag: "AwaitingApproval" })
    }
  })

  it("a deadline that is not an instant counts as passed (an approval never outlives garbage)", () => {
    const approved = conversation(response([call("a", { _tag: "Approved", expiresAt: Number.NaN })]))
    const [after, outcome] = step(approved, Event.Resume({ now: T0 }))
    expect(outcome._tag).not.toBe("RunTools")
    expect(statusOf(after, "a")).toStrictEqual({ _tag: "Expired", approvedLate: true })
  })
})

describe("Turn: nothing from a response cut short runs", () => {
  for (const finishReason of ["length", "content-filter", "error"] as const) {
    it(`finish reason ${finishReason}: its calls fail with the reason and the model is called again`, () => {
      const start = conversation()
      const [after, outcome] = step(start, Event.ModelResponded({
        message: { ...response([call("a", { _tag: "Proposed" }, { arguments: "{\"complete\":true}" })]), finishReason }
      }))
      expect(expectOutcome(outcome, "CallModel").step).toBe(2)
      const status = statusOf(after, "a")
      expect(status._tag).toBe("Failed")
      expect(Messages.projectToolCall(Messages.findTool(after, "a")!).result?.text).toContain("did not run")
    })
  }

  it("a response that stopped normally runs as usual", () => {
    const [, outcome] = step(conversation(), Event.ModelResponded({ message: { ...response([call("a")]), finishReason: "tool-calls" } }))
    expect(outcome._tag).toBe("Decide")
  })

  it("at maxSteps, a cut-off response ends the turn with StepLimit, not a run", () => {
    const [, outcome] = step(conversation(), Event.ModelResponded({ message: { ...response([call("a")]), finishReason: "length" } }), {
      maxSteps: 1,
      waitForScheduled: false
    })
    expect(outcome._tag).toBe("StepLimit")
  })
})
