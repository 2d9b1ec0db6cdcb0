/**
 * The property kit's `worker` path on hand-made scenarios of the refund agent:
 * every run of the turn goes through `Worker.resume` with the agent's store and
 * its leases, on the TestClock. A crash just after or just before a save leaves
 * the dead process's lease held: the next process finds the conversation busy
 * (typed, nothing run), takes over once the lease's time has passed, and
 * reports the call the crash left running as interrupted; the dead process's
 * late save under its old lease is refused. `Law.leaseKept` and
 * the other laws hold there for the agent as it should be, and a store that
 * ignores leases (planted bug 9) breaks `leaseKept`, and generated scenarios
 * catch it on the worker path only, shrunk to a few steps.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { ConversationStore, Messages, Turn, Worker } from "../src/index.js"
import { type Agent, Law, Scenario, Trace } from "../src/testing/index.js"
import * as Properties from "../src/testing/Properties.js"
import * as Agents from "./support/lawAgents.js"

const refund = (amount: number, id = "c1_1"): Scenario.Response => ({
  calls: [{ id, name: "refund", arguments: JSON.stringify({ orderId: "A-1", amount }) }]
})

/** A refund that needs one approval, approved by finance, then resumed (crashing as `crash` says). */
const approved = (crash?: Scenario.Crash): Scenario.Scenario => ({
  request: "Go.",
  responses: [refund(250)],
  maxSteps: 3,
  steps: [
    { _tag: "Decide", kind: "approve", call: 0, by: 0 },
    ...(crash === undefined ? [] : [crash]),
    { _tag: "Resume" }
  ]
})

const worker = (agent: typeof Agents.refunds, scenario: Scenario.Scenario) => Effect.runPromise(Trace.record(agent, scenario, "worker"))

/** Core's lease length: what a dead process holds the conversation for. */
const ttl = Duration.toMillis(Worker.defaultLeaseTtl)

describe("the worker path", () => {
  it("runs every turn through Worker.resume: the approved refund runs once, and the laws hold", async () => {
    const trace = await worker(Agents.refunds, approved())
    expect(trace.mode).toBe("worker")
    expect(trace.worker!.attempts.map((attempt) => [attempt.process, attempt.outcome, attempt.released])).toEqual([
      [1, "Ran", true],
      [1, "Ran", true]
    ])
    expect(trace.runs.map((run) => [run.id, run.outcome])).toEqual([["c1_1", "succeeded"]])
    expect(trace.ends.map((end) => end.outcome)).toEqual(["Paused", "Complete"])
    expect(Law.check(Agents.refunds, { stored: trace })).toEqual([])
  })

  it("a crash just after the save that marks the call Running: the next process is busy, takes over after the TTL, and reports the call interrupted", async () => {
    const trace = await worker(Agents.refunds, approved({ _tag: "Crash", checkpoint: 1 }))
    const attempts = trace.worker!.attempts
    expect(attempts.map((attempt) => [attempt.process, attempt.outcome])).toEqual([
      [1, "Ran"],
      [1, "Crashed"],
      [2, "Busy"],
      [2, "Ran"]
    ])
    const [, crashed, busy, takeover] = attempts
    // The dead process kept its lease; the busy try was made at once, the takeover when the lease ran out.
    expect(crashed!.released).toBe(false)
    expect(busy!.error).toBe("ConversationBusy")
    expect(busy!.lease).toBeUndefined()
    expect(busy!.saves).toBe(0)
    expect(busy!.at).toBe(crashed!.at)
    expect(takeover!.at).toBe(crashed!.lease!.expiresAt)
    expect(crashed!.lease!.expiresAt - crashed!.at).toBe(ttl)
    // Nothing ran in the dead process (it died before the handler started) nor again in the next one.
    expect(trace.runs).toEqual([])
    expect(trace.worker!.lost).toEqual([expect.objectContaining({ id: "c1_1", process: 1, started: false, then: "Failed" })])
    const status = Messages.findTool(trace.final, "c1_1")!.status
    expect(status).toEqual(expect.objectContaining({ _tag: "Failed", error: Turn.interruptedError }))
    expect(trace.ends.map((end) => end.outcome)).toEqual(["Paused", "Crashed", "Complete"])
    // Once process 2 held the lease, the dead process's late save under its old one was refused.
    expect(trace.worker!.late).toEqual([expect.objectContaining({ process: 1, holder: 2, refused: "ConversationBusy" })])
    expect(Law.check(Agents.refunds, { stored: trace })).toEqual([])
  })

  it("a crash just before the first save: the approval reached no save and is lost, the refund never runs", async () => {
    const trace = await worker(Agents.refunds, approved({ _tag: "Crash", checkpoint: 1, before: true }))
    expect(trace.worker!.attempts.map((attempt) => [attempt.process, attempt.outcome, attempt.written])).toEqual([
      [1, "Ran", 2],
      [1, "Crashed", 0],
      [2, "Busy", 0],
      [2, "Ran", 0]
    ])
    expect(trace.decisions.map((decision) => [decision.kind, decision.accepted, decision.refusal])).toEqual([["approve", false, "LostInCrash"]])
    expect(trace.runs).toEqual([])
    expect(Messages.findTool(trace.final, "c1_1")!.status._tag).toBe("AwaitingApproval")
    expect(trace.ends.map((end) => end.outcome)).toEqual(["Paused", "Crashed", "Paused"])
    expect(Law.check(Agents.refunds, { stored: trace })).toEqual([])
  })

  it("a crash after the refund's result was saved: the result is kept and the refund does not run again", async () => {
    const trace = await worker(Agents.refunds, approved({ _tag: "Crash", checkpoint: 2 }))
    expect(trace.runs.map((run) => [run.id, run.outcome])).toEqual([["c1_1", "succeeded"]])
    expect(trace.worker!.attempts.map((attempt) => attempt.outcome)).toEqual(["Ran", "Crashed", "Busy", "Ran"])
    expect(trace.worker!.lost).toEqual([])
    expect(Messages.findTool(trace.final, "c1_1")!.status._tag).toBe("Completed")
    expect(Law.check(Agents.refunds, { stored: trace })).toEqual([])
  })

  it("an idempotent call left running by a crash runs again in the next process, as a later attempt", async () => {
    const scenario: Scenario.Scenario = {
      request: "Go.",
      responses: [{ calls: [{ id: "c1_1", name: "sync_ledger", arguments: JSON.stringify({ orderId: "A-1" }) }] }],
      maxSteps: 3,
      firstCrash: 2,
      steps: []
    }
    const trace = await worker(Agents.refunds, scenario)
    expect(trace.worker!.attempts.map((attempt) => attempt.outcome)).toEqual(["Crashed", "Busy", "Ran"])
    expect(trace.worker!.lost).toEqual([expect.objectContaining({ id: "c1_1", process: 1, then: "Completed" })])
    expect(trace.runs.map((run) => run.attempt)).toEqual([2])
    expect(Law.check(Agents.refunds, { stored: trace })).toEqual([])
  })

  it("a store that ignores leases lets the next process take the conversation from the live lease: leaseKept breaks", async () => {
    const scenario = approved({ _tag: "Crash", checkpoint: 1 })
    const trace = await worker(Agents.leaseIgnoringStore, scenario)
    expect(trace.worker!.attempts.map((attempt) => attempt.outcome)).toEqual(["Ran", "Crashed", "Ran"])
    const violations = Law.check(Agents.leaseIgnoringStore, { stored: trace })
    expect(violations.map((violation) => violation.law)).toEqual(["leaseKept"])
    expect(violations[0]!.detail).toMatch(/^process 2 took the conversation at 0 while the lease of process 1 held it until 30000$/)
    // leaseKept looks at the worker path only: the stored path of the same scenario has no lease to keep.
    const stored = await Effect.runPromise(Trace.record(Agents.leaseIgnoringStore, scenario, "stored"))
    expect(Law.leaseKept.check(Agents.leaseIgnoringStore, { stored })).toEqual([])
  })

  it("a store whose saves ignore the lease accepts the dead process's late save while the next one holds the conversation: leaseKept breaks", async () => {
    const leaseBlind: Agent.Agent = {
      ...Agents.refunds,
      store: Effect.map(ConversationStore.makeMemory, (store): ConversationStore.Service => {
        const { saveAndRelease: _own, ...rest } = store
        return {
          ...rest,
          save: (id, messages, options) =>
            store.save(id, messages, options?.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion })
        }
      })
    }
    const trace = await worker(leaseBlind, approved({ _tag: "Crash", checkpoint: 1, before: true }))
    expect(trace.worker!.late).toEqual([expect.objectContaining({ process: 1, holder: 2, refused: undefined })])
    expect(Law.leaseKept.check(leaseBlind, { stored: trace })).toEqual([
      "the store accepted a late save of process 1 under its old lease while process 2 held the conversation"
    ])
  })

  it("leaseKept: a busy process that ran something, a completed call run again after the takeover, a lost call not reported, each break it", async () => {
    const crashed = await worker(Agents.refunds, approved({ _tag: "Crash", checkpoint: 1 }))
    const record = crashed.worker!
    const busy = record.attempts.find((attempt) => attempt.outcome === "Busy")!
    // A run recorded while the busy attempt was under way (between its start and end).
    const ran: Trace.Run = { seq: busy.seq + 0.5, id: "c1_1", name: "refund", arguments: "{}", attempt: 1, at: busy.at, outcome: "succeeded" }
    expect(Law.leaseKept.check(Agents.refunds, { stored: crashed })).toEqual([])
    expect(Law.leaseKept.check(Agents.refunds, { stored: { ...crashed, runs: [ran] } })).toEqual([
      "process 2 found the conversation busy but ran c1_1",
      "c1_1 was left running by the crash of process 1 and ran again (its tool is not idempotent)"
    ])
    const unreported = { ...record, lost: record.lost.map((call) => ({ ...call, then: "Running" })) }
    expect(Law.leaseKept.check(Agents.refunds, { stored: { ...crashed, worker: unreported } })).toEqual([
      "c1_1 was left running by the crash of process 1 but is Running after the takeover, not reported interrupted"
    ])
    const done = await worker(Agents.refunds, approved({ _tag: "Crash", checkpoint: 2 }))
    const takeover = done.worker!.attempts.at(-1)!
    const again: Trace.Run = { ...done.runs[0]!, seq: takeover.seq + 1 }
    expect(Law.leaseKept.check(Agents.refunds, { stored: done })).toEqual([])
    expect(Law.leaseKept.check(Agents.refunds, { stored: { ...done, runs: [...done.runs, again] } })).toEqual([
      "c1_1 completed before process 1 died and ran again after the takeover"
    ])
  })

  it("generated scenarios catch a store that ignores leases on the worker path, shrunk to a few steps", async () => {
    const seed = 35
    const result = await Properties.check(Agents.leaseIgnoringStore, { numRuns: 100, seed })
    expect(result.failed).toBe(true)
    expect(result.violations.map((violation) => violation.law)).toContain("leaseKept")
    expect(result.violations[0]!.detail).toMatch(/^\(worker path\) process \d+ took the conversation at \d+ while the lease of process \d+ held it until \d+$/)
    const counterexample = result.counterexample!
    expect(Scenario.crashes(counterexample)).toBe(true)
    expect(counterexample.responses.length).toBe(1)
    expect(counterexample.responses[0]!.calls.length).toBeLessThanOrEqual(2)
    expect(counterexample.steps.length).toBeLessThanOrEqual(4)
    expect(result.report).toContain("What happened (worker path")
    expect(result.report).toContain(`Trace.record(agent, scenario, "worker") replays it`)
    expect(result.report).toContain(`seed: ${seed}, path: `)
    // It replays without fast-check; the agent with a store that keeps leases keeps every law on it.
    const replayed = await worker(Agents.leaseIgnoringStore, counterexample)
    expect(Law.check(Agents.leaseIgnoringStore, { stored: replayed }).map((violation) => violation.law)).toContain("leaseKept")
    expect(Law.check(Agents.refunds, { stored: await worker(Agents.refunds, counterexample) })).toEqual([])
    // Without the worker path the same scenarios see nothing wrong: only Worker.resume takes leases.
    const without = await Properties.check(Agents.leaseIgnoringStore, { numRuns: 100, seed, worker: "never" })
    expect(without.failed).toBe(false)
  }, 60_000)
})
