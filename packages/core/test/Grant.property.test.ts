import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import { Grant, Messages, Turn } from "../src/index.js"
import { deepFreeze, T0 } from "./support/fixtures.js"

// The timeout is only a safety limit for slow machines, not an assertion.
const runs = { timeout: 60_000, numRuns: 300 }
const config: Turn.Config = { maxSteps: 1_000, waitForScheduled: false }

/** What can happen in a conversation: grants made and revoked, calls proposed, calls decided by a grant. */
type Op =
  | { readonly _tag: "grant"; readonly tool: string; readonly from: number; readonly length: number; readonly to?: string | undefined }
  | { readonly _tag: "revoke"; readonly pick: number }
  | { readonly _tag: "propose"; readonly name: string; readonly to: string }
  | { readonly _tag: "decide"; readonly pick: number; readonly now: number }

const addresses = ["a@x.com", "b@x.com", "c@y.org"]
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    _tag: fc.constant("grant" as const),
    tool: fc.constantFrom("send_email", "read_*", "*", "delete_*"),
    from: fc.integer({ min: -50, max: 50 }),
    length: fc.integer({ min: 1, max: 100 }),
    to: fc.option(fc.constantFrom(...addresses), { nil: undefined })
  }),
  fc.record({ _tag: fc.constant("revoke" as const), pick: fc.nat(20) }),
  fc.record({ _tag: fc.constant("propose" as const), name: fc.constantFrom("send_email", "read_file", "delete_files"), to: fc.constantFrom(...addresses) }),
  fc.record({ _tag: fc.constant("decide" as const), pick: fc.nat(20), now: fc.integer({ min: -20, max: 200 }) })
)

/** What the test knows of a grant, apart from the messages: the order it was made in, its times, whether it was revoked. */
interface Known {
  readonly id: string
  readonly seq: number
  readonly tool: string
  readonly at: number
  readonly expiresAt: number
  readonly to: string | undefined
  revoked: boolean
}

interface Settled {
  readonly call: string
  readonly grant: string
  readonly byGrant: boolean
  readonly expected: boolean
}

/**
 * Plays the operations through the reducer: calls are proposed by the model, decided by a strategy
 * that names any grant (forged or not), then run or rejected so the next call can come. Returns what
 * each grant decision did and what the rule says it should have done.
 */
const play = (ops: ReadonlyArray<Op>): ReadonlyArray<Settled> => {
  let messages: Messages.Messages = Messages.fromUser("go")
  let [state, outcome] = Turn.step(messages, Turn.Event.Resume({ now: T0 }), config)
  messages = state
  let seq = 0
  const grants: Array<Known> = []
  let proposed: { id: string; seq: number; name: string; to: string } | undefined
  const settled: Array<Settled> = []
  let calls = 0
  for (const o of ops) {
    switch (o._tag) {
      case "grant": {
        const id = `g${grants.length}`
        const at = T0 + o.from
        messages = Result.getOrThrow(Messages.grant(messages, {
          id,
          tool: o.tool,
          ...(o.to === undefined ? {} : { where: { path: ["to"], equals: o.to } }),
          by: "p",
          at,
          expiresAt: at + o.length
        }))
        grants.push({ id, seq: seq++, tool: o.tool, at, expiresAt: at + o.length, to: o.to, revoked: false })
        break
      }
      case "revoke": {
        const known = grants[o.pick % Math.max(1, grants.length)]
        if (known === undefined || known.revoked) break
        messages = Result.getOrThrow(Messages.revokeGrant(messages, known.id, { by: "q", at: T0 }))
        known.revoked = true
        break
      }
      case "propose": {
        if (proposed !== undefined || outcome._tag !== "CallModel") break
        const id = `c${calls++}`
        ;[messages, outcome] = Turn.step(messages, Turn.Event.ModelResponded({
          message: Messages.assistant([Messages.toolCall({ id, name: o.name, arguments: JSON.stringify({ to: o.to }) })])
        }), config)
        proposed = { id, seq: seq++, name: o.name, to: o.to }
        break
      }
      case "decide": {
        if (proposed === undefined) break
        // Any id: a real grant, or one that does not exist (a forged strategy).
        const grant = o.pick < grants.length ? grants[o.pick]!.id : `forged${o.pick}`
        const now = T0 + o.now
        const frozen = deepFreeze(messages)
        ;[messages, outcome] = Turn.step(frozen, Turn.Event.Decided({ now, decisions: [{ id: proposed.id, decision: Turn.Decision.Granted({ grant }) }] }), config)
        const status = Messages.findTool(messages, proposed.id)!.status
        const known = grants.find((g) => g.id === grant)
        const expected = known !== undefined && known.seq < proposed.seq && !known.revoked && known.at <= now && now < known.expiresAt &&
          Grant.matchesTool(known.tool, proposed.name) && (known.to === undefined || known.to === proposed.to)
        settled.push({ call: proposed.id, grant, byGrant: status._tag === "Running" && status.decision?.grant === grant, expected })
        // Bring the turn back to "call the model": finish the run, or reject the waiting call.
        if (outcome._tag === "RunTools") {
          ;[messages, outcome] = Turn.step(messages, Turn.Event.ToolSucceeded({ id: proposed.id, result: "ok" }), config)
        } else {
          expect(status._tag).toBe("AwaitingApproval")
          messages = Result.getOrThrow(Messages.reject(messages, proposed.id))
          ;[messages, outcome] = Turn.step(messages, Turn.Event.Resume({ now }), config)
        }
        expect(outcome._tag).toBe("CallModel")
        proposed = undefined
        break
      }
    }
  }
  return settled
}

describe("grants: properties of the reducer (generated conversations)", () => {
  it("a call runs on a grant exactly when the grant was made before it was proposed, is live at the decision, and covers it", () => {
    fc.assert(fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      for (const s of play(ops)) expect(s.byGrant, `${s.call} / ${s.grant}`).toBe(s.expected)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("a grant made while a call waits for its decision never settles it, however wide the grant", () => {
    fc.assert(fc.property(fc.array(op, { maxLength: 20 }), fc.integer({ min: 0, max: 99 }), (ops, now) => {
      const before = play(ops)
      // Propose a call, then grant everything for a long time, then decide it on that very grant.
      const grantCount = ops.filter((o) => o._tag === "grant").length
      const settled = play([
        ...ops,
        { _tag: "propose", name: "send_email", to: "a@x.com" },
        { _tag: "grant", tool: "*", from: 0, length: 100 },
        { _tag: "decide", pick: grantCount, now }
      ])
      const last = settled[settled.length - 1]!
      // The call may not have been proposed (the turn was waiting on another one): then nothing new was decided.
      if (settled.length > before.length && last.grant === `g${grantCount}`) expect(last.byGrant).toBe(false)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("whatever decision names a grant, a call is never settled by a grant that was not in the messages when it was decided", () => {
    fc.assert(fc.property(fc.array(op, { maxLength: 40 }), fc.string(), (ops, forged) => {
      const settled = play([...ops, { _tag: "propose", name: "send_email", to: "a@x.com" }])
      expect(settled.every((s) => !s.grant.startsWith("forged") || !s.byGrant)).toBe(true)
      // A grant id made of anything (even "__proto__") settles nothing when it is not in the messages.
      const messages = Result.getOrThrow(Messages.grant(Messages.fromUser("x"), { id: "real", tool: "*", by: "p", at: T0, expiresAt: T0 + 100 }))
      const [started] = Turn.step(messages, Turn.Event.Resume({ now: T0 }), config)
      const [proposed] = Turn.step(started, Turn.Event.ModelResponded({ message: Messages.assistant([Messages.toolCall({ id: "c", name: "x", arguments: "{}" })]) }), config)
      const [decided] = Turn.step(proposed, Turn.Event.Decided({ now: T0 + 1, decisions: [{ id: "c", decision: Turn.Decision.Granted({ grant: forged }) }] }), config)
      expect(Messages.findTool(decided, "c")!.status._tag).toBe(forged === "real" ? "Running" : "AwaitingApproval")
    }), { numRuns: runs.numRuns })
  }, runs.timeout)
})
