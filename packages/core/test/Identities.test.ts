import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import * as DecisionPolicy from "../src/turn/DecisionPolicy.js"
import * as Messages from "../src/turn/Messages.js"
import * as Steering from "../src/turn/Steering.js"
import * as Turn from "../src/turn/Turn.js"
import { deepFreeze } from "./support/fixtures.js"

// Issue 32, section 1's "Also": ids compared byte for byte, votes lost on a cancel or an expiry,
// anonymous grantors, and withdrawals of policy-protected calls that checked nobody.

const NOW = 1_700_000_000_000
const ARGS = `{"amount":100,"to":"bob"}`
const config = Turn.defaultConfig

const alice: Messages.Identity = { id: "alice", roles: ["staff"] }
const bob: Messages.Identity = { id: "bob", roles: ["finance"] }
const carol: Messages.Identity = { id: "carol", roles: ["finance"] }
const as = (decider: Messages.Identity, at = NOW + 1) => ({ decider, at })

/** A turn paused on call c1, requested by `sender`, decided by the strategy with `decision`. */
const pausedWith = (decision: Turn.Decision, sender: Messages.Identity | null = alice): Messages.Messages => {
  let [messages] = Turn.step(Messages.fromUser("Pay Bob.", sender === null ? {} : { sender }), Turn.Event.Resume({ now: NOW }), config)
  ;[messages] = Turn.step(messages, Turn.Event.ModelResponded({
    message: Messages.assistant([Messages.toolCall({ id: "c1", name: "pay", arguments: ARGS })])
  }), config)
  const [paused] = Turn.step(messages, Turn.Event.Decided({ now: NOW, decisions: [{ id: "c1", decision }] }), config)
  return deepFreeze(paused)
}
const paused = (policy: Messages.DecisionPolicy, sender: Messages.Identity | null = alice) =>
  pausedWith(Turn.Decision.RequireApproval({ policy }), sender)

const statusOf = (messages: Messages.Messages) => Messages.findTool(messages, "c1")!.status
const failureOf = <A, E>(result: Result.Result<A, E>): E => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure
}

/** Resumes: the ids of the calls the reducer starts. */
const started = (messages: Messages.Messages, now = NOW + 10): ReadonlyArray<string> => {
  const [, outcome] = Turn.step(messages, Turn.Event.Resume({ now }), config)
  return outcome._tag === "RunTools" ? outcome.calls.map((call) => call.id) : []
}

/** Ids that look like another id, or like nobody. */
const lookAlikes = ["Bob ", " bob", "bob\u200b", "alice\u200b", "\u200dalice", "bob\ufeff", "al\u202eice", "bob\n", "bob\u0000", " ", "", "e\u0301", "bob\u2028", "\ud800bob"]

describe("canonical identities", () => {
  it("a decider whose id or a role is not canonical is refused with why; the messages are unchanged", () => {
    const messages = paused({ approve: { roles: ["finance"] }, notRequester: true, quorum: 2 })
    for (const id of lookAlikes) {
      const refused = failureOf(Messages.approve(messages, "c1", undefined, as({ id, roles: ["finance"] })))
      expect(refused._tag).toBe("DecisionNotAllowed")
      if (id !== "") expect(refused.message).toContain("is not a canonical id")
      expect(failureOf(Messages.reject(messages, "c1", "no", as({ id, roles: ["finance"] })))._tag).toBe("DecisionNotAllowed")
    }
    const roleRefused = failureOf(Messages.approve(messages, "c1", undefined, as({ id: "dave", roles: ["finance\u200b"] })))
    expect(roleRefused.message).toContain("the decider's role")
    expect(failureOf(Messages.approve(messages, "c1", undefined, as({ id: "Bob ", roles: ["finance"] }))).message).toBe(
      "'Bob ' may not approve tool call 'c1': the decider's id \"Bob \" is not a canonical id: it has whitespace around it"
    )
    expect(failureOf(Messages.approve(messages, "c1", undefined, as({ id: "alice\u200b", roles: ["finance"] }))).message).toContain(
      "it holds an invisible or control character (U+200B)"
    )
    expect(failureOf(Messages.approve(messages, "c1", undefined, as({ id: "e\u0301" }))).message).toContain("not in Unicode normal form NFC")
    expect(statusOf(messages)._tag).toBe("AwaitingApproval")
  })

  it("\"Bob \" is no second voter beside bob, \"alice\\u200b\" does not pass four-eyes as not alice, \" \" decides nothing", () => {
    const quorum = paused({ approve: { roles: ["finance"] }, quorum: 2 })
    const once = Result.getOrThrow(Messages.approve(quorum, "c1", undefined, as(bob)))
    expect(failureOf(Messages.approve(once, "c1", undefined, as({ id: "bob ", roles: ["finance"] })))._tag).toBe("DecisionNotAllowed")
    const fourEyes = paused({ notRequester: true })
    expect(failureOf(Messages.approve(fourEyes, "c1", undefined, as({ id: "alice\u200b" })))._tag).toBe("DecisionNotAllowed")
    expect(failureOf(Messages.approve(paused({}), "c1", undefined, as({ id: " " })))._tag).toBe("DecisionNotAllowed")
    // Without a policy too: the id is recorded as the decider.
    const plain = pausedWith(Turn.Decision.RequireApproval({}))
    expect(failureOf(Messages.approve(plain, "c1", undefined, as({ id: " " })))._tag).toBe("DecisionNotAllowed")
    expect(Result.isSuccess(Messages.approve(plain, "c1", undefined, as({ id: "Bob" })))).toBe(true)
  })

  it("ids are case-sensitive: bob and Bob are two people (give ids as the identity provider issues them)", () => {
    const quorum = paused({ approve: { roles: ["finance"] }, quorum: 2 })
    const once = Result.getOrThrow(Messages.approve(quorum, "c1", undefined, as(bob)))
    const twice = Result.getOrThrow(Messages.approve(once, "c1", undefined, as({ id: "Bob", roles: ["finance"] }, NOW + 2)))
    expect(started(twice)).toStrictEqual(["c1"])
  })

  it("a vote written past the check by a look-alike id counts for nobody", () => {
    const once = Result.getOrThrow(Messages.approve(paused({ approve: { roles: ["finance"] }, quorum: 2 }), "c1", undefined, as(bob)))
    const vote = DecisionPolicy.progress(Messages.findTool(once, "c1")!).votes[0]!
    const forged = Messages.updateTool(once, "c1", (call) => ({
      ...call,
      status: {
        _tag: "Approved",
        policy: { approve: { roles: ["finance"] }, quorum: 2 },
        decision: { by: "bob ", at: NOW + 2, kind: "approve", votes: [vote, { ...vote, by: "bob\u200b" }] }
      }
    }))
    expect(started(forged)).toStrictEqual([])
  })

  it("a requester whose id is not canonical blocks every approval under four-eyes", () => {
    const messages = paused({ notRequester: true }, { id: "alice " })
    const refused = failureOf(Messages.approve(messages, "c1", undefined, as(bob)))
    expect(refused.message).toContain("who asked is not known")
    expect(Result.isSuccess(Messages.reject(messages, "c1", "no", as(bob)))).toBe(true)
  })

  it("a policy naming an id or role that is not canonical is not valid: the call is rejected by policy, a stored one is decided by nobody", () => {
    for (const policy of [{ approve: { ids: ["bob "] } }, { reject: { roles: ["finance\u200b"] } }, { edit: { ids: [""] } }]) {
      expect(DecisionPolicy.isValid(policy)).toBe(false)
      const status = statusOf(paused(policy))
      expect(status._tag === "Rejected" && status.by).toBe("policy")
    }
    // A stored document whose fixed policy (on the call, where no status write reaches) names one.
    const invalid = { approve: { ids: ["bob "] } }
    const stored: Messages.Messages = paused({}).map((message) => ({
      ...message,
      parts: message.parts.map((part) =>
        part._tag === "ToolCall" && part.id === "c1"
          ? { ...part, decidedUnder: { policy: invalid }, status: { _tag: "AwaitingApproval" as const, policy: invalid } }
          : part
      )
    }))
    expect(failureOf(Messages.approve(stored, "c1", undefined, as(bob))).message).toContain("an id its policy lets approve \"bob \" is not a canonical id")
    expect(DecisionPolicy.isValid({ approve: { ids: ["bob", "Zoë"], roles: ["finance"] } })).toBe(true)
  })

  it("invisible letters and blanks that are not control or format characters (a Hangul filler, a variation selector, a combining grapheme joiner, a braille blank, a no-break or wide space inside) are refused too", () => {
    const hidden = ["alice\u3164", "alice\u115f", "alice\uffa0", "alice\u034f", "alice\ufe0f", "alice\u2800", "ali\u00a0ce", "ali\u3000ce", "ali\u2003ce", "\u{e0061}alice"]
    const fourEyes = paused({ notRequester: true })
    const quorum = Result.getOrThrow(Messages.approve(paused({ approve: { roles: ["finance"] }, quorum: 2 }), "c1", undefined, as({ id: "alice", roles: ["finance"] })))
    for (const id of hidden) {
      const refused = failureOf(Messages.approve(fourEyes, "c1", undefined, as({ id })))
      expect(refused._tag).toBe("DecisionNotAllowed")
      expect(refused.message).toContain("is not a canonical id")
      expect(failureOf(Messages.approve(quorum, "c1", undefined, as({ id, roles: ["finance"] })))._tag).toBe("DecisionNotAllowed")
      expect(failureOf(Messages.grant(fourEyes, { id: "g1", tool: "pay", by: id, at: NOW, expiresAfter: 60_000 }))._tag).toBe("InvalidGrant")
    }
    // A plain space inside an id is text like any other.
    expect(Result.isSuccess(Messages.approve(fourEyes, "c1", undefined, as({ id: "alice smith" })))).toBe(true)
  })

  it("property: an id with whitespace around it, or an invisible character in it, never decides", () => {
    const canonical = fc.string({ minLength: 1, maxLength: 12 }).filter((id) => id.trim() === id && !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u.test(id) && id.normalize("NFC") === id)
    const dirt = fc.constantFrom(" ", "\t", "\u200b", "\u200c", "\u200d", "\ufeff", "\u202e", "\u2066", "\u0007", "\u00ad")
    fc.assert(
      fc.property(canonical, dirt, fc.constantFrom("prefix", "suffix", "inside"), (id, bad, where) => {
        const dirty = where === "prefix" ? bad + id : where === "suffix" ? id + bad : id.slice(0, 1) + bad + id.slice(1)
        fc.pre(dirty.trim() !== dirty || /[\p{Cc}\p{Cf}]/u.test(dirty))
        // By role, and under a policy open to anyone identified: only the id itself tells people apart.
        for (const policy of [{ approve: { roles: ["finance"] } }, {}]) {
          const messages = paused(policy)
          expect(Result.isFailure(Messages.approve(messages, "c1", undefined, as({ id: dirty, roles: ["finance"] })))).toBe(true)
          expect(Result.isSuccess(Messages.approve(messages, "c1", undefined, as({ id, roles: ["finance"] })))).toBe(true)
        }
      }),
      { numRuns: 200 }
    )
  })
})

describe("votes stay on the record", () => {
  const twoOfFinance = { approve: { roles: ["finance"] }, quorum: 3 }

  it("a cancelled call keeps the yeses its quorum had", () => {
    const once = Result.getOrThrow(Messages.approve(paused(twoOfFinance), "c1", undefined, as(bob)))
    const cancelled = Result.getOrThrow(Messages.cancel(once, "c1", { by: "operator", cancellation: { by: "carol", roles: ["finance"], at: NOW + 2 } }))
    expect(statusOf(cancelled)).toMatchObject({ _tag: "Cancelled", votes: [{ by: "bob", at: NOW + 1 }] })
    const steered = Result.getOrThrow(Steering.steer(once, Messages.user("Never mind.", { sender: alice })))
    expect(statusOf(steered)).toMatchObject({ _tag: "Cancelled", by: "user-message", votes: [{ by: "bob" }] })
    const superseded = Result.getOrThrow(Messages.append(once, Messages.user("Never mind.", { sender: alice }), { supersede: "moved on" }))
    expect(statusOf(superseded)).toMatchObject({ _tag: "Cancelled", votes: [{ by: "bob" }] })
    // Round trip through the stored format.
    expect(Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(cancelled))))).toStrictEqual(cancelled)
  })

  it("an expired call keeps them too", () => {
    const waiting = pausedWith(Turn.Decision.RequireApproval({ policy: twoOfFinance, expiresAt: NOW + 100 }))
    const once = Result.getOrThrow(Messages.approve(waiting, "c1", undefined, as(bob)))
    const [expired] = Turn.step(once, Turn.Event.Resume({ now: NOW + 200 }), config)
    expect(statusOf(expired)).toMatchObject({ _tag: "Expired", expiresAt: NOW + 100, votes: [{ by: "bob" }] })
    expect(Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(expired))))).toStrictEqual(expired)
  })

  it("with no votes nothing is added (the stored statuses as before)", () => {
    const cancelled = Result.getOrThrow(Messages.cancel(pausedWith(Turn.Decision.RequireApproval({})), "c1"))
    expect(statusOf(cancelled)).toStrictEqual({ _tag: "Cancelled", by: "requester" })
  })
})

describe("grants name who gives them", () => {
  const grant = (by: string) => Messages.grant(paused({}), { id: "g1", tool: "pay", by, at: NOW, expiresAfter: 60_000 })

  it("a grant by an empty or look-alike id is an InvalidGrant saying why", () => {
    for (const by of ["", " ", "alice ", "alice\u200b"]) {
      const refused = failureOf(grant(by))
      expect(refused._tag).toBe("InvalidGrant")
      expect(refused.message).toContain("is not a canonical id")
    }
    expect(Result.isSuccess(grant("alice"))).toBe(true)
  })

  it("a stored grant by an empty id settles nothing", () => {
    const base = [Messages.user("Hi."), Messages.assistant("Hello.")]
    const made = Result.getOrThrow(Messages.grant(base, { id: "g1", tool: "pay", by: "alice", at: NOW, expiresAfter: 60_000 }))
    // The same grant, honest: it settles the call.
    const settle = (messages: Messages.Messages) => {
      let [next] = Turn.step([...messages, Messages.user("Pay again.")], Turn.Event.Resume({ now: NOW + 1 }), config)
      ;[next] = Turn.step(next, Turn.Event.ModelResponded({
        message: Messages.assistant([Messages.toolCall({ id: "c2", name: "pay", arguments: ARGS })])
      }), config)
      const [decided] = Turn.step(next, Turn.Event.Decided({ now: NOW + 2, decisions: [{ id: "c2", decision: Turn.Decision.Granted({ grant: "g1" }) }] }), config)
      return Messages.findTool(decided, "c2")!.status
    }
    expect(settle(made)).toMatchObject({ _tag: "Running", decision: { by: "alice", grant: "g1" } })
    const anonymous: Messages.Messages = made.map((message) =>
      message.grants === undefined ? message : { ...message, grants: message.grants.map((g) => ({ ...g, by: "" })) }
    )
    expect(settle(anonymous)).toStrictEqual({ _tag: "AwaitingApproval" })
  })

  it("a revocation by a look-alike id is refused", () => {
    const made = Result.getOrThrow(grant("alice"))
    expect(failureOf(Messages.revokeGrant(made, "g1", { by: "alice\u200b", at: NOW + 1 }))._tag).toBe("InvalidGrant")
  })
})

describe("withdrawing a call under a decision policy", () => {
  const policy = { approve: { roles: ["finance"] }, reject: { ids: ["carol"] } }
  const record = (person: Messages.Identity) => ({ by: person.id, at: NOW + 5, ...(person.roles === undefined ? {} : { roles: person.roles }) })

  it("Messages.cancel: the requester may withdraw their own request; someone the policy lets reject may; nobody else, and not anonymously", () => {
    const messages = paused(policy)
    expect(statusOf(Result.getOrThrow(Messages.cancel(messages, "c1", { by: "requester", cancellation: record(alice) })))).toMatchObject({
      _tag: "Cancelled",
      by: "requester",
      cancellation: { by: "alice" }
    })
    expect(Result.isSuccess(Messages.cancel(messages, "c1", { by: "operator", cancellation: record(carol) }))).toBe(true)
    for (const options of [{}, { by: "operator" as const }, { by: "operator" as const, cancellation: record(bob) }, { cancellation: record({ id: "alice " }) }]) {
      expect(failureOf(Messages.cancel(messages, "c1", options))).toMatchObject({ _tag: "DecisionNotAllowed", kind: "cancel" })
    }
    expect(failureOf(Messages.cancel(messages, "c1", { by: "operator", cancellation: record(bob) })).message).toBe(
      "'bob' may not cancel tool call 'c1': only the person who asked for it, or someone its decision policy lets reject it, may withdraw it"
    )
    expect(statusOf(messages)._tag).toBe("AwaitingApproval")
  })

  it("several requesters (user messages delivered together): each may withdraw their request; others only by the reject rule", () => {
    const dave: Messages.Identity = { id: "dave" }
    let [messages] = Turn.step(
      [...Messages.fromUser("Pay 900 to alice.", { sender: alice }), Messages.user("Thanks!", { sender: dave })],
      Turn.Event.Resume({ now: NOW }),
      config
    )
    ;[messages] = Turn.step(messages, Turn.Event.ModelResponded({
      message: Messages.assistant([Messages.toolCall({ id: "c1", name: "pay", arguments: ARGS })])
    }), config)
    ;[messages] = Turn.step(messages, Turn.Event.Decided({ now: NOW, decisions: [{ id: "c1", decision: Turn.Decision.RequireApproval({ policy }) }] }), config)
    for (const person of [alice, dave, carol]) {
      expect(Result.isSuccess(Messages.cancel(messages, "c1", { by: "requester", cancellation: record(person) }))).toBe(true)
    }
    expect(failureOf(Messages.cancel(messages, "c1", { by: "operator", cancellation: record(bob) }))._tag).toBe("DecisionNotAllowed")
  })

  it("rejection by role: a withdrawer's roles count; a call without a policy is withdrawn by anyone, as before", () => {
    const byRole = paused({ approve: { ids: ["dave"] }, reject: { roles: ["finance"] } })
    expect(Result.isSuccess(Messages.cancel(byRole, "c1", { by: "operator", cancellation: record(bob) }))).toBe(true)
    const plain = pausedWith(Turn.Decision.RequireApproval({}))
    expect(Result.isSuccess(Messages.cancel(plain, "c1"))).toBe(true)
    expect(Result.isSuccess(Messages.cancel(plain, "c1", { by: "operator", cancellation: record(bob) }))).toBe(true)
    // An approved call, not yet running, keeps its policy: the same rule.
    const approved = Result.getOrThrow(Messages.approve(paused(policy), "c1", undefined, as(bob)))
    expect(failureOf(Messages.cancel(approved, "c1", { by: "operator", cancellation: record(bob) }))._tag).toBe("DecisionNotAllowed")
    expect(Result.isSuccess(Messages.cancel(approved, "c1", { by: "operator", cancellation: record(carol) }))).toBe(true)
  })

  it("steering: the requester's message withdraws the call; another person's only if the policy lets them reject it", () => {
    const messages = paused(policy)
    const own = Result.getOrThrow(Steering.steer(messages, Messages.user("Never mind.", { sender: alice })))
    expect(statusOf(own)).toMatchObject({ _tag: "Cancelled", by: "user-message" })
    const other = failureOf(Steering.steer(messages, Messages.user("Forget it.", { sender: bob })))
    expect(other._tag).toBe("DecisionNotAllowed")
    expect(other._tag === "DecisionNotAllowed" && other.kind).toBe("cancel")
    expect(failureOf(Steering.steer(messages, Messages.user("Forget it.")))._tag).toBe("DecisionNotAllowed")
    expect(Result.isSuccess(Steering.steer(messages, Messages.user("Forget it.", { sender: carol })))).toBe(true)
    // Without a sender, the cancellation record names who sends it.
    expect(Result.isSuccess(Steering.steer(messages, Messages.user("Forget it."), { cancellation: record(carol) }))).toBe(true)
    // Queued, nothing is withdrawn: anyone may send it.
    const queued = Result.getOrThrow(Steering.steer(messages, Messages.user("And then?", { sender: bob }), { rule: "queue" }))
    expect(statusOf(queued)._tag).toBe("AwaitingApproval")
  })

  it("property: a withdrawal succeeds exactly for the requester or someone the reject rule (else the approve rule) names; a refused one changes nothing", () => {
    const people = ["ann", "ben", "cid"]
    const roles = ["finance", "ops"]
    const deciders = fc.option(fc.record({ ids: fc.option(fc.subarray(people), { nil: undefined }), roles: fc.option(fc.subarray(roles), { nil: undefined }) }, { requiredKeys: [] }), { nil: undefined })
    const person = fc.record({ id: fc.constantFrom(...people), roles: fc.subarray(roles) })
    fc.assert(
      fc.property(deciders, deciders, fc.constantFrom(...people), person, (approve, reject, requester, who) => {
        const policy = { ...(approve === undefined ? {} : { approve }), ...(reject === undefined ? {} : { reject }) }
        const messages = paused(policy, { id: requester })
        const rule = reject ?? approve
        const named = rule === undefined ||
          (rule.ids ?? []).includes(who.id) || (rule.roles ?? []).some((role) => who.roles.includes(role))
        const expected = who.id === requester || named
        const result = Messages.cancel(messages, "c1", { by: "operator", cancellation: { by: who.id, roles: who.roles, at: NOW + 1 } })
        expect(Result.isSuccess(result)).toBe(expected)
        if (Result.isFailure(result)) expect(result.failure).toMatchObject({ _tag: "DecisionNotAllowed", kind: "cancel" })
        const steered = Steering.steer(messages, Messages.user("Never mind.", { sender: who }))
        expect(Result.isSuccess(steered)).toBe(expected)
        // What a UI asks before it shows a Cancel button is the same rule.
        expect(DecisionPolicy.mayWithdraw(messages, Messages.findTool(messages, "c1")!, who).allowed).toBe(expected)
      }),
      { numRuns: 300 }
    )
  })

  it("DecisionPolicy.mayWithdraw answers what Messages.cancel would, with why not; a call that started cannot be withdrawn", () => {
    const messages = paused(policy)
    const call = Messages.findTool(messages, "c1")!
    expect(DecisionPolicy.mayWithdraw(messages, call, alice)).toStrictEqual({ allowed: true })
    expect(DecisionPolicy.mayWithdraw(messages, call, carol)).toStrictEqual({ allowed: true })
    expect(DecisionPolicy.mayWithdraw(messages, call, bob)).toStrictEqual({
      allowed: false,
      detail: "'bob' may not cancel tool call 'c1': only the person who asked for it, or someone its decision policy lets reject it, may withdraw it"
    })
    expect(DecisionPolicy.mayWithdraw(messages, call, undefined)).toMatchObject({ allowed: false, detail: expect.stringContaining("needs to know who withdraws it") })
    expect(DecisionPolicy.mayWithdraw(messages, call, { id: "alice\u200b" })).toMatchObject({ allowed: false, detail: expect.stringContaining("not a canonical id") })
    // Without a policy, anyone; a call that is running or resolved, nobody.
    const plain = pausedWith(Turn.Decision.RequireApproval({}))
    expect(DecisionPolicy.mayWithdraw(plain, Messages.findTool(plain, "c1")!, bob).allowed).toBe(true)
    expect(DecisionPolicy.mayWithdraw(plain, Messages.findTool(plain, "c1")!, undefined).allowed).toBe(true)
    const rejected = Result.getOrThrow(Messages.reject(messages, "c1", "no", as(carol)))
    expect(DecisionPolicy.mayWithdraw(rejected, Messages.findTool(rejected, "c1")!, alice)).toStrictEqual({
      allowed: false,
      detail: "it is Rejected: only a call that has not started can be withdrawn"
    })
    // An approved call not yet running keeps its policy, as Messages.cancel does.
    const approved = Result.getOrThrow(Messages.approve(messages, "c1", undefined, as(bob)))
    expect(DecisionPolicy.mayWithdraw(approved, Messages.findTool(approved, "c1")!, bob).allowed).toBe(false)
    expect(DecisionPolicy.mayWithdraw(approved, Messages.findTool(approved, "c1")!, alice).allowed).toBe(true)
  })

  it("Messages.append with supersede follows the same rule", () => {
    const messages = paused(policy)
    expect(failureOf(Messages.append(messages, Messages.user("Forget it.", { sender: bob }), { supersede: "moved on" }))._tag).toBe(
      "DecisionNotAllowed"
    )
    expect(Result.isSuccess(Messages.append(messages, Messages.user("Forget it.", { sender: alice }), { supersede: "moved on" }))).toBe(true)
  })
})
