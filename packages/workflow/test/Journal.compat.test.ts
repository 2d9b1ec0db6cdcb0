/**
 * A journal written by an earlier version replays: its recorded decisions are read leniently (the
 * earlier shell recorded a strategy's decision as it came, a policy nobody could meet included) and
 * taken as that version's reducer took them.
 */
import { Turn } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { Decided } from "../src/internal/shell.js"

describe("recorded decisions of an earlier version", () => {
  const earlier = {
    now: 1_000,
    decisions: [
      { id: "a", decision: { _tag: "RequireApproval", policy: { quorum: -1 } } },
      { id: "b", decision: { _tag: "Execute" } },
      { id: "c", decision: { _tag: "Defer", at: 2_000 } }
    ]
  }

  it("decode, a decision today's schema refuses included", () => {
    expect(Schema.is(Turn.DecisionSchema)(earlier.decisions[0]!.decision)).toBe(false)
    const decoded = Schema.decodeUnknownSync(Decided)(JSON.parse(JSON.stringify(earlier)))
    expect(decoded.decisions.map(({ id }) => id)).toEqual(["a", "b", "c"])
  })

  it("are taken as the reducer takes them: the unmeetable policy rejects its call, the others stand", () => {
    const decoded = Schema.decodeUnknownSync(Decided)(earlier)
    const taken = decoded.decisions.map(({ decision }) => Turn.validDecision(decision))
    expect(taken[0]).toMatchObject({ _tag: "Reject" })
    expect(taken.slice(1)).toEqual([{ _tag: "Execute" }, { _tag: "Defer", at: 2_000 }])
  })

  it("today's decisions are written in DecisionSchema's shape", () => {
    const written = Schema.encodeSync(Decided)({ now: 1, decisions: [{ id: "x", decision: Turn.Decision.RequireApproval({}) }] })
    expect(Schema.is(Turn.DecisionSchema)(written.decisions[0]!.decision)).toBe(true)
  })
})
