/**
 * A running call's requests for a person's input (an MCP server's elicitation) in the reducer:
 * `InputRequested` / `InputSettled` record them on the `Running` status and change nothing else; the
 * call's result ends them; a crash (a `Resume` that finds the call still running) loses them with the
 * connection, and the call fails as interrupted, naming the lost request, never run again.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import * as Messages from "../src/turn/Messages.js"
import type { ToolCallPart, ToolCallStatus } from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"
import * as Arb from "./support/arbitraries.js"
import { call, conversation, deepFreeze, response, right, snapshot, statusOf, step, T0 } from "./support/fixtures.js"

const { Event } = Turn

const runs = { timeout: 60_000, numRuns: 300 }

const request = (id: string, overrides: Partial<Messages.InputRequest> = {}): Messages.InputRequest => ({
  id,
  from: "everything",
  message: "Your name?",
  requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  deadline: T0 + 60_000,
  ...overrides
})

const running = (inputRequests?: ReadonlyArray<Messages.InputRequest>): ToolCallStatus =>
  inputRequests === undefined ? { _tag: "Running" } : { _tag: "Running", inputRequests }

/** A turn whose last response has call `a` running (with these requests) and call `b` awaiting approval. */
const state = (inputRequests?: ReadonlyArray<Messages.InputRequest>) =>
  conversation(response([call("a", running(inputRequests)), call("b", { _tag: "AwaitingApproval" })]))

describe("a running call's input requests", () => {
  it("InputRequested records the request on the Running status; nothing else changes, the turn still awaits the call", () => {
    const [next, outcome] = step(state(), Event.InputRequested({ id: "a", request: request("e1") }))
    expect(statusOf(next, "a")).toEqual({ _tag: "Running", inputRequests: [request("e1")] })
    expect(statusOf(next, "b")).toEqual({ _tag: "AwaitingApproval" })
    expect(outcome).toEqual(Turn.Outcome.AwaitTools({ ids: ["a"] }))
    expect(Messages.pendingInputs(next)).toEqual([{ call: Messages.findTool(next, "a"), request: request("e1") }])
  })

  it("a second request is added; the same id again, or a request for a call that is not running, changes nothing", () => {
    const [two] = step(state([request("e1")]), Event.InputRequested({ id: "a", request: request("e2") }))
    expect(statusOf(two, "a")).toEqual(running([request("e1"), request("e2")]))
    for (const event of [
      Event.InputRequested({ id: "a", request: request("e1", { message: "Something else?" }) }),
      Event.InputRequested({ id: "b", request: request("e3") }),
      Event.InputRequested({ id: "nobody", request: request("e3") })
    ]) {
      const before = state([request("e1")])
      const [after] = step(before, event)
      expect(after).toStrictEqual(snapshot(before))
    }
  })

  it("a malformed request (no id, a NaN deadline, a schema that is not a JSON object, a __proto__ key) is ignored", () => {
    const hostile: ReadonlyArray<unknown> = [
      undefined,
      "e1",
      { ...request("e1"), id: "" },
      { ...request("e1"), id: 7 },
      { ...request("e1"), deadline: Number.NaN },
      { ...request("e1"), deadline: Number.POSITIVE_INFINITY },
      { ...request("e1"), message: undefined },
      { ...request("e1"), requestedSchema: [] },
      { ...request("e1"), requestedSchema: null },
      { ...request("e1"), requestedSchema: JSON.parse(`{"__proto__":{"polluted":true}}`) },
      { ...request("e1"), requestedSchema: { x: Number.NaN } }
    ]
    for (const bad of hostile) {
      const before = state()
      const [after] = step(before, Event.InputRequested({ id: "a", request: bad as Messages.InputRequest }))
      expect(after).toStrictEqual(snapshot(before))
    }
  })

  it("only the request's own fields are kept (anything extra a handler sends is dropped)", () => {
    const extra = { ...request("e1"), secret: "not stored" }
    const [next] = step(state(), Event.InputRequested({ id: "a", request: extra }))
    expect(statusOf(next, "a")).toEqual(running([request("e1")]))
  })

  it(`records at most ${Turn.maxInputRequests} requests per call: a flood cannot grow the state`, () => {
    let messages = state()
    for (let i = 0; i < Turn.maxInputRequests + 5; i++) {
      ;[messages] = step(messages, Event.InputRequested({ id: "a", request: request(`e${i}`) }))
    }
    const status = statusOf(messages, "a")
    expect(status._tag === "Running" && status.inputRequests?.length).toBe(Turn.maxInputRequests)
  })

  it("InputSettled removes the request (the field goes with the last one); an unknown id changes nothing", () => {
    const [one] = step(state([request("e1"), request("e2")]), Event.InputSettled({ id: "a", requestId: "e1" }))
    expect(statusOf(one, "a")).toEqual(running([request("e2")]))
    const [none, outcome] = step(one, Event.InputSettled({ id: "a", requestId: "e2" }))
    expect(statusOf(none, "a")).toStrictEqual({ _tag: "Running" })
    expect(outcome._tag).toBe("AwaitTools")
    const before = state([request("e1")])
    expect(step(before, Event.InputSettled({ id: "a", requestId: "e9" }))[0]).toStrictEqual(snapshot(before))
  })

  it("the call's result ends its requests: Completed and Failed carry none (the decision record stays)", () => {
    const decision = { by: "alice", at: T0 }
    const withRecord = conversation(response([call("a", { _tag: "Running", decision, inputRequests: [request("e1")] })]))
    const [done] = step(withRecord, Event.ToolSucceeded({ id: "a", result: "ok" }))
    expect(statusOf(done, "a")).toEqual({ _tag: "Completed", result: "ok", decision })
    const [failed] = step(withRecord, Event.ToolFailed({ id: "a", error: "no" }))
    expect(statusOf(failed, "a")).toEqual({ _tag: "Failed", error: "no", decision })
  })

  it("after a crash (Resume finds it running) the request is recorded as lost with the connection: Failed, outcome unknown, never run again", () => {
    const crashed = conversation(response([call("a", running([request("e1", { message: "Your name?" })]))]))
    const [next, outcome] = step(crashed, Event.Resume({ now: T0 + 1 }))
    const status = statusOf(next, "a")
    expect(status._tag).toBe("Failed")
    const error = status._tag === "Failed" ? String(status.error) : ""
    expect(error).toContain(`"Your name?" (e1, from everything)`)
    expect(error).toContain("lost with the connection")
    expect(error).toContain("outcome is unknown")
    expect(error).toContain("not run again")
    // The model is called with that failure: nothing runs.
    expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
  })

  it("a call rerun after a crash (its tool idempotent) starts again without the lost requests", () => {
    const crashed = conversation(response([call("a", running([request("e1")]))]))
    const [next, outcome] = step(crashed, Event.Resume({ now: T0 + 1, rerun: ["a"] }))
    expect(statusOf(next, "a")).toEqual({ _tag: "Running", attempt: 2 })
    expect(outcome._tag).toBe("RunTools")
  })

  it("a stored call waiting on a request decodes, and a 0.1-style Running call without the field still does", () => {
    const messages = state([request("e1")])
    const loaded = right(Messages.decode(Result.getOrThrow(Messages.encode(messages))))
    expect(loaded).toEqual(messages)
    const bad = JSON.parse(JSON.stringify(messages)) as Array<{ parts: Array<{ status?: { inputRequests?: Array<unknown> } }> }>
    bad[1]!.parts[0]!.status!.inputRequests = [{ ...request("e1"), deadline: "soon" }]
    expect(Result.isFailure(Messages.decode(bad as never))).toBe(true)
  })
})

/** The messages with every call's input requests taken out. */
const withoutRequests = (messages: Messages.Messages): Messages.Messages =>
  messages.map((message) => ({
    ...message,
    parts: message.parts.map((part) => {
      if (part._tag !== "ToolCall" || part.status._tag !== "Running") return part
      const { inputRequests: _, ...status } = part.status
      return { ...part, status } as ToolCallPart
    })
  }))

describe("input requests (properties, any state)", () => {
  const stateAndInput = Arb.conversation.chain((messages) =>
    fc.tuple(
      fc.constant(messages),
      Arb.eventFor(messages).filter((event) => event._tag === "InputRequested" || event._tag === "InputSettled"),
      Arb.config
    )
  )

  it("an input event changes nothing but the requests of one running call: the rest is what a no-op event gives", () => {
    fc.assert(fc.property(stateAndInput, ([messages, event, config]) => {
      const [after, outcome] = Turn.step(deepFreeze(messages), deepFreeze(event), config)
      // An event that fits nothing: the reducer does what the state itself calls for (it may start approved calls).
      const [base, baseOutcome] = Turn.step(deepFreeze(messages), Event.ToolSucceeded({ id: "\u0000no such call", result: null }), config)
      expect(withoutRequests(after)).toEqual(withoutRequests(base))
      expect(outcome).toEqual(baseOutcome)
      const baseCalls = Messages.toolCalls(base)
      const changed = Messages.toolCalls(after).filter((c, i) => JSON.stringify(c) !== JSON.stringify(baseCalls[i]))
      expect(changed.length).toBeLessThanOrEqual(1)
      for (const c of changed) {
        expect(c.id).toBe(event.id)
        expect(c.status._tag).toBe("Running")
      }
      for (const { call: c } of Messages.pendingInputs(after)) {
        const status = c.status
        expect(status._tag === "Running" && status.inputRequests!.length).toBeLessThanOrEqual(Turn.maxInputRequests)
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("a crash never leaves a request pending or a call running that was not rerun; each lost request is named", () => {
    fc.assert(fc.property(Arb.conversation, fc.integer({ min: -10_000, max: 10_000 }), (messages, now) => {
      const [after] = Turn.step(deepFreeze(messages), Event.Resume({ now }))
      const last = Messages.lastResponse(messages)
      if (last === undefined || messages[messages.length - 1] !== last) return
      for (const before of Messages.toolCallsOf(last)) {
        if (before.status._tag !== "Running") continue
        const status = Messages.findTool(after, before.id)!.status
        expect(status._tag).toBe("Failed")
        for (const lost of before.status.inputRequests ?? []) {
          expect(status._tag === "Failed" && String(status.error)).toContain(`(${lost.id}, from ${lost.from})`)
        }
      }
      expect(Messages.pendingInputs(Messages.lastResponse(after) === undefined ? [] : [Messages.lastResponse(after)!])).toEqual([])
    }), { numRuns: runs.numRuns })
  }, runs.timeout)
})
