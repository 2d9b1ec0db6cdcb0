/**
 * The property kit's structured answers and late approvals (issue 35): what
 * core does with an approval given after the call's deadline (it expires, it
 * never runs), `Law.structuredAnswer` on hand-made traces, the generated
 * scenarios reaching valid and near-valid answers and late approvals, and
 * planted bugs 5 (an answer handed back undecoded) and 6 (a late approval
 * that runs) caught with a shrunk, readable counterexample.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { Messages } from "../src/index.js"
import { Law, Scenario, Trace } from "../src/testing/index.js"
import * as Properties from "../src/testing/Properties.js"
import * as Agents from "./support/lawAgents.js"

const seed = 35

/** A refund of 200 (a person must approve it within the hour), approved late, then resumed. */
const lateRefund: Scenario.Scenario = {
  request: "Refund A-1.",
  responses: [{ calls: [{ id: "c1", name: "refund", arguments: "{\"orderId\":\"A-1\",\"amount\":200}" }] }],
  maxSteps: 3,
  steps: [{ _tag: "Decide", kind: "approve-late", call: 0, by: 0 }, { _tag: "Resume" }]
}

describe("approve-late", () => {
  it("core accepts an approval past the deadline, then expires the call (approvedLate) on resume; it never runs and the model is told", async () => {
    const traces = await Effect.runPromise(Trace.recordAll(Agents.refunds, lateRefund))
    for (const trace of [traces.stored, traces.plain!, traces.streamed!]) {
      expect(trace.decisions.map(({ accepted, at, kind }) => ({ kind, accepted, at }))).toEqual([{ kind: "approve-late", accepted: true, at: 3_600_001 }])
      expect(trace.runs).toEqual([])
      const status = Messages.findTool(trace.final, "c1")!.status
      // Who approved (too late) stays on the record.
      expect(status).toMatchObject({ _tag: "Expired", expiresAt: 3_600_000, approvedLate: true, decision: { by: "fin-1", at: 3_600_001, kind: "approve" } })
      // The model was called again, and saw the call expired.
      expect(Messages.findTool(trace.requests.at(-1)!.request.messages, "c1")?.status._tag).toBe("Expired")
    }
    expect(traces.stored.log).toContain("clock +3600001 ms -> 3600001 (past the deadline 3600000 of c1)")
    expect(Law.check(Agents.refunds, traces)).toEqual([])
  })

  it("refusedNeverRuns: a decision path that lets a late approval run breaks it", async () => {
    const traces = await Effect.runPromise(Trace.recordAll(Agents.lateApprovalRuns, lateRefund))
    expect(traces.stored.runs.map((run) => run.id)).toEqual(["c1"])
    expect(Law.refusedNeverRuns.check(Agents.lateApprovalRuns, traces)).toEqual([
      "c1 was approved (approve-late by fin-1) at 3600001, past its deadline 3600000, but ran",
      "c1 was approved (approve-late by fin-1) at 3600001, past its deadline 3600000, but the model was last told it is Completed"
    ])
  })

  it("an approval in time is no late approval", async () => {
    const inTime: Scenario.Scenario = { ...lateRefund, steps: [{ _tag: "Decide", kind: "approve", call: 0, by: 0 }, { _tag: "Resume" }] }
    const traces = await Effect.runPromise(Trace.recordAll(Agents.lateApprovalRuns, inTime))
    expect(traces.stored.runs.map((run) => run.id)).toEqual(["c1"])
    expect(Law.check(Agents.lateApprovalRuns, traces)).toEqual([])
  })
})

const answered = (outcome: Trace.Answered["outcome"]): Trace.Traces => ({
  stored: { mode: "stored", scenario: lateRefund, runs: [], decisions: [], saved: [], ends: [], requests: [], states: [], final: [], log: [], structured: [{ seq: 1, process: 1, outcome }] }
})

describe("Law.structuredAnswer", () => {
  it("holds for a value of the output's type or a typed failure; breaks on a value that does not decode or a defect", () => {
    const law = Law.structuredAnswer
    const agent = Agents.structuredRefunds
    expect(law.check(agent, answered({ _tag: "Value", value: { orderId: "A-1", refunded: 200, approved: true } }))).toEqual([])
    expect(law.check(agent, answered({ _tag: "Failure", error: "StructuredOutputError", typed: true }))).toEqual([])
    expect(law.check(agent, answered({ _tag: "Value", value: { orderId: "A-1", refunded: "200", approved: true } }))).toEqual([
      "the structured answer on the stored path is {\"approved\":true,\"orderId\":\"A-1\",\"refunded\":\"200\"}, which does not decode with the agent's output"
    ])
    expect(law.check(agent, answered({ _tag: "Value", value: { orderId: "A-1", approved: true } }))).toHaveLength(1)
    expect(law.check(agent, answered({ _tag: "Failure", error: "SyntaxError: Unexpected end of JSON input", typed: false }))).toEqual([
      "the structured answer on the stored path failed with a defect, not a typed error: SyntaxError: Unexpected end of JSON input"
    ])
    // An agent without an output promises nothing about answers.
    expect(law.check(Agents.refunds, answered({ _tag: "Value", value: 1 }))).toEqual([])
  })
})

/** A lookup, then the final answer `final`. */
const answering = (final: string): Scenario.Scenario => ({
  request: "Refund A-1.",
  responses: [{ calls: [{ id: "c1", name: "lookup_order", arguments: "{\"orderId\":\"A-1\"}" }] }],
  maxSteps: 3,
  steps: [],
  final
})

describe("Trace.structured", () => {
  it("records on every path what the agent's code got: the decoded value, or the typed failure", async () => {
    const valid = await Effect.runPromise(Trace.recordAll(Agents.structuredRefunds, answering("{\"orderId\":\"A-1\",\"refunded\":200,\"approved\":true}")))
    const missing = await Effect.runPromise(Trace.recordAll(Agents.structuredRefunds, answering("{\"orderId\":\"A-1\",\"approved\":true}")))
    const proto = await Effect.runPromise(Trace.recordAll(Agents.structuredRefunds, answering("{\"__proto__\":{\"polluted\":true},\"orderId\":\"A-1\",\"refunded\":1,\"approved\":false}")))
    for (const mode of ["stored", "plain", "streamed"] as const) {
      expect(valid[mode]!.structured?.map((answer) => answer.outcome)).toEqual([{ _tag: "Value", value: { orderId: "A-1", refunded: 200, approved: true } }])
      expect(missing[mode]!.structured?.map((answer) => answer.outcome)).toEqual([{ _tag: "Failure", error: "StructuredOutputError", typed: true }])
      expect(missing[mode]!.ends.map((end) => end.error)).toEqual(["StructuredOutputError"])
      // A `__proto__` key is refused, typed (core's JSON reading), and pollutes nothing.
      expect(proto[mode]!.structured?.map((answer) => answer.outcome)).toEqual([{ _tag: "Failure", error: "StructuredOutputError", typed: true }])
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    }
    expect(Law.check(Agents.structuredRefunds, valid)).toEqual([])
    expect(Law.check(Agents.structuredRefunds, missing)).toEqual([])
    expect(valid.stored.log).toContain("structured answer -> value {\"approved\":true,\"orderId\":\"A-1\",\"refunded\":200}")
    // The worker path (through `Worker.resume`) asks for no structured answer.
    const worker = await Effect.runPromise(Trace.record(Agents.structuredRefunds, answering("{\"orderId\":\"A-1\"}"), "worker"))
    expect(worker.ends.map((end) => end.outcome)).toEqual(["Complete"])
    expect(worker.structured).toEqual([])
    // An agent without `output` records no structured answers.
    expect((await Effect.runPromise(Trace.recordAll(Agents.refunds, answering("{}")))).stored.structured).toBeUndefined()
  })

  it("a valid answer of a root that is not an object is sent wrapped in { value }", () => {
    const answers = fc.sample(Properties.validAnswers(Schema.Array(Schema.String)), { numRuns: 5, seed })
    for (const answer of answers) expect(Object.keys(answer as object)).toEqual(["value"])
    expect(fc.sample(Properties.validAnswers(Agents.RefundSummary), { numRuns: 5, seed }).every(Schema.is(Agents.RefundSummary))).toBe(true)
  })
})

describe("the property kit on a structured refund agent", () => {
  it("the agent as it should be keeps every law", async () => {
    const result = await Properties.check(Agents.structuredRefunds, { numRuns: 60, seed })
    expect(result.report).toBe("")
    expect(result.failed).toBe(false)
  }, 90_000)

  it("its scenarios reach valid answers, each kind of near-valid one, and late approvals that expire", async () => {
    const seen = new Set<string>()
    const finals = new Set<string>()
    for (const scenario of fc.sample(Properties.scenario(Agents.structuredRefunds), { numRuns: 120, seed })) {
      finals.add(scenario.final!)
      const { stored } = await Effect.runPromise(Trace.recordAll(Agents.structuredRefunds, scenario))
      for (const answer of stored.structured ?? []) seen.add(answer.outcome._tag === "Value" ? "a decoded value" : answer.outcome.error)
      for (const decision of stored.decisions) seen.add(`${decision.kind} ${decision.accepted ? "accepted" : decision.refusal}`)
      for (const message of stored.final) {
        for (const call of Messages.toolCallsOf(message)) if (call.status._tag === "Expired" && call.status.approvedLate === true) seen.add("Expired, approved late")
      }
    }
    for (const kind of ["a decoded value", "StructuredOutputError", "approve-late accepted", "Expired, approved late"]) expect(seen).toContain(kind)
    // The final answers: valid JSON for the Schema, JSON that does not decode, text that is not JSON, a `__proto__` key.
    const parse = (text: string): unknown => {
      try {
        return JSON.parse(text)
      } catch {
        return notJson
      }
    }
    const notJson = Symbol("not JSON")
    const parsed = [...finals].map(parse)
    const valid = Schema.is(Agents.RefundSummary)
    expect(parsed.some((value) => value !== notJson && valid(value))).toBe(true)
    expect(parsed.some((value) => value !== notJson && !valid(value))).toBe(true)
    expect(parsed).toContain(notJson)
    expect([...finals].some((text) => text.includes("\"__proto__\""))).toBe(true)
  }, 90_000)

  const planted = [
    { name: "an answer handed back as the raw JSON parse, not decoded", agent: Agents.undecodedAnswer, good: Agents.structuredRefunds, law: "structuredAnswer" },
    { name: "a decision path that lets a late approval run", agent: Agents.lateApprovalRuns, good: Agents.refunds, law: "refusedNeverRuns" }
  ] as const

  for (const bug of planted) {
    it(`catches ${bug.name}, shrunk to a few steps`, async () => {
      // Up to 300 scenarios, as catchRates.ts measures (the late approval needs tens: see docs/benchmarks.md).
      const result = await Properties.check(bug.agent, { numRuns: 300, seed })
      expect(result.failed).toBe(true)
      expect(result.violations[0]!.law).toBe(bug.law)
      const counterexample = result.counterexample!
      expect(counterexample.responses.length).toBe(1)
      expect(counterexample.responses[0]!.calls.length).toBeLessThanOrEqual(2)
      expect(counterexample.steps.length).toBeLessThanOrEqual(4)
      // Readable: the script (its final JSON answer included) and the scenario as pasteable code.
      expect(result.report).toContain(`${bug.law}: `)
      expect(result.report).toContain(Scenario.scriptCode(counterexample))
      expect(result.report).toContain(Scenario.code(counterexample))
      if (bug.law === "structuredAnswer") {
        expect(result.report).toContain(`MockLanguageModel.text(${JSON.stringify(counterexample.final)})`)
        expect(result.report).toMatch(/\n {2}structured answer -> value \{.*\}\n/)
      } else {
        expect(result.report).toContain("\"kind\": \"approve-late\"")
        expect(result.report).toMatch(/\n {2}clock \+\d+ ms -> \d+ \(past the deadline \d+ of c1_\d\)\n {2}approve-late c1_\d by [\w-]+ -> accepted\n/)
      }
      const traces = await Effect.runPromise(Trace.recordAll(bug.agent, counterexample))
      expect(Law.check(bug.agent, traces).map((violation) => violation.law)).toContain(bug.law)
      expect(Law.check(bug.good, await Effect.runPromise(Trace.recordAll(bug.good, counterexample)))).toEqual([])
    }, 90_000)
  }
})
