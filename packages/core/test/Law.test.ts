/**
 * The laws of the property kit on traces built by hand: each law reports the
 * trace that breaks it, and not the same trace with the break taken out (the
 * planted bugs of Properties.test.ts show the others failing on real agents).
 */
import { describe, expect, it } from "@effect/vitest"
import { type LanguageModel, Messages } from "../src/index.js"
import { Law, type Scenario, type Trace } from "../src/testing/index.js"
import * as Agents from "./support/lawAgents.js"

const scenario: Scenario.Scenario = { request: "Go.", responses: [], maxSteps: 2, steps: [] }

const withStatus = (id: string, name: string, status: Messages.ToolCallPart["status"]) =>
  Messages.assistant([{ ...Messages.toolCall({ id, name, arguments: "{\"text\":\"hi\"}" }), status }])

const run = (id: string, name: string, at: number, seq: number): Trace.Run => ({
  seq, id, name, arguments: "{\"text\":\"hi\"}", attempt: 1, at, outcome: "succeeded"
})

const request = (seq: number, messages: Messages.Messages): Trace.Request => ({
  seq, request: { messages } as unknown as LanguageModel.Request
})

/** A stored-path trace of `states` (seq 1, 2, …), with `runs` and `requests`, ending in the last state. */
const trace = (states: ReadonlyArray<Messages.Messages>, runs: ReadonlyArray<Trace.Run>, requests: ReadonlyArray<Trace.Request> = []): Trace.Traces => ({
  stored: {
    mode: "stored",
    scenario,
    runs,
    decisions: [],
    saved: [],
    ends: [],
    requests,
    states: states.map((messages, i) => ({ seq: i + 1, messages })),
    final: states[states.length - 1]!,
    log: []
  }
})

const user = Messages.user("Go.")

describe("the laws on hand-made traces", () => {
  it("notBeforeTime: a scheduled call that runs before its time breaks it; at its time it holds", () => {
    const scheduled = [user, withStatus("c1", "remind", { _tag: "Scheduled", at: 1_000 })]
    const done = [user, withStatus("c1", "remind", { _tag: "Completed", result: { sent: true } })]
    expect(Law.notBeforeTime.check(Agents.refunds, trace([scheduled, done], [run("c1", "remind", 999, 5)]))).toEqual([
      "c1 was scheduled for 1000 but ran at 999"
    ])
    expect(Law.notBeforeTime.check(Agents.refunds, trace([scheduled, done], [run("c1", "remind", 1_000, 5)]))).toEqual([])
  })

  it("refusedNeverRuns: a rejected call that ran, or a model told another status, breaks it", () => {
    const rejected = [user, withStatus("c1", "remind", { _tag: "Rejected", by: "user", reason: "no" })]
    const told = [...rejected, Messages.assistant([{ _tag: "Text", text: "OK." }])]
    expect(Law.refusedNeverRuns.check(Agents.refunds, trace([rejected], [run("c1", "remind", 0, 5)]))).toEqual(["c1 is Rejected but ran"])
    expect(Law.refusedNeverRuns.check(Agents.refunds, trace([rejected], [], [request(5, rejected)]))).toEqual([])
    const stale = [user, withStatus("c1", "remind", { _tag: "Scheduled", at: 5 })]
    expect(Law.refusedNeverRuns.check(Agents.refunds, trace([rejected, told], [], [request(5, stale)]))).toEqual([
      "c1 is Rejected, but the model was last told it is Scheduled"
    ])
  })

  it("stepsBounded: a model call with a call unresolved, or past maxSteps, breaks it", () => {
    const open = [user, withStatus("c1", "remind", { _tag: "Scheduled", at: 5 })]
    const resolved = [user, withStatus("c1", "remind", { _tag: "Completed", result: { sent: true } })]
    expect(Law.stepsBounded.check(Agents.refunds, trace([open], [], [request(3, open)]))).toEqual([
      "model request #3 was made with c1 Scheduled unresolved"
    ])
    expect(Law.stepsBounded.check(Agents.refunds, trace([resolved], [], [request(3, resolved)]))).toEqual([])
    const third = [...resolved, withStatus("c2", "remind", { _tag: "Completed", result: { sent: true } })]
    expect(Law.stepsBounded.check(Agents.refunds, trace([third], [], [request(4, third)]))).toEqual([
      "model request #4 on the stored path is step 3; maxSteps is 2"
    ])
  })

  it("noDoubleRun: an idempotent tool's later attempts are allowed, up to its maxAttempts; a default tool's second run is not", () => {
    const state = [user, withStatus("c1", "sync_ledger", { _tag: "Completed", result: { synced: true } })]
    const again = (attempts: ReadonlyArray<number>, name: string) =>
      trace([state], attempts.map((attempt, i) => ({ ...run("c1", name, 0, i + 2), attempt })))
    expect(Law.noDoubleRun.check(Agents.refunds, again([1, 2, 3], "sync_ledger"))).toEqual([])
    expect(Law.noDoubleRun.check(Agents.refunds, again([1, 2, 3, 4], "sync_ledger"))).toEqual(["c1 ran 4 times on the stored path (attempts 1, 2, 3, 4)"])
    expect(Law.noDoubleRun.check(Agents.refunds, again([1, 1], "sync_ledger"))).toEqual(["c1 ran 2 times on the stored path (attempts 1, 1)"])
    expect(Law.noDoubleRun.check(Agents.refunds, again([1, 2], "remind"))).toEqual(["c1 ran 2 times on the stored path (attempts 1, 2)"])
  })
})
