import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import * as DecisionPolicy from "../src/turn/DecisionPolicy.js"
import * as Messages from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"
import { deepFreeze } from "./support/fixtures.js"

const NOW = 1_700_000_000_000
const ARGS = `{"amount":100,"to":"bob"}`
const config = Turn.defaultConfig

/** A turn paused on call c1, requested by `sender`, decided by the strategy with `decision`. */
const pausedWith = (decision: Turn.Decision, sender: Messages.Identity | null = alice): Messages.Messages => {
  let [messages] = Turn.step(Messages.fromUser("Pay Bob.", sender === null ? {} : { sender }), Turn.Event.Resume({ now: NOW }), config)
  ;[messages] = Turn.step(messages, Turn.Event.ModelResponded({
    message: Messages.assistant([Messages.toolCall({ id: "c1", name: "pay", arguments: ARGS })])
  }), config)
  const [paused, outcome] = Turn.step(messages, Turn.Event.Decided({ now: NOW, decisions: [{ id: "c1", decision }] }), config)
  expect(outcome._tag === "Pause" || outcome._tag === "CallModel").toBe(true)
  return deepFreeze(paused)
}

const paused = (policy: Messages.DecisionPolicy, sender: Messages.Identity | null = alice) =>
  pausedWith(Turn.Decision.RequireApproval({ policy }), sender)

const alice: Messages.Identity = { id: "alice", roles: ["staff"] }
const bob: Messages.Identity = { id: "bob", roles: ["finance"] }
const carol: Messages.Identity = { id: "carol", roles: ["finance"] }
const as = (decider: Messages.Identity, at = NOW + 1) => ({ decider, at })

/** Resumes: the ids of the calls the reducer starts. */
const started = (messages: Messages.Messages): ReadonlyArray<string> => {
  const [, outcome] = Turn.step(messages, Turn.Event.Resume({ now: NOW + 10 }), config)
  return outcome._tag === "RunTools" ? outcome.calls.map((call) => call.id) : []
}

const statusOf = (messages: Messages.Messages) => Messages.findTool(messages, "c1")!.status
const failureTag = (result: Result.Result<unknown, { readonly _tag: string }>) =>
  Result.isFailure(result) ? result.failure._tag : "Success"

describe("DecisionPolicy: who may decide", () => {
  it("records the policy on the waiting call (and on a scheduled one)", () => {
    const policy = { approve: { roles: ["finance"] }, quorum: 2 }
    expect(statusOf(paused(policy))).toStrictEqual({ _tag: "AwaitingApproval", policy })
    const scheduled = pausedWith(Turn.Decision.Defer({ at: NOW + 1000, policy }))
    expect(statusOf(scheduled)).toStrictEqual({ _tag: "Scheduled", at: NOW + 1000, policy })
  })

  it("a strategy's policy that is not valid rejects the call by policy: nobody could approve it", () => {
    const messages = pausedWith(Turn.Decision.RequireApproval({ policy: { quorum: 0 } as Messages.DecisionPolicy }))
    const status = statusOf(messages)
    expect(status._tag).toBe("Rejected")
    expect(status._tag === "Rejected" && status.by).toBe("policy")
  })

  it("approves by role and records who, their roles, when, what and the arguments' hash", () => {
    const messages = paused({ approve: { roles: ["finance"] } })
    const approved = Result.getOrThrow(Messages.approve(messages, "c1", undefined, as(bob)))
    expect(statusOf(approved)).toStrictEqual({
      _tag: "Approved",
      policy: { approve: { roles: ["finance"] } },
      decision: { by: "bob", at: NOW + 1, roles: ["finance"], kind: "approve", argumentsHash: DecisionPolicy.argumentsHash(ARGS) }
    })
    expect(DecisionPolicy.argumentsHash(ARGS)).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(started(approved)).toStrictEqual(["c1"])
  })

  it("refuses a decider its policy does not name, one without an identity, and an invalid identity; nothing changes", () => {
    const messages = paused({ approve: { roles: ["finance"] }, reject: { ids: ["carol"] } })
    expect(failureTag(Messages.approve(messages, "c1", undefined, as(alice)))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.approve(messages, "c1"))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.reject(messages, "c1", "no"))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.reject(messages, "c1", "no", as(bob)))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.approveJson(messages, "c1", ARGS, as(alice)))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.approve(messages, "c1", undefined, as({ id: "" })))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.approve(messages, "c1", undefined, { decider: bob, at: Number.NaN }))).toBe("DecisionNotAllowed")
    expect(statusOf(messages)._tag).toBe("AwaitingApproval")
    const refused = Messages.approve(messages, "c1", undefined, as(alice))
    expect(Result.isFailure(refused) && refused.failure.message).toBe(
      "'alice' may not approve tool call 'c1': they are not among those its policy lets approve"
    )
    expect(failureTag(Messages.reject(messages, "c1", "no", as(carol)))).toBe("Success")
  })

  it("edits and rejections default to the approvers; an edit may name its own people", () => {
    const messages = paused({ approve: { roles: ["finance"] }, edit: { ids: ["carol"] } })
    expect(failureTag(Messages.approve(messages, "c1", { amount: 1, to: "bob" }, as(bob)))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.approve(messages, "c1", { amount: 1, to: "bob" }, as(carol)))).toBe("Success")
    expect(failureTag(Messages.reject(messages, "c1", undefined, as(bob)))).toBe("Success")
    expect(failureTag(Messages.reject(messages, "c1", undefined, as(alice)))).toBe("DecisionNotAllowed")
  })

  it("four-eyes: the person who asked may not approve, may reject; an unknown requester blocks every approval", () => {
    const messages = paused({ notRequester: true })
    const own = Messages.approve(messages, "c1", undefined, as(alice))
    expect(failureTag(own)).toBe("DecisionNotAllowed")
    expect(Result.isFailure(own) && own.failure.message).toContain("four-eyes")
    expect(failureTag(Messages.reject(messages, "c1", "changed my mind", as(alice)))).toBe("Success")
    expect(started(Result.getOrThrow(Messages.approve(messages, "c1", undefined, as(bob))))).toStrictEqual(["c1"])
    const anonymous = paused({ notRequester: true }, null)
    expect(DecisionPolicy.requesterOf(anonymous, "c1")).toBeUndefined()
    expect(failureTag(Messages.approve(anonymous, "c1", undefined, as(bob)))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.reject(anonymous, "c1", "no", as(bob)))).toBe("Success")
  })

  it("a kind left out is open to anyone identified; one named with no ids and no roles, to nobody", () => {
    const open = paused({})
    expect(failureTag(Messages.approve(open, "c1", undefined, as({ id: "zed" })))).toBe("Success")
    expect(failureTag(Messages.approve(open, "c1"))).toBe("DecisionNotAllowed")
    const closed = paused({ approve: {} })
    for (const person of [alice, bob, carol]) {
      expect(failureTag(Messages.approve(closed, "c1", undefined, as(person)))).toBe("DecisionNotAllowed")
      expect(failureTag(Messages.reject(closed, "c1", undefined, as(person)))).toBe("DecisionNotAllowed")
    }
  })

  it("a scheduled call's policy governs running it early and cancelling it", () => {
    const scheduled = pausedWith(Turn.Decision.Defer({ at: NOW + 60_000, policy: { approve: { ids: ["carol"] } } }))
    expect(failureTag(Messages.approve(scheduled, "c1", undefined, as(bob)))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.reject(scheduled, "c1", undefined, as(bob)))).toBe("DecisionNotAllowed")
    const early = Result.getOrThrow(Messages.approve(scheduled, "c1", undefined, as(carol)))
    expect(statusOf(early)).toMatchObject({ _tag: "Approved", scheduledAt: NOW + 60_000, decision: { by: "carol" } })
    expect(started(early)).toStrictEqual(["c1"])
  })

  it("a quorum of two: the call waits until two distinct people said yes; a second yes by one person is refused", () => {
    const messages = paused({ approve: { roles: ["finance"] }, quorum: 2 })
    const once = Result.getOrThrow(Messages.approve(messages, "c1", undefined, as(bob)))
    expect(statusOf(once)._tag).toBe("AwaitingApproval")
    expect(DecisionPolicy.progress(Messages.findTool(once, "c1")!).votes.map((vote) => vote.by)).toStrictEqual(["bob"])
    expect(started(once)).toStrictEqual([])
    expect(failureTag(Messages.approve(once, "c1", undefined, as(bob, NOW + 2)))).toBe("DuplicateVote")
    expect(failureTag(Messages.approve(once, "c1", { amount: 1, to: "bob" }, as(carol)))).toBe("DecisionNotAllowed")
    const twice = Result.getOrThrow(Messages.approve(once, "c1", undefined, as(carol, NOW + 2)))
    const status = statusOf(twice)
    expect(status._tag === "Approved" && status.decision?.votes?.map((vote) => vote.by)).toStrictEqual(["bob", "carol"])
    expect(started(twice)).toStrictEqual(["c1"])
  })

  it("one rejection rejects a quorum's call, the yeses so far kept on its record", () => {
    const once = Result.getOrThrow(Messages.approve(paused({ quorum: 2 }), "c1", undefined, as(bob)))
    const rejected = Result.getOrThrow(Messages.reject(once, "c1", "not this month", as(carol)))
    const status = statusOf(rejected)
    expect(status).toMatchObject({ _tag: "Rejected", by: "user", reason: "not this month", decision: { by: "carol", kind: "reject" } })
    expect(status._tag === "Rejected" && status.decision?.votes?.map((vote) => vote.by)).toStrictEqual(["bob"])
  })

  it("without a policy, decisions work as before, and a decider given is recorded", () => {
    const messages = pausedWith(Turn.Decision.RequireApproval({}))
    expect(statusOf(Result.getOrThrow(Messages.approve(messages, "c1")))).toStrictEqual({ _tag: "Approved" })
    expect(statusOf(Result.getOrThrow(Messages.approve(messages, "c1", undefined, as(bob))))).toMatchObject({
      _tag: "Approved",
      decision: { by: "bob", kind: "approve" }
    })
  })

  it("the reducer does not run an approval written past the policy (a forged or hand-built state): the call waits again", () => {
    const policy = { approve: { roles: ["finance"] }, quorum: 2 }
    const messages = paused(policy)
    const forged = Messages.updateTool(messages, "c1", (call) => ({
      ...call,
      status: { _tag: "Approved", policy, decision: { by: "bob", at: NOW, argumentsHash: DecisionPolicy.argumentsHash(ARGS) } }
    }))
    const [next, outcome] = Turn.step(forged, Turn.Event.Resume({ now: NOW + 10 }), config)
    expect(outcome._tag).toBe("Pause")
    expect(statusOf(next)).toStrictEqual({ _tag: "AwaitingApproval", policy })
  })

  it("hostile deciders: an id of 201 characters, 101 roles, roles that are not strings are refused; a \"__proto__\" id is just an id", () => {
    const messages = paused({ approve: { roles: ["finance"] } })
    const invalid = [
      { id: "x".repeat(201), roles: ["finance"] },
      { id: "bob", roles: Array.from({ length: 101 }, () => "finance") },
      { id: "bob", roles: [1] as unknown as ReadonlyArray<string> },
      { id: 7 } as unknown as Messages.Identity
    ]
    for (const decider of invalid) expect(failureTag(Messages.approve(messages, "c1", undefined, as(decider)))).toBe("DecisionNotAllowed")
    expect(failureTag(Messages.approve(messages, "c1", undefined, as({ id: "__proto__", roles: ["__proto__"] })))).toBe("DecisionNotAllowed")
    const proto = Result.getOrThrow(Messages.approve(messages, "c1", undefined, as({ id: "__proto__", roles: ["finance"] })))
    expect(statusOf(proto)).toMatchObject({ _tag: "Approved", decision: { by: "__proto__" } })
    expect(Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(proto))))).toStrictEqual(proto)
  })

  it("an edit refused at resume puts the call back under its policy: the next decision is judged by the same rule", () => {
    const policy = { approve: { roles: ["finance"] } }
    const edited = Result.getOrThrow(Messages.approve(paused(policy), "c1", { amount: "a lot" }, as(bob)))
    const [back, outcome] = Turn.step(edited, Turn.Event.Resume({ now: NOW + 10, invalidEdits: [{ id: "c1", detail: "amount: expected a number" }] }), config)
    expect(outcome._tag).toBe("InvalidEdits")
    expect(statusOf(back)).toStrictEqual({ _tag: "AwaitingApproval", policy })
    expect(failureTag(Messages.approve(back, "c1", undefined, as(alice)))).toBe("DecisionNotAllowed")
  })

  it("a policy, votes and a sender survive the stored format", () => {
    const once = Result.getOrThrow(Messages.approve(paused({ quorum: 2, notRequester: true }), "c1", undefined, as(bob)))
    expect(Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(once))))).toStrictEqual(once)
  })

  it("the model never sees who asked or decided", () => {
    const approved = Result.getOrThrow(Messages.approve(paused({}), "c1", undefined, as(bob)))
    const seen = JSON.stringify(Messages.projectToolCall(Messages.findTool(approved, "c1")!))
    expect(seen).not.toContain("finance")
    expect(seen).not.toContain("sha256")
    expect(seen).not.toContain("alice")
  })
})

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

const people = ["alice", "bob", "carol", "dave"] as const
const roles = ["staff", "finance", "ops"] as const

const identity: fc.Arbitrary<Messages.Identity> = fc.record({
  id: fc.constantFrom(...people),
  roles: fc.subarray([...roles])
})

const deciders: fc.Arbitrary<DecisionPolicy.Deciders | undefined> = fc.option(
  fc.record({ ids: fc.subarray([...people]), roles: fc.subarray([...roles]) }, { requiredKeys: [] }),
  { nil: undefined }
)

const policy: fc.Arbitrary<Messages.DecisionPolicy> = fc.record({
  approve: deciders,
  reject: deciders,
  notRequester: fc.boolean(),
  quorum: fc.integer({ min: 1, max: 3 })
}).map((p) => JSON.parse(JSON.stringify(p)))

const attempt = fc.record({
  decider: fc.option(identity, { nil: undefined }),
  kind: fc.constantFrom("approve", "reject")
})

/** Who a policy lets take a decision, worked out on its own (the model the properties check against). */
const allowed = (who: DecisionPolicy.Deciders | undefined, person: Messages.Identity) =>
  who === undefined || (who.ids ?? []).includes(person.id) || (person.roles ?? []).some((role) => (who.roles ?? []).includes(role))

describe("DecisionPolicy properties", () => {
  it("no call runs without the approvals its policy demands; a refused decision changes nothing", () => {
    fc.assert(fc.property(policy, fc.option(identity, { nil: undefined }), fc.array(attempt, { maxLength: 6 }), (p, requester, attempts) => {
      let messages = paused(p, requester ?? null)
      const yeses = new Set<string>()
      let rejected = false
      attempts.forEach((a, i) => {
        const before = messages
        const options = a.decider === undefined ? undefined : as(a.decider, NOW + 1 + i)
        const result = a.kind === "approve"
          ? Messages.approve(messages, "c1", undefined, options)
          : Messages.reject(messages, "c1", undefined, options)
        if (Result.isFailure(result)) {
          expect(["DecisionNotAllowed", "DuplicateVote", "ToolCallAlreadyResolved"]).toContain(result.failure._tag)
          expect(messages).toBe(before)
          return
        }
        // The model: only an allowed, identified decider gets here (not the requester for a yes under four-eyes).
        const d = a.decider!
        expect(d).toBeDefined()
        if (a.kind === "reject") {
          expect(allowed(p.reject ?? p.approve, d)).toBe(true)
          rejected = true
        } else {
          expect(allowed(p.approve, d)).toBe(true)
          if (p.notRequester) expect(requester !== undefined && requester.id !== d.id).toBe(true)
          expect(yeses.has(d.id)).toBe(false)
          yeses.add(d.id)
        }
        messages = result.success
      })
      const runs = started(messages).includes("c1")
      expect(runs).toBe(!rejected && yeses.size >= (p.quorum ?? 1))
    }), { numRuns: 300 })
  })

  it("the reducer runs an approved call under a policy only when its recorded votes meet it", () => {
    const vote = fc.record({
      by: fc.constantFrom(...people),
      roles: fc.subarray([...roles]),
      at: fc.constant(NOW),
      argumentsHash: fc.constantFrom(DecisionPolicy.argumentsHash(ARGS), DecisionPolicy.argumentsHash("{}"))
    })
    fc.assert(fc.property(policy, fc.option(identity, { nil: undefined }), fc.array(vote, { maxLength: 4 }), (p, requester, votes) => {
      const messages = paused(p, requester ?? null)
      const forged = Messages.updateTool(messages, "c1", (call) => ({
        ...call,
        status: votes.length === 0
          ? { _tag: "Approved", policy: p }
          : { _tag: "Approved", policy: p, decision: { ...votes.at(-1)!, votes } }
      }))
      const counted = new Set(
        votes.filter((v) =>
          v.argumentsHash === DecisionPolicy.argumentsHash(ARGS) && allowed(p.approve, { id: v.by, roles: v.roles }) &&
          (!p.notRequester || (requester !== undefined && requester.id !== v.by))
        ).map((v) => v.by)
      )
      expect(started(forged).includes("c1")).toBe(counted.size >= (p.quorum ?? 1))
    }), { numRuns: 300 })
  })
})
