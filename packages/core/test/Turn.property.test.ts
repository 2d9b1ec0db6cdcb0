import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import * as Messages from "../src/turn/Messages.js"
import type { ToolCallStatus } from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"
import * as Stepping from "../src/turn/Stepping.js"
import * as Arb from "./support/arbitraries.js"
import { play, START, validEdit } from "./support/driver.js"
import { deepFreeze, right, snapshot } from "./support/fixtures.js"

// The timeout is only a safety limit for slow machines, not an assertion.
const runs = { timeout: 60_000, numRuns: 200 }

const statusAt = (messages: Messages.Messages, id: string): ToolCallStatus | undefined =>
  Messages.findTool(messages, id)?.status

/** The times each event carries (Resume and Decided), else undefined. */
const nowOf = (event: Turn.Event): number | undefined =>
  event._tag === "Resume" || event._tag === "Decided" ? event.now : undefined

describe("Turn.step properties (generated turns played by a driver)", () => {
  it("plays every generated turn to its end (Complete or StepLimit)", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      expect(["Complete", "StepLimit"]).toContain(trace.final._tag)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("is deterministic: the same script gives the same steps", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const first = play(script)
      const second = play(script)
      expect(second.entries).toStrictEqual(first.entries)
      for (const entry of first.entries) {
        expect(Turn.step(entry.before, entry.event, first.config)).toStrictEqual([entry.after, entry.outcome])
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("never runs or completes a call that required approval unless the person approved it", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      const needsApproval = (id: string) => trace.decisions.get(id)?.decision._tag === "RequireApproval"
      trace.entries.forEach((entry, index) => {
        for (const call of Messages.toolCalls(entry.after)) {
          if (!needsApproval(call.id)) continue
          if (["Approved", "Running", "Completed", "Failed"].includes(call.status._tag)) {
            const approvedAt = trace.approvedAt.get(call.id)
            expect(approvedAt, `${call.id} is ${call.status._tag} without approval`).toBeDefined()
            expect(approvedAt!).toBeLessThanOrEqual(index)
          }
        }
        if (entry.outcome._tag === "RunTools") {
          for (const call of entry.outcome.calls) {
            if (needsApproval(call.id)) expect(trace.approvedAt.has(call.id)).toBe(true)
          }
        }
      })
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("never calls the model while a call is unresolved", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const entry of trace.entries) {
        if (entry.outcome._tag !== "CallModel") continue
        expect(Messages.pendingTools(entry.after)).toEqual([])
        const last = Messages.lastResponse(entry.after)
        if (last !== undefined) expect(Messages.toolCallsOf(last).every(Messages.isResolved)).toBe(true)
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("resolves every call exactly once: run at most once, final answer never changes, none left pending", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const [id, count] of trace.runs) expect(count, `${id} ran ${count} times`).toBe(1)
      expect(Messages.pendingTools(trace.messages)).toEqual([])

      // Once resolved, a call's status never changes again (in any later state).
      const resolvedAs = new Map<string, ToolCallStatus>()
      for (const entry of trace.entries) {
        for (const state of [entry.before, entry.after]) {
          for (const call of Messages.toolCalls(state)) {
            const first = resolvedAs.get(call.id)
            if (first !== undefined) expect(call.status).toStrictEqual(first)
            else if (Messages.isResolved(call)) resolvedAs.set(call.id, call.status)
          }
        }
      }

      // The answer matches what happened to the call.
      for (const [id, scripted] of trace.calls) {
        const status = statusAt(trace.messages, id)!
        if (trace.runs.has(id)) {
          const expected = scripted.result.ok
            ? { _tag: "Completed", result: scripted.result.value }
            : { _tag: "Failed", error: scripted.result.error }
          expect(status).toMatchObject(expected)
          const editedArguments = (status as { editedArguments?: string }).editedArguments
          if (scripted.person === "approveEdited" || scripted.person === "approveInvalidEdit") {
            if (trace.approvedAt.has(id) && editedArguments !== undefined) expect(editedArguments).toBe(validEdit(id))
          } else {
            expect(editedArguments).toBeUndefined()
          }
        } else {
          expect(["Rejected", "Expired", "Failed"]).toContain(status._tag)
          if (status._tag === "Failed") {
            const decision = trace.decisions.get(id)!.decision
            expect(decision._tag).toBe("Invalid")
            expect(status.error).toBe((decision as Extract<Turn.Decision, { _tag: "Invalid" }>).message)
          }
        }
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("runs edited calls with the edits the person made, and keeps them", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const entry of trace.entries) {
        if (entry.outcome._tag !== "RunTools") continue
        for (const call of entry.outcome.calls) {
          const before = statusAt(entry.before, call.id)!
          const edit = before._tag === "Approved" ? before.editedArguments : undefined
          expect(Messages.effectiveArguments(call)).toBe(edit ?? call.arguments)
        }
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("round-trips every state of a played turn through JSON exactly", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const entry of trace.entries) {
        expect(right(Messages.fromJson(Result.getOrThrow(Messages.toJson(entry.after))))).toStrictEqual(entry.after)
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("gives the same result stepping a stored-and-loaded conversation as the original", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const entry of trace.entries) {
        const loaded = right(Messages.fromJson(Result.getOrThrow(Messages.toJson(entry.before))))
        expect(Turn.step(loaded, entry.event, trace.config)).toStrictEqual([entry.after, entry.outcome])
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("never runs a scheduled call before its time (unless a person approved it)", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const entry of trace.entries) {
        if (entry.outcome._tag !== "RunTools") continue
        for (const call of entry.outcome.calls) {
          const before = statusAt(entry.before, call.id)!
          if (before._tag === "Scheduled") {
            const now = nowOf(entry.event)
            expect(now, `${call.id} started by a ${entry.event._tag}`).toBeDefined()
            expect(now!).toBeGreaterThanOrEqual(before.at)
          }
          const decided = trace.decisions.get(call.id)
          if (decided?.decision._tag === "Defer" && !trace.approvedAt.has(call.id)) {
            expect(entry.now).toBeGreaterThanOrEqual(decided.decision.at)
          }
        }
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("expires approvals and starts scheduled calls exactly when their time has come", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const entry of trace.entries) {
        const now = nowOf(entry.event)
        for (const call of Messages.toolCalls(entry.after)) {
          const before = statusAt(entry.before, call.id)
          if (before?._tag === "AwaitingApproval" && call.status._tag === "Rejected" && call.status.by === "policy") {
            expect(now, `${call.id} expired on a ${entry.event._tag}`).toBeDefined()
            expect(before.expiresAt).toBeDefined()
            expect(now!).toBeGreaterThanOrEqual(before.expiresAt!)
          }
          // After the reducer is told the time, nothing stays waiting for a time already come.
          if (now !== undefined && entry.outcome._tag !== "InvalidEdits" && entry.outcome._tag !== "Decide") {
            if (call.status._tag === "AwaitingApproval" && call.status.expiresAt !== undefined) {
              expect(call.status.expiresAt).toBeGreaterThan(now)
            }
            if (call.status._tag === "Scheduled") expect(call.status.at).toBeGreaterThan(now)
          }
        }
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("no sequence of decisions, refused edits and resumes ever runs a call after its approval deadline", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const entry of trace.entries) {
        if (entry.outcome._tag !== "RunTools") continue
        for (const call of entry.outcome.calls) {
          const decided = trace.decisions.get(call.id)
          if (decided?.decision._tag !== "RequireApproval" || decided.decision.expiresAt === undefined) continue
          // Started by a Resume strictly before the deadline.
          expect(nowOf(entry.event), `${call.id} started on ${entry.event._tag}`).toBeDefined()
          expect(nowOf(entry.event)!).toBeLessThan(decided.decision.expiresAt)
        }
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("no call ever runs twice across any interleaving of resumes, checkpoints and crashes", () => {
    fc.assert(fc.property(Arb.script, fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 6 }), (script, crashes) => {
      const trace = play(script, { crashes })
      for (const [id, count] of trace.runs) expect(count, `${id} ran ${count} times`).toBe(1)
      // A call whose worker died is answered as interrupted, never left running or run again.
      const final = Messages.toolCalls(trace.messages)
      expect(final.filter((call) => call.status._tag === "Running")).toEqual([])
      for (const call of final) {
        if (trace.runs.has(call.id)) expect(["Completed", "Failed"]).toContain(call.status._tag)
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("never calls the model more than maxSteps times in a turn", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      expect(trace.modelCalls.length).toBeLessThanOrEqual(script.maxSteps)
      expect(trace.modelCalls).toEqual(trace.modelCalls.map((_, i) => i + 1))
      if (trace.final._tag === "StepLimit") {
        expect(trace.final.maxSteps).toBe(script.maxSteps)
        expect(trace.modelCalls.length).toBe(script.maxSteps)
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("carries the usage of every response of the turn in Pause and Complete", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      trace.entries.forEach((entry, index) => {
        if (entry.outcome._tag === "Pause" || entry.outcome._tag === "Complete") {
          expect(entry.outcome.usage).toEqual(trace.usageSent[index])
        }
      })
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("ignores events that do not fit the state, and responses claiming statuses", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play({ ...script, strayEvents: true })
      trace.entries.forEach((entry, index) => {
        if (entry.stray) {
          expect(entry.after).toStrictEqual(snapshot(entry.before))
          let paused = index - 1
          while (trace.entries[paused]!.stray) paused--
          expect(entry.outcome).toStrictEqual(trace.entries[paused]!.outcome)
        }
        if (!entry.stray && entry.event._tag === "ModelResponded" && entry.outcome._tag === "Decide") {
          for (const call of Messages.toolCallsOf(entry.after.at(-1)!)) expect(call.status).toEqual({ _tag: "Proposed" })
        }
      })
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("only waits (waitForScheduled) when no approval is pending, until the earliest due time", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      for (const entry of trace.entries) {
        if (entry.outcome._tag !== "Wait") continue
        expect(trace.config.waitForScheduled).toBe(true)
        const last = Messages.lastResponse(entry.after)!
        const calls = Messages.toolCallsOf(last)
        expect(calls.some((c) => c.status._tag === "AwaitingApproval")).toBe(false)
        const times = calls.flatMap((c) => (c.status._tag === "Scheduled" ? [c.status.at] : []))
        expect(entry.outcome.until).toBe(Math.min(...times))
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)
})

// ---------------------------------------------------------------------------
// Resolving pending calls in any order
// ---------------------------------------------------------------------------

type Choice =
  | { readonly kind: "approve" }
  | { readonly kind: "edit"; readonly value: Arb.Json }
  | { readonly kind: "reject"; readonly reason: string }

const pendingCall = fc.record({
  status: fc.oneof(
    fc.constant<ToolCallStatus>({ _tag: "AwaitingApproval" }),
    fc.integer({ min: 1, max: 10_000 }).map((d): ToolCallStatus => ({ _tag: "Scheduled", at: START + d }))
  ),
  choice: fc.oneof(
    fc.constant<Choice>({ kind: "approve" }),
    Arb.json.map((value): Choice => ({ kind: "edit", value })),
    fc.string({ maxLength: 6 }).map((reason): Choice => ({ kind: "reject", reason }))
  ),
  result: Arb.json,
  personOrder: fc.nat(),
  resultOrder: fc.nat()
}, { noNullPrototype: true })

describe("Turn.step properties (order independence)", () => {
  it("resolving pending calls and receiving their results in any order gives the same final messages", () => {
    fc.assert(fc.property(fc.array(pendingCall, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { minLength: 10, maxLength: 10 }), (pending, shuffle) => {
      const ids = pending.map((_, i) => `p${i}`)
      const start = deepFreeze([
        Messages.user("go"),
        {
          role: "assistant" as const,
          parts: pending.map((p, i) => ({ ...Messages.toolCall({ id: ids[i]!, name: "t", arguments: "{}" }), status: p.status }))
        }
      ])
      const decide = (messages: Messages.Messages, i: number): Messages.Messages => {
        const choice = pending[i]!.choice
        return right(
          choice.kind === "approve"
            ? Messages.approve(messages, ids[i]!)
            : choice.kind === "edit"
            ? Messages.approve(messages, ids[i]!, choice.value)
            : Messages.reject(messages, ids[i]!, choice.reason)
        )
      }
      const byKey = (key: (i: number) => number) =>
        ids.map((_, i) => i).sort((a, b) => key(a) - key(b) || a - b)
      const finish = (personOrder: ReadonlyArray<number>, resultOrder: (i: number) => number) => {
        const decided = personOrder.reduce(decide, start)
        const [running, outcome] = Turn.step(deepFreeze(decided), Turn.Event.Resume({ now: START }))
        let state = running
        let last = outcome
        if (outcome._tag === "RunTools") {
          const started = outcome.calls.map((c) => Number(c.id.slice(1)))
          for (const i of [...started].sort((a, b) => resultOrder(a) - resultOrder(b) || a - b)) {
            ;[state, last] = Turn.step(deepFreeze(state), Turn.Event.ToolSucceeded({ id: ids[i]!, result: pending[i]!.result }))
          }
        }
        return { decided, state, last }
      }
      const a = finish(byKey((i) => pending[i]!.personOrder), (i) => pending[i]!.resultOrder)
      const b = finish(byKey((i) => shuffle[i % shuffle.length]! ^ (i * 7919)), (i) => -pending[i]!.resultOrder)
      const c = finish(ids.map((_, i) => i).reverse(), (i) => i)
      expect(b.decided).toStrictEqual(a.decided)
      expect(c.decided).toStrictEqual(a.decided)
      expect(b.state).toStrictEqual(a.state)
      expect(c.state).toStrictEqual(a.state)
      expect(b.last).toStrictEqual(a.last)
      expect(c.last).toStrictEqual(a.last)
      expect(Messages.pendingTools(a.state)).toEqual([])
      expect(a.last).toStrictEqual(Turn.Outcome.CallModel({ step: 2 }))
    }), { numRuns: runs.numRuns })
  }, runs.timeout)
})

describe("Stepping.stepAt (the shells' O(1) stepping) agrees with Turn.step", () => {
  /** What a position must say of its messages: the turn's start and steps exactly, and only settled messages before `settled`. */
  const expectDescribes = (position: Stepping.Position, messages: Messages.Messages) => {
    const fresh = Stepping.positionOf(messages)
    expect(position.of).toBe(messages)
    expect(position.turnStart).toBe(fresh.turnStart)
    expect(position.steps).toBe(fresh.steps)
    expect(position.settled).toBeLessThanOrEqual(messages.length)
    for (const message of messages.slice(0, position.settled)) {
      for (const call of Messages.toolCallsOf(message)) expect(Messages.isResolved(call)).toBe(true)
    }
  }

  it("carrying the position from event to event gives every step's result, and the position stays true", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      let carried: Stepping.Position | undefined
      for (const entry of trace.entries) {
        const before = deepFreeze(entry.before)
        // The driver changes the messages between some events (a person decides): the position of another array is not used.
        const position = carried !== undefined && carried.of === entry.before ? { ...carried, of: before, unshared: false } : carried
        const [after, outcome, next] = Stepping.stepAt(before, deepFreeze(entry.event), trace.config, position)
        expect([after, outcome]).toStrictEqual([entry.after, entry.outcome])
        expectDescribes(next, after)
        carried = { ...next, of: entry.after }
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("an unshared array is written in place with the same results, and only then", () => {
    fc.assert(fc.property(Arb.script, (script) => {
      const trace = play(script)
      let carried: Stepping.Position | undefined
      let mine: Array<Messages.Message> | undefined
      for (const entry of trace.entries) {
        // The shell's own copy of the state, as if the reducer had made it and nobody else saw it.
        const own = mine !== undefined && carried?.of === entry.before ? mine : entry.before.slice()
        const position = carried !== undefined && carried.of === entry.before ? { ...carried, of: own, unshared: true } : undefined
        const [after, outcome, next] = Stepping.stepAt(own, deepFreeze(entry.event), trace.config, position)
        expect([after, outcome]).toStrictEqual([entry.after, entry.outcome])
        // Without the mark, the input is never written (the arrays of the trace are frozen).
        expect(Stepping.stepAt(deepFreeze(entry.before), entry.event, trace.config, { ...Stepping.positionOf(entry.before) })[0])
          .toStrictEqual(entry.after)
        expect(next.unshared === true).toBe(after !== own || position !== undefined)
        mine = after as Array<Messages.Message>
        carried = { ...next, of: entry.after }
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("Turn.run (which writes its own arrays in place) gives what folding Turn.step gives, input untouched", () => {
    fc.assert(fc.property(Arb.conversation.chain((messages) => fc.tuple(fc.constant(messages), fc.array(Arb.eventFor(messages), { maxLength: 8 }), Arb.config)), ([messages, events, config]) => {
      let folded: Turn.Result = [messages, Turn.Outcome.AwaitTools({ ids: [] })]
      for (const event of events) folded = Turn.step(folded[0], event, config)
      const before = snapshot(messages)
      expect(Turn.run(deepFreeze(messages), events, config)).toStrictEqual(folded)
      expect(messages).toStrictEqual(before)
    }), { numRuns: 60 })
  }, runs.timeout)

  it("a position of another array is ignored", () => {
    fc.assert(fc.property(Arb.conversation, Arb.conversation, Arb.config, (messages, other, config) => {
      const stale: Stepping.Position = { of: other, turnStart: 0, steps: 0, settled: other.length }
      const event = Turn.Event.Resume({ now: START })
      const [after, outcome, position] = Stepping.stepAt(deepFreeze(messages), event, config, stale)
      expect([after, outcome]).toStrictEqual(Turn.step(messages, event, config))
      expectDescribes(position, after)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)
})

// ---------------------------------------------------------------------------
// Any state, any event
// ---------------------------------------------------------------------------

describe("Turn.step properties (any state, any event)", () => {
  const stateAndEvent = Arb.conversation.chain((messages) =>
    fc.tuple(fc.constant(messages), Arb.eventFor(messages), Arb.config)
  )

  it("is total and pure: never throws, never mutates, same input same output", () => {
    fc.assert(fc.property(stateAndEvent, ([messages, event, config]) => {
      const before = snapshot(messages)
      const result = Turn.step(deepFreeze(messages), deepFreeze(event), config)
      expect(Turn.step(messages, event, config)).toStrictEqual(result)
      expect(messages).toStrictEqual(before)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("never starts a call awaiting approval, and never calls the model past pending calls", () => {
    fc.assert(fc.property(stateAndEvent, ([messages, event, config]) => {
      const [after, outcome] = Turn.step(deepFreeze(messages), deepFreeze(event), config)
      if (outcome._tag === "RunTools") {
        for (const call of outcome.calls) {
          const before = statusAt(messages, call.id)
          expect(["Approved", "Scheduled", "Proposed"]).toContain(before?._tag)
          if (before?._tag === "Proposed") {
            expect(event._tag).toBe("Decided")
          }
        }
      }
      if (outcome._tag === "CallModel") {
        expect(Messages.pendingTools(after)).toEqual([])
        expect(outcome.step).toBeLessThanOrEqual(config.maxSteps)
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  // `toEqual`, not `toStrictEqual`: the message arbitraries make records with a
  // null prototype (or an own "__proto__" key), which decoding rebuilds as
  // plain objects. The played turns above check the JSON round trip strictly.
  it("decodes what it encodes", () => {
    fc.assert(fc.property(Arb.conversation, (messages) => {
      expect(right(Messages.decode(Result.getOrThrow(Messages.encode(messages))))).toEqual(messages)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("steps a stored-and-loaded conversation like the original", () => {
    fc.assert(fc.property(stateAndEvent, ([messages, event, config]) => {
      const loaded = right(Messages.decode(Result.getOrThrow(Messages.encode(messages))))
      expect(Turn.step(loaded, event, config)).toEqual(Turn.step(messages, event, config))
    }), { numRuns: runs.numRuns })
  }, runs.timeout)
})

// ---------------------------------------------------------------------------
// The decision record over every transition
// ---------------------------------------------------------------------------

describe("a decision record { by, at } survives every transition (reducer and Messages)", () => {
  const record = fc.record({ by: fc.constantFrom("alice", "bob"), at: fc.integer({ min: 0, max: 100 }) }, { noNullPrototype: true })
  /** A time near the statuses' times, or one that is no valid instant (hand-built state). */
  const time = fc.oneof(fc.integer({ min: -5, max: 15 }), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY))
  const optional = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined })
  const strip = <A extends object>(status: A): A =>
    Object.fromEntries(Object.entries(status).filter(([, v]) => v !== undefined)) as A
  /** Statuses a decided call may have (with its record), and statuses of undecided ones. */
  const status: fc.Arbitrary<ToolCallStatus> = fc.oneof(
    fc.record({ expiresAt: optional(time), editedArguments: optional(fc.constantFrom("{}", "{\"x\":1}")), scheduledAt: optional(time), decision: record }, { noNullPrototype: true })
      .map((s) => strip({ _tag: "Approved" as const, ...s })),
    fc.record({ attempt: optional(fc.integer({ min: 1, max: 3 })), editedArguments: optional(fc.constant("{}")), decision: record }, { noNullPrototype: true })
      .map((s) => strip({ _tag: "Running" as const, ...s })),
    record.map((decision) => ({ _tag: "Completed" as const, result: 1, decision })),
    record.map((decision) => ({ _tag: "Failed" as const, error: "no", decision })),
    record.map((decision) => ({ _tag: "Rejected" as const, by: "user" as const, decision })),
    fc.constant({ _tag: "Proposed" as const }),
    optional(time).map((expiresAt) => strip({ _tag: "AwaitingApproval" as const, expiresAt })),
    time.map((at) => ({ _tag: "Scheduled" as const, at }))
  )
  const state = fc.array(status, { minLength: 1, maxLength: 4 }).map((statuses): Messages.Messages => [
    Messages.user("Pay the bills."),
    {
      role: "assistant",
      parts: statuses.map((s, i): Messages.ToolCallPart => ({ _tag: "ToolCall", id: `c${i}`, name: "pay", arguments: "{}", status: s }))
    }
  ])
  const ids = fc.constantFrom("c0", "c1", "c2", "c3")
  type Op =
    | { readonly _tag: "Step"; readonly event: Turn.Event }
    | { readonly _tag: "Supersede" }
    | { readonly _tag: "Approve"; readonly id: string }
    | { readonly _tag: "Reject"; readonly id: string }
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      now: time,
      invalidEdits: optional(fc.array(fc.record({ id: ids, detail: fc.constant("bad") }, { noNullPrototype: true }), { maxLength: 2 })),
      rerun: optional(fc.array(ids, { maxLength: 2 }))
    }, { noNullPrototype: true }).map((e) => ({ _tag: "Step" as const, event: Turn.Event.Resume(strip(e)) })),
    fc.record({ id: ids }, { noNullPrototype: true }).map(({ id }) => ({ _tag: "Step" as const, event: Turn.Event.ToolSucceeded({ id, result: 2 }) })),
    fc.record({ id: ids }, { noNullPrototype: true }).map(({ id }) => ({ _tag: "Step" as const, event: Turn.Event.ToolFailed({ id, error: "x" }) })),
    fc.record({ now: time, id: ids }, { noNullPrototype: true }).map(({ id, now }) => ({
      _tag: "Step" as const,
      event: Turn.Event.Decided({ now, decisions: [{ id, decision: Turn.Decision.Reject({ reason: "no" }) }] })
    })),
    fc.constant({ _tag: "Supersede" as const }),
    ids.map((id) => ({ _tag: "Approve" as const, id })),
    ids.map((id) => ({ _tag: "Reject" as const, id }))
  )
  const apply = (messages: Messages.Messages, o: Op): Messages.Messages => {
    switch (o._tag) {
      case "Step":
        return Turn.step(deepFreeze(messages), o.event)[0]
      case "Supersede":
        return Result.getOrElse(Messages.append(deepFreeze(messages), Messages.user("Moving on."), { supersede: "moved on" }), () => messages)
      case "Approve":
        return Result.getOrElse(Messages.approve(deepFreeze(messages), o.id), () => messages)
      case "Reject":
        return Result.getOrElse(Messages.reject(deepFreeze(messages), o.id, "no"), () => messages)
    }
  }
  const decisionOf = (s: ToolCallStatus | undefined) => (s !== undefined && "decision" in s ? s.decision : undefined)

  it("a call that had one keeps it, unchanged, unless its approval is undone (it waits for a new decision); none is invented", () => {
    fc.assert(fc.property(state, fc.array(op, { minLength: 1, maxLength: 6 }), (start, ops) => {
      let messages = start
      for (const o of ops) {
        const next = apply(messages, o)
        for (const call of Messages.toolCalls(next)) {
          const before = statusAt(messages, call.id)
          if (before === undefined) continue
          const had = decisionOf(before)
          const has = decisionOf(call.status)
          const where = `${call.id}: ${JSON.stringify(before)} -> ${JSON.stringify(call.status)} (${o._tag})`
          if (had === undefined) expect(has, where).toBeUndefined()
          else if (call.status._tag === "AwaitingApproval" || call.status._tag === "Scheduled") expect(has, where).toBeUndefined()
          else expect(has, where).toStrictEqual(had)
        }
        messages = next
      }
    }), { numRuns: 500 })
  }, runs.timeout)
})
