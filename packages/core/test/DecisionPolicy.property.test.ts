/**
 * The decision policy fixed on a call holds against any status write: after a
 * pause, decisions through `Messages.approve` / `approveJson` by anyone, then
 * arbitrary status objects written with `Messages.updateTool` (fresh statuses,
 * swapped edits, forged records and votes, scheduled times, "left running"),
 * no call under a policy runs unless its recorded votes meet the policy it was
 * sent to a person under, for exactly the text that runs.
 */
import { describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import { DecisionPolicy, Messages, Turn } from "../src/index.js"

const config: Turn.Config = { maxSteps: 100, waitForScheduled: false }

// p1: two of finance, none who asked (alice and bob, whose messages were delivered together).
const quorum: Messages.DecisionPolicy = { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 }
// t1 (awaiting approval) and d1 (deferred to `deferredTo`): only carol decides, edits included.
const carolOnly: Messages.DecisionPolicy = { approve: { ids: ["carol"] } }
const deferredTo = 1_000

const args: Record<string, string> = { p1: "{\"amount\":900}", t1: "{\"amount\":10}", d1: "{\"amount\":5}" }
const ids = ["p1", "t1", "d1"] as const

/** The conversation paused on the three calls, as the reducer leaves it. */
const paused: Messages.Messages = Turn.run([
  Messages.user("Take a note.", { sender: { id: "erin" } }),
  Messages.assistant("Noted."),
  Messages.user("Pay 900 to alice", { sender: { id: "alice", roles: ["finance"] } }),
  Messages.user("Thanks", { sender: { id: "bob", roles: ["finance"] } })
], [
  Turn.Event.Resume({ now: 0 }),
  Turn.Event.ModelResponded({
    message: { role: "assistant", parts: ids.map((id) => Messages.toolCall({ id, name: "pay", arguments: args[id]! })), finishReason: "tool-calls" }
  }),
  Turn.Event.Decided({
    now: 0,
    decisions: [
      { id: "p1", decision: Turn.Decision.RequireApproval({ policy: quorum }) },
      { id: "t1", decision: Turn.Decision.RequireApproval({ policy: carolOnly }) },
      { id: "d1", decision: Turn.Decision.Defer({ at: deferredTo, policy: carolOnly }) }
    ]
  })
], config)[0]

const people: ReadonlyArray<Messages.Identity> = [
  { id: "alice", roles: ["finance"] },
  { id: "bob", roles: ["finance"] },
  { id: "carol", roles: ["finance"] },
  { id: "dave", roles: ["finance"] },
  { id: "mallory" }
]
const texts = ["{\"amount\":900}", "{\"amount\":10}", "{\"amount\":5}", "{\"amount\":1000000}", "{ \"amount\" : 20 }", "{\"amount\":20}", "not json"]

/** The text a decision names, as the test reads it: an edit's canonical text. */
const canonical = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text))
  } catch {
    return text
  }
}
const hashes = texts.map((text) => DecisionPolicy.argumentsHash(canonical(text))).concat(texts.map(DecisionPolicy.argumentsHash))

const vote: fc.Arbitrary<Messages.Vote> = fc.record({
  by: fc.constantFrom(...people.map((p) => p.id)),
  roles: fc.option(fc.constantFrom(["finance"], ["sales"], []), { nil: undefined }),
  at: fc.integer({ min: 0, max: 5 }),
  argumentsHash: fc.constantFrom(...hashes)
}, { requiredKeys: ["by", "at", "argumentsHash"] })

const decision: fc.Arbitrary<Messages.Decision> = fc.record({
  by: fc.constantFrom(...people.map((p) => p.id)),
  at: fc.integer({ min: 0, max: 5 }),
  roles: fc.constantFrom(["finance"], ["sales"]),
  kind: fc.constantFrom("approve" as const, "edit" as const, "reject" as const),
  argumentsHash: fc.constantFrom(...hashes),
  votes: fc.array(vote, { maxLength: 3 }),
  grant: fc.constant("g1")
}, { requiredKeys: ["by", "at"] })

const policy = fc.constantFrom<Messages.DecisionPolicy>({}, quorum, carolOnly, { approve: { ids: ["mallory"] } })
const time = fc.constantFrom(-1, 0, 500, deferredTo - 1, deferredTo, 5_000)
const edit = fc.constantFrom(...texts)

const status: fc.Arbitrary<Messages.ToolCallStatus> = fc.oneof(
  fc.constant({ _tag: "Proposed" as const }),
  fc.record({ _tag: fc.constant("AwaitingApproval" as const), policy, votes: fc.array(vote, { maxLength: 3 }), expiresAt: time }, {
    requiredKeys: ["_tag"]
  }),
  fc.record({ _tag: fc.constant("Scheduled" as const), at: time, policy, votes: fc.array(vote, { maxLength: 3 }) }, { requiredKeys: ["_tag", "at"] }),
  // A status object holding a key its kind does not have (written in memory, never decoded): an edit smuggled onto a time.
  fc.record({ _tag: fc.constant("Scheduled" as const), at: time, editedArguments: edit }).map((s) => s as Messages.ToolCallStatus),
  fc.record({ _tag: fc.constant("Approved" as const), editedArguments: edit, expiresAt: time, scheduledAt: time, decision, policy }, {
    requiredKeys: ["_tag"]
  }),
  fc.record({ _tag: fc.constant("Running" as const), editedArguments: edit, attempt: fc.integer({ min: 1, max: 2 }), decision }, {
    requiredKeys: ["_tag"]
  }),
  fc.record({ _tag: fc.constant("Cancelled" as const), by: fc.constant("operator" as const), decision }, { requiredKeys: ["_tag", "by"] }),
  fc.record({ _tag: fc.constant("Rejected" as const), by: fc.constant("user" as const), decision }, { requiredKeys: ["_tag", "by"] })
)

type Step =
  | { readonly _tag: "approve"; readonly id: string; readonly by: Messages.Identity; readonly edited: string | undefined }
  | { readonly _tag: "write"; readonly id: string; readonly status: Messages.ToolCallStatus; readonly rebuild: boolean }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    _tag: fc.constant("approve" as const),
    id: fc.constantFrom(...ids),
    by: fc.constantFrom(...people),
    edited: fc.option(edit, { nil: undefined })
  }),
  fc.record({ _tag: fc.constant("write" as const), id: fc.constantFrom(...ids), status, rebuild: fc.boolean() })
)

const apply = (messages: Messages.Messages, s: Step): Messages.Messages => {
  if (s._tag === "approve") {
    const options = { decider: s.by, at: 1 }
    const decided = s.edited === undefined
      ? Messages.approve(messages, s.id, undefined, options)
      : Messages.approveJson(messages, s.id, s.edited, options)
    return Result.getOrElse(decided, () => messages)
  }
  // A status written over the call, or the call rebuilt with it (its fixed policy left out).
  return Messages.updateTool(messages, s.id, (call) =>
    s.rebuild ? { _tag: "ToolCall", id: call.id, name: call.name, arguments: call.arguments, status: s.status } : { ...call, status: s.status })
}

/** The yeses a running call's record holds for the text it runs, as the test counts them (see the module doc). */
const meetsPolicy = (call: Messages.ToolCallPart, now: number): boolean => {
  const status = call.status
  if (status._tag !== "Running") return false
  const edited = status.editedArguments
  if (call.id === "d1" && now >= deferredTo && edited === undefined) return true
  const record = status.decision
  if (record === undefined) return false
  const hash = DecisionPolicy.argumentsHash(edited === undefined ? call.arguments : canonical(edited))
  if (call.id === "p1") {
    if (edited !== undefined || (record.kind !== undefined && record.kind !== "approve")) return false
    const votes = record.votes ?? [{ by: record.by, roles: record.roles, argumentsHash: record.argumentsHash }]
    const counted = new Set(votes.filter((v) =>
      v.argumentsHash === hash && (v.roles ?? []).includes("finance") && v.by !== "alice" && v.by !== "bob"
    ).map((v) => v.by))
    return counted.size >= 2
  }
  // d1 may run once its time came, as deferred, with the model's arguments; before, and t1 always, only on carol's yes for this text.
  if (call.id === "d1" && now >= deferredTo && edited === undefined) return true
  if (edited !== undefined) return record.kind === "edit" && record.by === "carol" && record.argumentsHash === hash
  if (record.kind !== undefined && record.kind !== "approve") return false
  const votes = record.votes ?? [{ by: record.by, argumentsHash: record.argumentsHash }]
  return votes.some((v) => v.by === "carol" && v.argumentsHash === hash)
}

describe("DecisionPolicy: no status write gets around the policy fixed on a call", () => {
  it("whatever statuses are written between pause and resume, a call runs only on votes that meet its fixed policy, with exactly the decided text", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 6 }), time, (steps, now) => {
        let [messages, outcome] = Turn.step(steps.reduce(apply, paused), Turn.Event.Resume({ now, rerun: [...ids] }), config)
        for (let i = 0; i < 4 && outcome._tag === "RunTools"; i++) {
          for (const call of outcome.calls) {
            if (!meetsPolicy(call, now)) throw new Error(`${call.id} ran without meeting its policy: ${JSON.stringify(call)}`)
            // The original arguments are those the policy was fixed for; a run of another text would need its own votes.
            if (call.arguments !== args[call.id]) throw new Error(`${call.id} ran with other arguments: ${call.arguments}`)
          }
          for (const call of outcome.calls) [messages, outcome] = Turn.step(messages, Turn.Event.ToolSucceeded({ id: call.id, result: "ok" }), config)
        }
      }),
      { numRuns: 500 }
    )
  })
})
