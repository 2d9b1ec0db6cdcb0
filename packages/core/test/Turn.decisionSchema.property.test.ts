/**
 * `Turn.DecisionSchema` and the hand-written guard `Turn.isValidDecision` (the reducer's fast path)
 * take the same values, and `Turn.validDecision` (what a recording shell stores) changes a call
 * exactly as the reducer's own fail-closed reading of the value it replaces.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import * as Turn from "../src/turn/Turn.js"
import { call, conversation, response, step, T0 } from "./support/fixtures.js"

const maxMillis = 8.64e15

/** Numbers around every edge a time has (not finite, out of range, -0, fractions). */
const number = fc.oneof(
  fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 0, maxMillis, -maxMillis, maxMillis + 1, T0, 0.5, 1.5, -1),
  fc.double(),
  fc.integer()
)
/** Any value a field may hold. */
const junk = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string({ maxLength: 4 }), number, fc.boolean(), fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }))
/** Mostly a value of the right kind, sometimes anything. */
const mostly = <A>(arbitrary: fc.Arbitrary<A>): fc.Arbitrary<A | unknown> =>
  fc.oneof({ arbitrary, weight: 4 }, { arbitrary: junk, weight: 1 })
/** Ids, canonical or not (whitespace around, empty, too long, a zero-width space). */
const id = fc.constantFrom("bob", "carol", "admin", " bob", "bob ", "", "x".repeat(201), "a\u200bb")
const deciders = mostly(fc.record({ ids: fc.array(id, { maxLength: 3 }), roles: fc.array(id, { maxLength: 2 }) }, { requiredKeys: [] }))
const policy = mostly(fc.record({
  approve: deciders,
  edit: deciders,
  reject: deciders,
  notRequester: mostly(fc.boolean()),
  quorum: mostly(fc.oneof(fc.integer({ min: 0, max: 101 }), number))
}, { requiredKeys: [] }))
const review = mostly(fc.record({
  verdict: mostly(fc.constantFrom("safe", "needs-person", "refuse", "unavailable", "maybe")),
  reason: mostly(fc.string({ maxLength: 4 })),
  confidence: mostly(fc.oneof(fc.double({ min: -0.5, max: 1.5 }), number))
}, { requiredKeys: ["verdict", "reason"] }))
/** Decision-shaped values: a known tag (or not) with fields that are valid, missing or wrong. */
const decisionLike = fc.record({
  _tag: mostly(fc.constantFrom("Execute", "RequireApproval", "Defer", "Reject", "Invalid", "Granted", "Approve")),
  expiresAt: mostly(number),
  at: mostly(number),
  review,
  policy,
  reason: mostly(fc.string({ maxLength: 4 })),
  message: mostly(fc.string({ maxLength: 4 })),
  grant: mostly(fc.string({ maxLength: 4 }))
}, { requiredKeys: [] })
const anyValue = fc.oneof({ arbitrary: decisionLike, weight: 9 }, { arbitrary: fc.anything(), weight: 1 })

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))
const isDecision = Schema.is(Turn.DecisionSchema)
const json = Schema.fromJsonString(Turn.DecisionSchema)

describe("Turn.DecisionSchema", () => {
  it("takes exactly the values isValidDecision takes", () => {
    fc.assert(fc.property(anyValue, (value) => {
      expect(isDecision(value)).toBe(Turn.isValidDecision(value))
    }), { numRuns: 3000 })
  })

  it("takes valid decisions of every kind (the generators reach both sides)", () => {
    const seen = new Set<string>()
    fc.assert(fc.property(decisionLike, (value) => {
      if (Turn.isValidDecision(value)) seen.add(value._tag)
    }), { numRuns: 3000 })
    expect([...seen].sort()).toEqual(["Defer", "Execute", "Granted", "Invalid", "Reject", "RequireApproval"])
  })

  it("a valid decision goes through JSON and back unchanged in meaning, still valid", () => {
    fc.assert(fc.property(decisionLike, (value) => {
      fc.pre(Turn.isValidDecision(value))
      const back = Schema.decodeUnknownSync(json)(Schema.encodeSync(json)(value))
      expect(Turn.isValidDecision(back)).toBe(true)
      const [decided] = step(proposed, Turn.Event.Decided({ now: T0, decisions: [{ id: "c", decision: value }] }))
      const [replayed] = step(proposed, Turn.Event.Decided({ now: T0, decisions: [{ id: "c", decision: back }] }))
      // As stored: JSON holds no `undefined` field, which is all the trip through JSON drops.
      expect(plain(replayed)).toStrictEqual(plain(decided))
    }), { numRuns: 1000 })
  })
})

const proposed = conversation(response([call("c")]))

describe("Turn.validDecision", () => {
  it("is the value itself when valid; otherwise a valid decision the reducer applies the same way", () => {
    fc.assert(fc.property(anyValue, (value) => {
      const valid = Turn.validDecision(value)
      expect(isDecision(valid)).toBe(true)
      if (Turn.isValidDecision(value)) expect(valid).toBe(value)
      const decisions = [{ id: "c", decision: value as Turn.Decision }]
      const [asIs, outcome] = step(proposed, Turn.Event.Decided({ now: T0, decisions }))
      const [recorded, recordedOutcome] = step(proposed, Turn.Event.Decided({ now: T0, decisions: [{ id: "c", decision: valid }] }))
      expect(recorded).toStrictEqual(asIs)
      expect(recordedOutcome).toStrictEqual(outcome)
    }), { numRuns: 2000 })
  })

  it("an invalid policy is rejected by policy, any other invalid value waits for a person", () => {
    expect(Turn.validDecision({ _tag: "RequireApproval", policy: { quorum: 0 } })).toStrictEqual(
      Turn.Decision.Reject({ reason: "Its decision policy is not valid, so nobody could approve it." })
    )
    expect(Turn.validDecision({ _tag: "Defer", at: Number.NaN })).toStrictEqual(Turn.Decision.RequireApproval({}))
    expect(Turn.validDecision(undefined)).toStrictEqual(Turn.Decision.RequireApproval({}))
  })
})
