/**
 * Grants and the reviewer in the property kit (issue 35): the governed refund
 * agent (reminders need a person or a grant, a reviewer model is asked about
 * the rest) keeps every law; its scenarios give, use, revoke and outlive
 * grants and consult the reviewer with every verdict; `approvedBeforeRun`
 * counts a grant only while the scenario kept it in force and matching; and
 * planted bugs 7 (a revoke path that records nothing) and 8 (a reviewer whose
 * "ask a person" is taken as advice) are caught, shrunk to a few steps, with
 * the grants, revocations and reviews in the report as code.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { Grant, Messages } from "../src/index.js"
import { Law, Scenario, Trace } from "../src/testing/index.js"
import * as Properties from "../src/testing/Properties.js"
import * as Agents from "./support/lawAgents.js"

const seed = 35

const remind = (id: string, text: string): Scenario.Call => ({ id, name: "remind", arguments: JSON.stringify({ text }) })

/** Two responses of one reminder each: the first waits for a person, the second comes after a grant. */
const twoReminders = (steps: ReadonlyArray<Scenario.Step>): Scenario.Scenario => ({
  request: "Go.",
  maxSteps: 4,
  responses: [{ calls: [remind("c1_1", "a")] }, { calls: [remind("c2_1", "b")] }],
  steps: [{ _tag: "Decide", kind: "approve", call: 0, by: 0 }, ...steps, { _tag: "Resume" }]
})

const grant = (extra: Partial<Scenario.Grant> = {}): Scenario.Grant => ({ _tag: "Grant", tool: "rem*", by: 0, expiresAfter: 60_000, ...extra })

const play = (agent: typeof Agents.governed, scenario: Scenario.Scenario) => Effect.runPromise(Trace.recordAll(agent, scenario))

describe("grants and the reviewer in the property kit", () => {
  it("a grant given while paused settles a later reminder, recorded in the trace; a revoked, expired or non-matching one does not", async () => {
    const granted = await play(Agents.governed, twoReminders([grant()]))
    expect(granted.stored.grants?.map(({ accepted, by, expiresAt, id, tool }) => ({ id, tool, by, expiresAt, accepted }))).toEqual([
      { id: "g1", tool: "rem*", by: "fin-1", expiresAt: 60_000, accepted: true }
    ])
    expect(granted.stored.settled?.map(({ grant, id }) => ({ id, grant }))).toEqual([{ id: "c2_1", grant: "g1" }])
    expect(granted.stored.runs.map((run) => run.id)).toEqual(["c1_1", "c2_1"])
    expect(Law.check(Agents.governed, granted)).toEqual([])

    const unsettled = [
      twoReminders([grant(), { _tag: "Revoke", grant: 0, by: 1 }]),
      twoReminders([grant({ expiresAfter: 1_000 }), { _tag: "Clock", to: "after", millis: 60_000 }]),
      twoReminders([grant({ where: { path: ["text"], equals: "a" } })]),
      twoReminders([grant({ tool: "refund" })])
    ]
    for (const scenario of unsettled) {
      const traces = await play(Agents.governed, scenario)
      expect(traces.stored.settled).toBeUndefined()
      expect(traces.stored.runs.map((run) => run.id)).toEqual(["c1_1"])
      expect(Messages.findTool(traces.stored.final, "c2_1")?.status._tag).toBe("AwaitingApproval")
      expect(Law.check(Agents.governed, traces)).toEqual([])
    }
    const revoked = await play(Agents.governed, unsettled[0]!)
    expect(revoked.stored.revokes?.map(({ accepted, by, grant }) => ({ grant, by, accepted }))).toEqual([{ grant: "g1", by: "fin-2", accepted: true }])
  })

  it("approvedBeforeRun counts a grant only while the scenario kept it in force and matching", async () => {
    const traces = await play(Agents.governed, twoReminders([grant()]))
    const stored = traces.stored
    const judged = (changed: Partial<Trace.Trace>) => Law.approvedBeforeRun.check(Agents.governed, { stored: { ...stored, ...changed } })
    const given = stored.grants![0]!
    const ran = stored.runs.find((run) => run.id === "c2_1")!
    expect(judged({})).toEqual([])
    expect(judged({ revokes: [{ seq: ran.seq - 1, grant: "g1", by: "fin-2", at: 0, accepted: true }] })).toEqual([
      "c2_1 (remind {\"text\":\"b\"}) ran on grant g1, which fin-2 revoked at 0, before it ran"
    ])
    // A revocation refused, or made after the run, takes nothing back.
    expect(judged({ revokes: [{ seq: ran.seq - 1, grant: "g1", by: "fin-2", at: 0, accepted: false, refusal: "GrantRevoked" }] })).toEqual([])
    expect(judged({ revokes: [{ seq: ran.seq + 1, grant: "g1", by: "fin-2", at: 0, accepted: true }] })).toEqual([])
    expect(judged({ runs: stored.runs.map((run) => (run.id === "c2_1" ? { ...run, at: 60_000 } : run)) })).toEqual([
      "c2_1 (remind {\"text\":\"b\"}) ran on grant g1, which is in force from 0 until 60000, but it ran at 60000"
    ])
    expect(judged({ grants: [{ ...given, tool: "refund" }] })).toEqual([
      "c2_1 (remind {\"text\":\"b\"}) ran on grant g1, which covers tool 'refund', not 'remind'"
    ])
    expect(judged({ grants: [{ ...given, where: { path: ["text"], equals: "a" } }] })).toEqual([
      "c2_1 (remind {\"text\":\"b\"}) ran on grant g1, which covers arguments {\"path\":[\"text\"],\"equals\":\"a\"}, not these"
    ])
    expect(judged({ grants: [{ ...given, accepted: false, refusal: "InvalidGrant" }] })).toEqual([
      "c2_1 (remind {\"text\":\"b\"}) ran on grant g1, which the scenario never gave before it ran"
    ])
    expect(judged({ grants: [{ ...given, seq: ran.seq - 1 }] })).toEqual([
      "c2_1 (remind {\"text\":\"b\"}) ran on grant g1, which was given after the call was proposed"
    ])
  })

  it("a call the reviewer did not clear runs only after a person's approval", async () => {
    const reviewed = (review: Scenario.Review | undefined, steps: ReadonlyArray<Scenario.Step>): Scenario.Scenario => ({
      request: "Go.",
      maxSteps: 3,
      responses: [{ calls: [{ id: "c1_1", name: "lookup_order", arguments: "{\"orderId\":\"A-1\"}", ...(review === undefined ? {} : { review }) }] }],
      steps
    })
    const cleared = await play(Agents.governed, reviewed(undefined, []))
    expect(cleared.stored.reviews?.map(({ id, review }) => ({ id, review }))).toEqual([{ id: "c1_1", review: { verdict: "safe", confidence: 1 } }])
    expect(cleared.stored.runs.map((run) => run.id)).toEqual(["c1_1"])
    for (const review of [{ verdict: "needs-person", confidence: 0.9 }, { verdict: "safe", confidence: 0.5 }, { verdict: "no-answer", confidence: 0 }] as const) {
      const paused = await play(Agents.governed, reviewed(review, []))
      expect(paused.stored.runs).toEqual([])
      expect(Messages.findTool(paused.stored.final, "c1_1")?.status._tag).toBe("AwaitingApproval")
      const approved = await play(Agents.governed, reviewed(review, [{ _tag: "Decide", kind: "approve", call: 0, by: 0 }, { _tag: "Resume" }]))
      expect(approved.stored.runs.map((run) => run.id)).toEqual(["c1_1"])
      expect(Law.check(Agents.governed, approved)).toEqual([])
      // The same run without the approval breaks the law.
      const unapproved: Trace.Trace = { ...approved.stored, decisions: [] }
      expect(Law.approvedBeforeRun.check(Agents.governed, { stored: unapproved })).toEqual([
        `c1_1 (lookup_order {"orderId":"A-1"}) ran without any approval (the reviewer answered ${review.verdict})`
      ])
    }
  })

  it("the governed agent keeps every law, and its scenarios give, use, revoke and outlive grants and consult the reviewer", async () => {
    const result = await Properties.check(Agents.governed, { numRuns: 80, seed })
    expect(result.report).toBe("")
    expect(result.failed).toBe(false)
    const seen = new Set<string>()
    for (const scenario of fc.sample(Properties.scenario(Agents.governed), { numRuns: 300, seed })) {
      const { stored } = await play(Agents.governed, scenario)
      for (const given of stored.grants ?? []) seen.add(`grant ${given.accepted ? "accepted" : given.refusal}${given.where === undefined ? "" : " with arguments"}`)
      for (const given of stored.revokes ?? []) seen.add(`revoke ${given.accepted ? "accepted" : given.refusal}`)
      for (const review of stored.reviews ?? []) seen.add(`review ${review.review.verdict}`)
      if ((stored.settled ?? []).length > 0) seen.add("a call settled by a grant")
      const expiries = new Set((stored.grants ?? []).filter((given) => given.accepted).map((given) => given.expiresAt))
      for (const line of stored.log) {
        const move = /^clock \+\d+ ms -> \d+ \((before|at|after) (\d+)\)$/.exec(line)
        if (move !== null && expiries.has(Number(move[2]))) seen.add(`the clock ${move[1]} a grant's expiry`)
      }
    }
    for (
      const kind of [
        "grant accepted", "grant accepted with arguments", "revoke accepted", "a call settled by a grant",
        "the clock before a grant's expiry", "the clock at a grant's expiry", "the clock after a grant's expiry",
        "review safe", "review needs-person", "review refuse", "review no-answer"
      ]
    ) expect(seen).toContain(kind)
  }, 60_000)

  it("the grant, revoke and review arbitraries give steps of the agent's tools and deciders", () => {
    const names = Agents.governed.tools.list.map((tool) => tool.name)
    const grants = fc.sample(Properties.grant(Agents.governed), { numRuns: 200, seed })
    for (const step of grants) {
      expect(names.some((name) => Grant.matchesTool(step.tool, name))).toBe(true)
      expect(step.by).toBeLessThan(4)
      expect([1_000, 60_000, 3_600_000]).toContain(step.expiresAfter)
      expect(Grant.make({ id: "g", tool: step.tool, where: step.where, by: "fin-1", at: 0, expiresAfter: step.expiresAfter })._tag).toBe("Success")
    }
    expect(new Set(grants.map((step) => step.tool))).toEqual(new Set(["*", ...names, ...names.map((name) => `${name.slice(0, name.length - 3)}*`)]))
    expect(grants.some((step) => step.where !== undefined)).toBe(true)
    expect(fc.sample(Properties.revoke(Agents.governed), { numRuns: 50, seed }).every((step) => step.by < 4)).toBe(true)
    expect(new Set(fc.sample(Properties.review, { numRuns: 50, seed }).map((review) => review.verdict))).toEqual(new Set(["safe", "needs-person", "refuse", "no-answer"]))
  })

  it("grants are given to an agent that takes them (its own grant or revoke path counts), and to no other", () => {
    const grantSteps = (agent: typeof Agents.governed) =>
      fc.sample(Properties.scenario(agent), { numRuns: 100, seed }).flatMap((scenario) => scenario.steps.filter((step) => step._tag === "Grant" || step._tag === "Revoke"))
    expect(grantSteps(Agents.refunds)).toEqual([])
    expect(grantSteps({ ...Agents.refunds, revoke: (messages) => Effect.succeed(messages) }).length).toBeGreaterThan(0)
    expect(grantSteps({ ...Agents.refunds, grant: (messages) => Effect.succeed(messages) }).length).toBeGreaterThan(0)
    expect(grantSteps({ ...Agents.refunds, grants: true }).length).toBeGreaterThan(0)
  })

  const planted = [
    { name: "7: a revoke path that records nothing (the grant stays in force)", agent: Agents.revokeIgnored, detail: /ran on grant g\d+, which fin-\d revoked at/ },
    { name: "8: a reviewer whose \"ask a person\" is taken as advice", agent: Agents.reviewerIgnored, detail: /ran without any approval \(the reviewer answered needs-person\)/ }
  ] as const

  for (const bug of planted) {
    it(`catches planted bug ${bug.name}, shrunk to a few steps, the grants and reviews in the report as code`, async () => {
      const result = await Properties.check(bug.agent, { numRuns: 300, seed })
      expect(result.failed).toBe(true)
      expect(result.violations[0]!.law).toBe("approvedBeforeRun")
      expect(result.violations[0]!.detail).toMatch(bug.detail)
      const counterexample = result.counterexample!
      expect(counterexample.responses.flatMap((response) => response.calls).length).toBeLessThanOrEqual(3)
      expect(counterexample.steps.length).toBeLessThanOrEqual(5)
      expect(result.report).toContain(Scenario.scriptCode(counterexample))
      if (bug.agent === Agents.revokeIgnored) {
        expect(result.report).toMatch(/ {2}Messages\.grant\(messages, \{"id":"g1",.*\}\) -> accepted/)
        expect(result.report).toMatch(/ {2}Messages\.revokeGrant\(messages, "g\d+", \{"by":"fin-\d","at":\d+\}\) -> accepted/)
      } else {
        expect(result.report).toContain("The reviewer's model (Reviewer.Options.model), in the order it was asked:")
        expect(result.report).toMatch(/MockLanguageModel\.text\(".*needs-person.*"\), \/\/ c\d_\d /)
      }
      // It replays without fast-check, and the agent as it should be keeps every law on it.
      const traces = await play(bug.agent, counterexample)
      expect(Law.check(bug.agent, traces).map((violation) => violation.law)).toContain("approvedBeforeRun")
      expect(Law.check(Agents.governed, await play(Agents.governed, counterexample))).toEqual([])
    }, 60_000)
  }
})
