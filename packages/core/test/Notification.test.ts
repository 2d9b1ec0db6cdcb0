import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { Messages, Notification } from "../src/index.js"

type Status = Messages.ToolCallPart["status"]

const call = (id: string, status: Status): Messages.ToolCallPart => ({
  _tag: "ToolCall",
  id,
  name: "pay",
  arguments: "{\"amount\":10}",
  status
})

const paused = (...calls: ReadonlyArray<Messages.ToolCallPart>): Messages.Messages => [
  Messages.user("Pay the bill."),
  { role: "assistant", parts: calls }
]

const kinds = (before: Messages.Messages | undefined, after: Messages.Messages) =>
  Notification.between(before, after).map((event) => event.kind)

describe("Notification.between", () => {
  it("a new conversation saved paused: Paused, naming the waiting calls", () => {
    const events = Notification.between(undefined, paused(call("c1", { _tag: "AwaitingApproval" }), call("c2", { _tag: "Scheduled", at: 5 })))
    expect(events).toEqual([{
      kind: "Paused",
      calls: [{ id: "c1", name: "pay", status: "AwaitingApproval" }, { id: "c2", name: "pay", status: "Scheduled" }]
    }])
  })

  it("no Paused while other calls still run, then Paused when they are done", () => {
    const running = paused(call("c1", { _tag: "AwaitingApproval" }), call("c2", { _tag: "Running" }))
    expect(kinds(undefined, running)).toEqual([])
    const done = paused(call("c1", { _tag: "AwaitingApproval" }), call("c2", { _tag: "Completed", result: 1 }))
    expect(kinds(running, done)).toEqual(["Paused"])
  })

  it("saving the same state again gives nothing", () => {
    const state = paused(call("c1", { _tag: "AwaitingApproval" }))
    expect(kinds(state, state)).toEqual([])
  })

  it("a person's approval and rejection are Decided, with who decided when recorded", () => {
    const before = paused(call("c1", { _tag: "AwaitingApproval" }), call("c2", { _tag: "AwaitingApproval" }))
    const after = paused(
      call("c1", { _tag: "Approved", decision: { by: "ana", at: 1 } }),
      call("c2", { _tag: "Rejected", by: "user", reason: "no" })
    )
    expect(Notification.between(before, after)).toEqual([
      { kind: "Decided", calls: [{ id: "c1", name: "pay", status: "Approved", by: "ana" }] },
      { kind: "Decided", calls: [{ id: "c2", name: "pay", status: "Rejected", by: "user" }] }
    ])
  })

  it("one of two calls decided: Decided, and no new Paused for the other", () => {
    const before = paused(call("c1", { _tag: "AwaitingApproval" }), call("c2", { _tag: "AwaitingApproval" }))
    const after = paused(call("c1", { _tag: "Rejected", by: "user" }), call("c2", { _tag: "AwaitingApproval" }))
    expect(kinds(before, after)).toEqual(["Decided"])
  })

  it("an approval that ran out is Expired and resumes the turn, never Decided", () => {
    const before = paused(call("c1", { _tag: "AwaitingApproval", expiresAt: 10 }))
    const after = paused(call("c1", { _tag: "Rejected", by: "policy", reason: "The approval request expired." }))
    expect(kinds(before, after)).toEqual(["Expired", "Resumed"])
    const late = paused(call("c1", { _tag: "Approved", expiresAt: 10 }))
    expect(kinds(late, after)).toEqual(["Expired", "Resumed"])
  })

  it("approved and started in one save: Decided and Resumed", () => {
    const before = paused(call("c1", { _tag: "AwaitingApproval" }))
    expect(kinds(before, paused(call("c1", { _tag: "Running" })))).toEqual(["Decided", "Resumed"])
  })

  it("a scheduled call that starts when its time comes resumes the turn; no one decided it", () => {
    const before = paused(call("c1", { _tag: "Scheduled", at: 10 }))
    expect(kinds(before, paused(call("c1", { _tag: "Running" })))).toEqual(["Resumed"])
  })

  it("the model answering after a person rejected every call resumes the turn", () => {
    const before = paused(call("c1", { _tag: "Rejected", by: "user" }))
    const after = [...before, Messages.assistant("Understood, I did not pay.")]
    expect(kinds(before, after)).toEqual(["Resumed", "Completed"])
  })

  it("a mid-turn model call after calls ran is neither a resume nor a pause", () => {
    const before = paused(call("c1", { _tag: "Completed", result: 1 }))
    expect(kinds(before, [...before, Messages.assistant([Messages.toolCall({ id: "c2", name: "pay", arguments: "{}" })])])).toEqual([])
  })

  it("a final answer is Completed once", () => {
    const done = [Messages.user("Hi"), Messages.assistant("Hello.")]
    expect(kinds([Messages.user("Hi")], done)).toEqual(["Completed"])
    expect(kinds(done, done)).toEqual([])
  })

  it("made into notifications: each a unique id, the save's version and time; JSON round trip", () =>
    Effect.gen(function*() {
      const made = Notification.make("conv", 3, 1_000, Notification.between(undefined, paused(call("c1", { _tag: "AwaitingApproval" }))))
      expect(made).toMatchObject([{ kind: "Paused", conversationId: "conv", version: 3, at: 1_000 }])
      expect(yield* Notification.fromJson(Notification.toJson(made[0]!))).toEqual(made[0])
      const again = Notification.make("conv", 3, 1_000, [{ kind: "Completed", calls: [] }, { kind: "Completed", calls: [] }])
      expect(new Set([...again, ...made].map((n) => n.id)).size).toBe(3)
      const refused = yield* Effect.flip(Notification.fromJson("{\"id\":\"x\",\"kind\":\"Hacked\"}"))
      expect(refused._tag).toBe("SchemaError")
    }))
})

const statusArb: fc.Arbitrary<Status> = fc.oneof(
  fc.constant({ _tag: "Proposed" } as const),
  fc.record({ _tag: fc.constant("AwaitingApproval" as const) }),
  fc.record({ _tag: fc.constant("Scheduled" as const), at: fc.nat() }),
  fc.record({ _tag: fc.constant("Approved" as const) }),
  fc.record({ _tag: fc.constant("Running" as const) }),
  fc.record({ _tag: fc.constant("Completed" as const), result: fc.constant(1) }),
  fc.record({ _tag: fc.constant("Rejected" as const), by: fc.constantFrom("user" as const, "policy" as const) })
)

const stateArb = fc.array(statusArb, { minLength: 1, maxLength: 4 }).map((statuses) =>
  paused(...statuses.map((status, i) => call(`c${i}`, status)))
)

describe("Notification.between, properties", () => {
  it("is deterministic and gives nothing for an unchanged state", () => {
    fc.assert(fc.property(stateArb, stateArb, (before, after) => {
      expect(Notification.between(before, after)).toEqual(Notification.between(before, after))
      expect(Notification.between(after, after)).toEqual([])
    }))
  })

  it("a new conversation's first save is never a decision, an expiry or a resume", () => {
    fc.assert(fc.property(stateArb, (after) => {
      const kinds = Notification.between(undefined, after).map((e) => e.kind)
      expect(kinds.filter((kind) => kind !== "Paused" && kind !== "Completed")).toEqual([])
    }))
  })

  it("a call is never both decided and expired, and Paused names only calls that wait", () => {
    fc.assert(fc.property(stateArb, stateArb, (before, after) => {
      const events = Notification.between(before, after)
      const decided = events.filter((e) => e.kind === "Decided").map((e) => e.calls[0]!.id)
      const expired = events.filter((e) => e.kind === "Expired").map((e) => e.calls[0]!.id)
      expect(decided.filter((id) => expired.includes(id))).toEqual([])
      for (const event of events.filter((e) => e.kind === "Paused")) {
        for (const c of event.calls) expect(["AwaitingApproval", "Scheduled"]).toContain(c.status)
      }
    }))
  })
})
