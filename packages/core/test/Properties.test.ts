/**
 * The property kit (`@chat-ts/core/testing/Properties`, issue 35) on a refund
 * agent: the agent as it should be keeps every law over seeded scenarios, and
 * each of the four planted bugs (a lenient strategy, a middleware retrying a
 * refund, a decision path dropping the policy, a store losing its last
 * checkpoint) is caught by the law it breaks, shrunk to a scenario of a few
 * steps whose report reads as a script, and which `Trace.record` replays.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Messages } from "../src/index.js"
import fc from "fast-check"
import { Law, Scenario, Trace } from "../src/testing/index.js"
import * as Properties from "../src/testing/Properties.js"
import * as Agents from "./support/lawAgents.js"

const seed = 35

describe("the property kit on a refund agent", () => {
  it("the agent as it should be keeps every law", async () => {
    const result = await Properties.check(Agents.refunds, { numRuns: 80, seed })
    expect(result.report).toBe("")
    expect(result.failed).toBe(false)
    expect(result.numRuns).toBe(80)
  }, 60_000)

  it("its scenarios reach what the issue lists: crashes, quorums, edits, rejections, cancels, steering, expiries, scheduled runs", async () => {
    const seen = new Set<string>()
    for (const scenario of fc.sample(Properties.scenario(Agents.refunds), { numRuns: 250, seed })) {
      const { stored } = await Effect.runPromise(Trace.recordAll(Agents.refunds, scenario))
      for (const end of stored.ends) seen.add(end.error ?? end.outcome)
      for (const line of stored.log) if (/^steer \((cancel|queue)\) .* -> accepted$/.test(line)) seen.add(`a steering message (${/\((\w+)\)/.exec(line)![1]})`)
      for (const decision of stored.decisions) seen.add(`${decision.kind} ${decision.accepted ? "accepted" : decision.refusal}`)
      for (const message of stored.final) {
        for (const call of Messages.toolCallsOf(message)) seen.add(call.status._tag === "Cancelled" ? `Cancelled by ${call.status.by}` : call.status._tag)
      }
      for (const run of stored.runs) {
        if (run.name === "remind") seen.add("a scheduled call ran")
        if (run.attempt > 1) seen.add("an idempotent call ran again after a crash")
        const approvers = new Set(stored.decisions.filter((d) => d.id === run.id && d.accepted && d.seq < run.seq).map((d) => d.by.id))
        if (approvers.size >= 2) seen.add("a quorum's call ran")
      }
    }
    for (
      const kind of [
        "Paused", "Complete", "Crashed", "StepLimitReached", "approve accepted", "approve DecisionNotAllowed", "edit accepted",
        "edit InvalidEditedArguments", "reject accepted", "cancel accepted", "Expired", "Rejected", "Cancelled by requester",
        "Cancelled by user-message", "a steering message (cancel)", "a steering message (queue)", "Completed",
        "Failed", "a scheduled call ran", "a quorum's call ran", "an idempotent call ran again after a crash"
      ]
    ) expect(seen).toContain(kind)
  }, 60_000)

  const planted = [
    { name: "a strategy that lets refunds up to 500 run on their own", agent: Agents.lenientStrategy, laws: ["approvedBeforeRun"] },
    { name: "a middleware that retries a refund (not idempotent)", agent: Agents.retryingMiddleware, laws: ["noDoubleRun"] },
    { name: "a decision path that drops the decision policy", agent: Agents.policyDroppingDecide, laws: ["approvedBeforeRun"] },
    // The stored path loses what the plain one keeps: a result (resultsKept), or the state the pause resumes from (pathsAgree).
    { name: "a store that loses its last checkpoint", agent: Agents.forgetfulStore, laws: ["resultsKept", "pathsAgree"] }
  ] as const

  for (const bug of planted) {
    it(`catches ${bug.name}, shrunk to a few steps`, async () => {
      const result = await Properties.check(bug.agent, { numRuns: 100, seed })
      expect(result.failed).toBe(true)
      const law = result.violations[0]!.law
      expect(bug.laws).toContain(law)
      const counterexample = result.counterexample!
      // Shrunk: one response of one or two calls, few steps.
      expect(counterexample.responses.length).toBe(1)
      expect(counterexample.responses[0]!.calls.length).toBeLessThanOrEqual(2)
      expect(counterexample.steps.length).toBeLessThanOrEqual(4)
      // Readable: the broken law, the script, what happened, the seed to replay it.
      expect(result.report).toContain(`${law}: `)
      expect(result.report).toContain(Scenario.scriptCode(counterexample))
      expect(result.report).toContain(`seed: ${seed}, path: `)
      // The scenario replays without fast-check and breaks the same law.
      const traces = await Effect.runPromise(Trace.recordAll(bug.agent, counterexample))
      expect(Law.check(bug.agent, traces).map((violation) => violation.law)).toContain(law)
      // ... which the agent as it should be keeps.
      expect(Law.check(Agents.refunds, await Effect.runPromise(Trace.recordAll(Agents.refunds, counterexample)))).toEqual([])
    }, 60_000)
  }

  it("replaying a counterexample by its seed and path finds it at once", async () => {
    const found = await Properties.check(Agents.policyDroppingDecide, { numRuns: 100, seed })
    const path = /path: ("[^"]*")/.exec(found.report)![1]!
    const again = await Properties.check(Agents.policyDroppingDecide, { seed, path: JSON.parse(path) as string })
    expect(again.failed).toBe(true)
    expect(again.counterexample).toEqual(found.counterexample)
  }, 60_000)
})
