/**
 * Properties of the three outcomes that do not run (issue 26): whatever people decide, withdraw
 * or steer, and whenever the turn resumes, a call that ends rejected, expired or cancelled was
 * never started, a call a person rejected or withdrew never runs, and an approval past its
 * deadline never runs.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Result from "effect/Result"
import { Messages, Steering, Turn } from "../src/index.js"
import { call, conversation, response, T0 } from "./support/fixtures.js"

type Act = "approve" | "reject" | "cancel" | "none"

const scenario = fc.record({
  calls: fc.array(
    fc.record({ act: fc.constantFrom<Act>("approve", "reject", "cancel", "none"), deadline: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }) }),
    { minLength: 1, maxLength: 5 }
  ),
  steer: fc.constantFrom<"none" | Steering.Rule>("none", "cancel", "queue"),
  now: fc.integer({ min: 0, max: 120 })
})

/** Plays a scenario through the reducer: every started call succeeds; returns the ids started and the final messages. */
const play = (s: typeof scenario extends fc.Arbitrary<infer A> ? A : never) => {
  let messages: Messages.Messages = conversation(response(s.calls.map((c, i) =>
    call(`c${i}`, c.deadline === undefined ? { _tag: "AwaitingApproval" } : { _tag: "AwaitingApproval", expiresAt: T0 + c.deadline })
  )))
  s.calls.forEach((c, i) => {
    const id = `c${i}`
    const next = c.act === "approve"
      ? Messages.approve(messages, id)
      : c.act === "reject"
      ? Messages.reject(messages, id, "no")
      : c.act === "cancel"
      ? Messages.cancel(messages, id, { by: "operator" })
      : Result.succeed(messages)
    messages = Result.getOrThrow(next)
  })
  if (s.steer !== "none") messages = Result.getOrThrow(Steering.steer(messages, Messages.user("new"), { rule: s.steer }))
  const started = new Set<string>()
  let result = Turn.step(messages, Turn.Event.Resume({ now: T0 + s.now }))
  for (let guard = 0; guard < 20 && result[1]._tag === "RunTools"; guard++) {
    const calls = result[1].calls
    for (const c of calls) {
      expect(started.has(c.id)).toBe(false)
      started.add(c.id)
    }
    for (const c of calls) result = Turn.step(result[0], Turn.Event.ToolSucceeded({ id: c.id, result: "ok" }))
  }
  return { started, final: result[0], outcome: result[1] }
}

describe("Outcomes: properties", () => {
  it("rejected, expired and cancelled calls never run; a person's no or withdrawal always holds", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { final, started } = play(s)
        s.calls.forEach((c, i) => {
          const id = `c${i}`
          const status = Messages.findTool(final, id)!.status
          if (Messages.isRefused(Messages.findTool(final, id)!)) expect(started.has(id)).toBe(false)
          if (c.act === "reject") expect(status._tag).toBe("Rejected")
          if (c.act === "cancel") expect(status).toMatchObject({ _tag: "Cancelled", by: "operator" })
          const late = c.deadline !== undefined && T0 + c.deadline <= T0 + s.now
          if (c.act === "approve") {
            expect(status._tag).toBe(late ? "Expired" : "Completed")
            expect(started.has(id)).toBe(!late)
          }
          if (c.act === "none") {
            // Undecided: cancelled by a steering message (sent before the resume), expired after its deadline, else waiting.
            const expected = s.steer === "cancel" ? "Cancelled" : late ? "Expired" : "AwaitingApproval"
            expect(status._tag).toBe(expected)
            expect(started.has(id)).toBe(false)
          }
        })
      }),
      { numRuns: 300 }
    )
  })

  it("a steering message is answered exactly when the pause is resolved, and never lost", () => {
    fc.assert(
      fc.property(scenario.filter((s) => s.steer !== "none"), (s) => {
        const { final, outcome } = play(s)
        const resolved = Messages.pendingTools(final).length === 0
        const delivered = final.at(-1)!.role === "user"
        expect(delivered).toBe(resolved)
        if (delivered) expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 1 }))
        else expect(final.at(-1)!.queued).toHaveLength(1)
        // Stored and read back, the state is the same (the held message survives a restart).
        expect(Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(final))))).toStrictEqual(final)
      }),
      { numRuns: 300 }
    )
  })
})
