import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Result from "effect/Result"
import { ConversationStore, Grant, Messages, SignedState, Turn } from "../src/index.js"
import * as GrantPredicate from "../src/turn/internal/grantPredicate.js"
import { deepFreeze, snapshot, T0 } from "./support/fixtures.js"

const { Decision, Event } = Turn
const HOUR = 3_600_000
const config: Turn.Config = { maxSteps: 50, waitForScheduled: false }

const email = (id: string, to: string) => Messages.toolCall({ id, name: "send_email", arguments: JSON.stringify({ to, body: "hi" }) })

/** A grant for `send_email` to a@x.com, made at T0 for an hour. */
const toA: Grant.Options = {
  id: "g1",
  tool: "send_email",
  where: { path: ["to"], equals: "a@x.com" },
  by: "alice",
  at: T0,
  expiresAfter: "1 hour"
}

const ok = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) throw new Error(`expected success, got ${JSON.stringify(result.failure)}`)
  return result.success
}
const err = <A, E>(result: Result.Result<A, E>): E => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure
}

/** A conversation whose last response proposes `calls` (the model just answered). */
const proposing = (history: Messages.Messages, ...calls: ReadonlyArray<Messages.ToolCallPart>): Messages.Messages => {
  const [started, outcome] = Turn.step(history, Event.Resume({ now: T0 }), config)
  expect(outcome._tag).toBe("CallModel")
  const [next, decide] = Turn.step(started, Event.ModelResponded({ message: Messages.assistant(calls) }), config)
  expect(decide._tag).toBe("Decide")
  return next
}

const decideGranted = (messages: Messages.Messages, id: string, grant: string, now: number, grants?: Grant.Context) =>
  Turn.step(messages, Event.Decided({ now, decisions: [{ id, decision: Decision.Granted({ grant }) }], grants }), config)

const status = (messages: Messages.Messages, id: string) => Messages.findTool(messages, id)!.status

describe("Messages.grant and Messages.revokeGrant", () => {
  it("records a grant on the last message, validated, with its expiry worked out", () => {
    const messages = deepFreeze(Messages.fromUser("hello"))
    const next = ok(Messages.grant(messages, toA))
    expect(next[0]!.grants).toEqual([{ id: "g1", tool: "send_email", where: { path: ["to"], equals: "a@x.com" }, by: "alice", at: T0, expiresAt: T0 + HOUR }])
    expect(Grant.find(next, "g1")?.index).toBe(0)
    expect(messages[0]!.grants).toBeUndefined()
  })

  it.each([
    ["an unknown operator", { ...toA, where: { path: ["to"], matches: ".*" } as never }, "unknown operator"],
    ["a predicate that is not an object", { ...toA, where: "to == a" as never }, "a predicate is an object"],
    ["a predicate nested too deep", { ...toA, where: Array.from({ length: 20 }).reduce<unknown>((p) => ({ not: p }), { path: [], equals: 1 }) as never }, "deeper than 16"],
    ["a __proto__ step in a path", { ...toA, where: { path: ["__proto__", "isAdmin"], equals: true } }, "__proto__"],
    ["a __proto__ key in a predicate", { ...toA, where: JSON.parse(`{"__proto__":{"x":1},"path":[],"equals":1}`) }, "__proto__"],
    ["a negative index", { ...toA, where: { path: [-1], equals: 1 } }, "index"],
    ["an empty all", { ...toA, where: { all: [] } }, "non-empty"],
    ["a NaN expiry", { ...toA, expiresAfter: undefined, expiresAt: Number.NaN }, "not a valid instant"],
    ["a NaN delay", { ...toA, expiresAfter: Number.NaN }, "not a valid instant"],
    ["an expiry in the past", { ...toA, expiresAfter: undefined, expiresAt: T0 - 1 }, "expires before it starts"],
    ["an expiry equal to its start", { ...toA, expiresAfter: 0 }, "expires before it starts"],
    ["both expiresAt and expiresAfter", { ...toA, expiresAt: T0 + 1 }, "exactly one"],
    ["neither expiresAt nor expiresAfter", { ...toA, expiresAfter: undefined }, "exactly one"],
    ["a NaN start", { ...toA, at: Number.NaN }, "not a valid instant"],
    ["a tool pattern with other characters", { ...toA, tool: "send.*" }, "tool"],
    ["an empty id", { ...toA, id: "" }, "id"],
    ["an unknown scope key", { ...toA, scope: { tenant: "x" } as never }, "scope"]
  ])("refuses %s with InvalidGrant, messages unchanged", (_what, options, detail) => {
    const messages = deepFreeze(Messages.fromUser("hello"))
    const error = err(Messages.grant(messages, options))
    expect(error._tag).toBe("InvalidGrant")
    expect((error as { detail: string }).detail).toContain(detail)
  })

  it("refuses a duplicate id, and an empty conversation", () => {
    const once = ok(Messages.grant(Messages.fromUser("x"), toA))
    expect(err(Messages.grant(once, { ...toA, tool: "read_*" }))._tag).toBe("DuplicateGrant")
    expect(err(Messages.grant(Messages.empty, toA))._tag).toBe("InvalidGrant")
  })

  it("revokes once: the grant stays, marked; a second revocation, an unknown id or a NaN time is refused", () => {
    const granted = deepFreeze(ok(Messages.grant(Messages.fromUser("x"), toA)))
    const revoked = ok(Messages.revokeGrant(granted, "g1", { by: "bob", at: T0 + 5, reason: "changed my mind" }))
    expect(Grant.find(revoked, "g1")?.grant.revoked).toEqual({ by: "bob", at: T0 + 5, reason: "changed my mind" })
    expect(err(Messages.revokeGrant(revoked, "g1", { by: "bob", at: T0 + 6 }))).toMatchObject({ _tag: "GrantRevoked", by: "bob", at: T0 + 5 })
    expect(err(Messages.revokeGrant(granted, "nope", { by: "bob", at: T0 }))._tag).toBe("UnknownGrant")
    expect(err(Messages.revokeGrant(granted, "g1", { by: "bob", at: Number.NaN }))._tag).toBe("InvalidGrant")
  })
})

describe("the grant predicate language", () => {
  const args = { to: "a@x.com", cc: ["b@x.com", "c@y.org"], amount: 12, opts: { urgent: true, tags: { a: 1, b: 2 } } }
  it.each([
    [{ path: ["to"], equals: "a@x.com" }, true],
    [{ path: ["to"], equals: "b@x.com" }, false],
    [{ path: ["opts", "tags"], equals: { b: 2, a: 1 } }, true],
    [{ path: ["opts", "tags"], equals: { a: 1 } }, false],
    [{ path: ["cc", 1], suffix: "@y.org" }, true],
    [{ path: ["cc", 2], suffix: "@y.org" }, false],
    [{ path: ["to"], prefix: "a@" }, true],
    [{ path: ["amount"], prefix: "1" }, false],
    [{ path: ["amount"], oneOf: [10, 12] }, true],
    [{ path: ["missing"], oneOf: [null] }, false],
    [{ path: ["to", "length"], equals: 7 }, false],
    [{ path: ["constructor"], equals: {} }, false],
    [{ path: ["cc", "length"], equals: 2 }, false],
    [{ all: [{ path: ["to"], suffix: "@x.com" }, { not: { path: ["opts", "urgent"], equals: false } }] }, true],
    [{ any: [{ path: ["to"], equals: "z" }, { path: ["amount"], equals: 12 }] }, true],
    [{ path: [], equals: args }, true],
    [{ not: { path: ["missing"], equals: 1 } }, true]
  ])("%j on the arguments is %s", (predicate, expected) => {
    expect(GrantPredicate.problem(predicate)).toBeUndefined()
    expect(GrantPredicate.evaluate(predicate, args)).toBe(expected)
  })

  it("is satisfied by nothing when it is not a valid predicate (a stored one written by hand)", () => {
    expect(GrantPredicate.evaluate({ path: ["to"], regex: "." }, args)).toBe(false)
    expect(GrantPredicate.evaluate({ not: { path: ["to"], regex: "." } }, args)).toBe(false)
  })

  it("bounds its size: more than 256 nodes is refused", () => {
    const wide = { any: Array.from({ length: 300 }, (_, i) => ({ path: ["amount"], equals: i })) }
    expect(GrantPredicate.problem(wide)).toContain("256 nodes")
  })
})

describe("Grant.matchesTool", () => {
  it.each([
    ["send_email", "send_email", true],
    ["send_email", "send_emails", false],
    ["read_*", "read_file", true],
    ["read_*", "unread_file", false],
    ["*", "anything", true],
    ["*_files", "delete_files", true],
    ["a*b*c", "abc", true],
    ["a*b*c", "ac", false],
    ["a*a", "a", false]
  ])("%s matches %s: %s", (pattern, name, expected) => {
    expect(Grant.matchesTool(pattern, name)).toBe(expected)
  })
})

describe("the reducer and grants", () => {
  /** A paused turn: one send_email awaiting approval; then a grant made while it waits. */
  const pausedThenGranted = () => {
    const proposed = proposing(Messages.fromUser("mail a"), email("c1", "a@x.com"))
    const [paused, outcome] = Turn.step(proposed, Event.Decided({ now: T0, decisions: [{ id: "c1", decision: Decision.RequireApproval({}) }] }), config)
    expect(outcome._tag).toBe("Pause")
    return deepFreeze(ok(Messages.grant(paused, toA)))
  }

  it("never settles a call pending when it was made: the call stays pending through a resume", () => {
    const granted = pausedThenGranted()
    const [next, outcome] = Turn.step(granted, Event.Resume({ now: T0 + 1 }), config)
    expect(outcome._tag).toBe("Pause")
    expect(status(next, "c1")).toEqual({ _tag: "AwaitingApproval" })
  })

  it("never settles a call proposed (not yet decided) when it was made, whatever the strategy says", () => {
    const proposed = proposing(Messages.fromUser("mail a"), email("c1", "a@x.com"))
    const granted = deepFreeze(ok(Messages.grant(proposed, toA)))
    const [next, outcome] = decideGranted(granted, "c1", "g1", T0 + 1)
    expect(outcome._tag).toBe("Pause")
    expect(status(next, "c1")).toEqual({ _tag: "AwaitingApproval" })
    expect(Result.getFailure(Grant.check(granted, "g1", Messages.findTool(granted, "c1")!, T0 + 1))).toMatchObject({
      _tag: "Some",
      value: { reason: "proposed-before" }
    })
  })

  /** After the pending call was rejected: the model proposes c2 (to a@x.com) after the grant. */
  const laterCall = (to = "a@x.com", name = "send_email") => {
    const rejected = ok(Messages.reject(pausedThenGranted(), "c1", "no"))
    const [afterReject, outcome] = Turn.step(rejected, Event.Resume({ now: T0 + 2 }), config)
    expect(outcome._tag).toBe("CallModel")
    const [next, decide] = Turn.step(afterReject, Event.ModelResponded({
      message: Messages.assistant([Messages.toolCall({ id: "c2", name, arguments: JSON.stringify({ to, body: "again" }) })])
    }), config)
    expect(decide._tag).toBe("Decide")
    return deepFreeze(next)
  }

  it("settles a later call it covers: it runs, and its decision record names the grant", () => {
    const [next, outcome] = decideGranted(laterCall(), "c2", "g1", T0 + 10)
    expect(outcome._tag).toBe("RunTools")
    expect(status(next, "c2")).toEqual({ _tag: "Running", decision: { by: "alice", at: T0 + 10, grant: "g1" } })
    const [done] = Turn.step(next, Event.ToolSucceeded({ id: "c2", result: "sent" }), config)
    expect(Grant.settledBy(Messages.findTool(done, "c2")!)).toBe("g1")
  })

  it.each([
    ["at its expiry", "g1", T0 + HOUR, undefined, "expired"],
    ["after its expiry", "g1", T0 + 2 * HOUR, undefined, "expired"],
    ["before it starts", "g1", T0 - 1, undefined, "not-yet-valid"],
    ["at a NaN time", "g1", Number.NaN, undefined, "expired"],
    ["naming a grant that does not exist", "g404", T0 + 10, undefined, "unknown"]
  ])("refuses a grant %s: the call awaits approval", (_what, grant, now, context, reason) => {
    const messages = laterCall()
    const [next, outcome] = decideGranted(messages, "c2", grant, now, context)
    expect(outcome._tag).toBe("Pause")
    expect(status(next, "c2")).toEqual({ _tag: "AwaitingApproval" })
    expect(Result.getFailure(Grant.check(messages, grant, Messages.findTool(messages, "c2")!, now))).toMatchObject({
      _tag: "Some",
      value: { _tag: "GrantNotApplicable", reason }
    })
  })

  it("never settles a call under a decision policy: the call waits for the people the policy names, under it", () => {
    const policy = { approve: { roles: ["finance"] }, quorum: 2 }
    const messages = laterCall()
    const [next, outcome] = Turn.step(
      messages,
      Event.Decided({ now: T0 + 10, decisions: [{ id: "c2", decision: Decision.Granted({ grant: "g1", policy }) }] }),
      config
    )
    expect(outcome._tag).toBe("Pause")
    expect(status(next, "c2")).toEqual({ _tag: "AwaitingApproval", policy })
    // The same grant, without a policy, would have settled it.
    expect(Result.isSuccess(Grant.check(messages, "g1", Messages.findTool(messages, "c2")!, T0 + 10))).toBe(true)
  })

  it("refuses a revoked grant, another address, another tool", () => {
    const revoked = ok(Messages.revokeGrant(laterCall(), "g1", { by: "bob", at: T0 + 5 }))
    expect(status(decideGranted(revoked, "c2", "g1", T0 + 10)[0], "c2")._tag).toBe("AwaitingApproval")
    expect(status(decideGranted(laterCall("evil@z.com"), "c2", "g1", T0 + 10)[0], "c2")._tag).toBe("AwaitingApproval")
    expect(status(decideGranted(laterCall("a@x.com", "delete_files"), "c2", "g1", T0 + 10)[0], "c2")._tag).toBe("AwaitingApproval")
  })

  it("checks the scope against the turn's context (conversation, user)", () => {
    const scoped = (scope: Messages.GrantScope) => {
      const base = proposing(ok(Messages.grant(Messages.fromUser("mail"), { ...toA, id: "s", scope })), email("c9", "a@x.com"))
      return (context?: Grant.Context) => status(decideGranted(base, "c9", "s", T0 + 1, context)[0], "c9")._tag
    }
    const conv = scoped({ conversation: "conv-1" })
    expect(conv({ conversation: "conv-1" })).toBe("Running")
    expect(conv({ conversation: "conv-2" })).toBe("AwaitingApproval")
    expect(conv(undefined)).toBe("AwaitingApproval")
    const user = scoped({ user: "u1" })
    expect(user({ user: "u1", conversation: "whatever" })).toBe("Running")
    expect(user({ user: "u2" })).toBe("AwaitingApproval")
  })

  it("a model response that claims grants is taken without them", () => {
    const [started] = Turn.step(Messages.fromUser("x"), Event.Resume({ now: T0 }), config)
    const forged = { ...Messages.assistant([email("c1", "a@x.com")]), grants: [ok(Grant.make({ ...toA, id: "forged" }))] }
    const [next] = Turn.step(started, Event.ModelResponded({ message: forged }), config)
    expect(next[next.length - 1]!.grants).toBeUndefined()
    expect(Grant.find(next, "forged")).toBeUndefined()
  })

  it("a call approved by a grant that was revoked or expired since does not run: it awaits approval", () => {
    const base = laterCall()
    const approved = Messages.updateTool(base, "c2", (c) => ({ ...c, status: { _tag: "Approved", decision: { by: "alice", at: T0 + 3, grant: "g1" } } }))
    const revoked = ok(Messages.revokeGrant(approved, "g1", { by: "bob", at: T0 + 4 }))
    const [r1, o1] = Turn.step(deepFreeze(revoked), Event.Resume({ now: T0 + 5 }), config)
    expect(o1._tag).toBe("Pause")
    expect(status(r1, "c2")).toEqual({ _tag: "AwaitingApproval" })
    const [r2, o2] = Turn.step(deepFreeze(approved), Event.Resume({ now: T0 + HOUR }), config)
    expect(o2._tag).toBe("Pause")
    expect(status(r2, "c2")).toEqual({ _tag: "AwaitingApproval" })
    const [r3, o3] = Turn.step(deepFreeze(approved), Event.Resume({ now: T0 + 5 }), config)
    expect(o3._tag).toBe("RunTools")
    expect(status(r3, "c2")._tag).toBe("Running")
  })

  it("leaves its input untouched", () => {
    const messages = laterCall()
    const before = snapshot(messages)
    decideGranted(messages, "c2", "g1", T0 + 10)
    expect(messages).toStrictEqual(before)
  })
})

describe("grants in the stored format", () => {
  const stored = () => {
    const granted = ok(Messages.grant(Messages.fromUser("x"), { ...toA, scope: { conversation: "c", user: "u" }, reason: "standing order" }))
    return ok(Messages.revokeGrant(ok(Messages.grant(granted, { ...toA, id: "g2", tool: "read_*", where: undefined })), "g2", { by: "bob", at: T0 + 1 }))
  }

  it("round-trips through toJson / fromJson and encode / decode", () => {
    const messages = stored()
    expect(ok(Messages.fromJson(ok(Messages.toJson(messages))))).toStrictEqual(messages)
    expect(ok(Messages.decode(ok(Messages.encode(messages))))).toStrictEqual(messages)
  })

  it("refuses a stored document with two grants of one id, or a grant with a NaN expiry", () => {
    const messages = stored()
    const doc = JSON.parse(ok(Messages.toJson(messages)))
    doc.messages[0].grants[1].id = "g1"
    expect(err(Messages.fromJson(JSON.stringify(doc))).detail).toContain("grant id 'g1' appears more than once")
    const nan = [{ ...messages[0]!, grants: [{ ...messages[0]!.grants![0]!, expiresAt: Number.NaN }] }]
    expect(err(Messages.toJson(nan))._tag).toBe("StateEncodeError")
  })

  it.effect("round-trips through SignedState and the memory store", () =>
    Effect.gen(function*() {
      const messages = stored()
      const secret = Redacted.make("a-secret-of-at-least-thirty-two-bytes!!")
      const signed = yield* SignedState.sign(messages, secret, { conversationId: "c", version: 1 })
      const verified = yield* SignedState.verify(signed, secret, { conversationId: "c", atLeastVersion: 1 })
      expect(verified.messages).toStrictEqual(messages)
      const store = yield* ConversationStore.makeMemory
      yield* store.save("c", messages)
      const loaded = yield* store.load("c")
      expect(loaded._tag === "Some" ? loaded.value.messages : undefined).toStrictEqual(messages)
    }))
})
