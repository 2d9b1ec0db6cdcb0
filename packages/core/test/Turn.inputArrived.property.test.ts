/**
 * Properties of input while the model answers (issue 37): for any interleaving of model deltas,
 * whole responses, decisions, tool results, people's decisions, bursts of input and cancels, played
 * by a small driver standing in for the shell: no call a person was asked about runs without their
 * decision, no call of a cut answer runs, every input message is delivered exactly once and in
 * order, restarts stay within `maxInputRestarts` and the model calls are bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import * as Messages from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"
import { deepFreeze } from "./support/fixtures.js"

const runs = { timeout: 60_000, numRuns: 300 }

type Kind = "delta" | "call" | "finish" | "input" | "cancel" | "decide" | "result" | "person"
interface Action {
  readonly kind: Kind
  /** Picks among choices (a decision, a burst's size, a person's answer). */
  readonly pick: number
}

const action: fc.Arbitrary<Action> = fc.record({
  kind: fc.oneof(
    { arbitrary: fc.constantFrom<Kind>("delta", "call", "finish", "decide", "result", "person"), weight: 12 },
    { arbitrary: fc.constant<Kind>("input"), weight: 4 },
    { arbitrary: fc.constant<Kind>("cancel"), weight: 1 }
  ),
  pick: fc.nat(11)
})

interface Played {
  readonly messages: Messages.Messages
  readonly final: Turn.Outcome
  /** Calls handed out to run, in order. */
  readonly ran: ReadonlyArray<string>
  /** Calls the strategy said Execute for, or a person approved. */
  readonly allowed: ReadonlySet<string>
  /** Calls that were part of an answer input cut short. */
  readonly cut: ReadonlySet<string>
  /** The input tokens sent, in order. */
  readonly sent: ReadonlyArray<string>
  readonly modelCalls: number
  readonly bursts: number
  readonly restarts: number
}

const play = (actions: ReadonlyArray<Action>, config: Turn.Config): Played => {
  let messages: Messages.Messages = deepFreeze([Messages.user("start")])
  let [next, outcome] = Turn.step(messages, Turn.Event.Resume({ now: 0 }), config)
  messages = next
  let partial: Array<Messages.Part> = []
  let streaming = false
  let ids = 0
  let tokens = 0
  const ran: Array<string> = []
  const allowed = new Set<string>()
  const cut = new Set<string>()
  const sent: Array<string> = []
  let modelCalls = 0
  let bursts = 0
  let restarts = 0
  const apply = (event: Turn.Event) => {
    ;[next, outcome] = Turn.step(deepFreeze(messages), deepFreeze(event), config)
    messages = next
    if (outcome._tag === "RunTools") ran.push(...outcome.calls.map((call) => call.id))
  }
  const input = (pick: number): Turn.Event => {
    const size = 1 + (pick % 3)
    const burst = Array.from({ length: size }, () => {
      const token = `t${tokens++}`
      sent.push(token)
      return Messages.user(token, pick % 2 === 0 ? undefined : { sender: { id: `u${tokens % 2}` } })
    })
    bursts++
    if (outcome._tag === "CallModel" && streaming) {
      for (const part of partial) if (part._tag === "ToolCall") cut.add(part.id)
      const interrupted: Messages.Message = { role: "assistant", parts: partial }
      partial = []
      streaming = false
      restarts++
      return Turn.Event.InputArrived({ input: burst, interrupted })
    }
    return Turn.Event.InputArrived({ input: burst })
  }
  for (const { kind, pick } of actions) {
    if (kind === "cancel") {
      // The shell's abort: the running calls are recorded as interrupted, the turn ends.
      for (const call of Messages.lastCalls(messages)) {
        if (call.status._tag === "Running") apply(Turn.Event.ToolFailed({ id: call.id, error: Turn.interruptedText(call) }))
      }
      break
    }
    if (kind === "input") {
      if (!["CallModel", "Decide", "RunTools", "AwaitTools", "Pause", "Complete"].includes(outcome._tag)) break
      apply(input(pick))
      continue
    }
    switch (outcome._tag) {
      case "CallModel": {
        if (!streaming) modelCalls++
        streaming = true
        if (kind === "delta" || kind === "result") partial.push(Messages.text(`x${pick}`))
        else if (kind === "call" || kind === "decide" || kind === "person") {
          // A call as it streams: its arguments may be whole or begun.
          partial.push({ _tag: "ToolCall", id: `c${ids++}`, name: "tool", arguments: pick % 2 === 0 ? "{}" : `{"a":`, status: { _tag: "Proposed" } })
        } else {
          const parts = partial.map((part) => (part._tag === "ToolCall" ? { ...part, arguments: "{}" } : part))
          partial = []
          streaming = false
          apply(Turn.Event.ModelResponded({ message: { role: "assistant", parts, finishReason: "stop" } }))
        }
        break
      }
      case "Decide": {
        const decisions = outcome.calls.map((call, i) => {
          const choice = (pick + i) % 3
          if (choice === 0) allowed.add(call.id)
          const decision = choice === 0
            ? Turn.Decision.Execute()
            : choice === 1
            ? Turn.Decision.RequireApproval({})
            : Turn.Decision.Reject({ reason: "no" })
          return { id: call.id, decision }
        })
        apply(Turn.Event.Decided({ now: 0, decisions }))
        break
      }
      case "RunTools":
      case "AwaitTools": {
        const running = Messages.lastCalls(messages).filter((call) => call.status._tag === "Running")
        if (running.length === 0) {
          apply(Turn.Event.Resume({ now: 0 }))
          break
        }
        apply(Turn.Event.ToolSucceeded({ id: running[pick % running.length]!.id, result: pick }))
        break
      }
      case "Pause": {
        // A person decides every waiting call, then the turn resumes.
        for (const call of Messages.pendingTools(messages)) {
          if (call.status._tag !== "AwaitingApproval") continue
          const decided = pick % 2 === 0 ? Messages.approve(messages, call.id) : Messages.reject(messages, call.id, "no")
          if (Result.isSuccess(decided)) {
            if (pick % 2 === 0) allowed.add(call.id)
            messages = decided.success
          }
        }
        apply(Turn.Event.Resume({ now: 0 }))
        break
      }
      default:
        break
    }
    if (["Complete", "StepLimit", "InputLimit"].includes(outcome._tag)) break
  }
  return { messages, final: outcome, ran, allowed, cut, sent, modelCalls, bursts, restarts }
}

/** The input tokens in the messages (delivered user messages and those still held), in order. */
const delivered = (messages: Messages.Messages): Array<string> => {
  const out: Array<string> = []
  const collect = (parts: ReadonlyArray<Messages.Part>) => {
    for (const part of parts) if (part._tag === "Text" && /^t\d+$/.test(part.text)) out.push(part.text)
  }
  for (const message of messages) {
    if (message.role === "user") collect(message.parts)
    for (const held of message.queued ?? []) collect(held.parts)
  }
  return out
}

const configs: fc.Arbitrary<Turn.Config> = fc.record({
  maxSteps: fc.integer({ min: 1, max: 4 }),
  waitForScheduled: fc.constant(false),
  maxInputRestarts: fc.integer({ min: 0, max: 4 }),
  interruptedAnswer: fc.constantFrom<"keep" | "drop">("keep", "drop")
})

const scripts = fc.tuple(fc.array(action, { maxLength: 80 }), configs)

describe("InputArrived properties (generated interleavings)", () => {
  it("the interleavings reach every case: restarts, cut calls, held input, runs, the limit", () => {
    const seen = { restarts: 0, cut: 0, ran: 0, held: 0, limit: 0, dropped: 0 }
    for (const [actions, config] of fc.sample(scripts, { numRuns: 300, seed: 37 })) {
      const played = play(actions, config)
      if (played.restarts > 0) seen.restarts++
      if (played.cut.size > 0) seen.cut++
      if (played.ran.length > 0) seen.ran++
      if (played.messages.some((message) => (message.queued?.length ?? 0) > 0) || played.sent.length > played.restarts) seen.held++
      if (played.final._tag === "InputLimit") seen.limit++
      if (config.interruptedAnswer === "drop" && played.restarts > 0) seen.dropped++
    }
    for (const [what, count] of Object.entries(seen)) expect(count, what).toBeGreaterThan(10)
  })

  it("never runs a call without an Execute or a person's approval, and never one of a cut answer", () => {
    fc.assert(fc.property(scripts, ([actions, config]) => {
      const played = play(actions, config)
      for (const id of played.ran) {
        expect(played.allowed.has(id)).toBe(true)
        expect(played.cut.has(id)).toBe(false)
      }
      // Each call runs at most once.
      expect(new Set(played.ran).size).toBe(played.ran.length)
      for (const id of played.cut) {
        const kept = Messages.findTool(played.messages, id)
        // Kept: failed with the reason; dropped: not in the messages at all.
        if (config.interruptedAnswer === "drop") expect(kept).toBeUndefined()
        else expect(kept?.status).toEqual({ _tag: "Failed", error: Turn.interruptedByInputError })
      }
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("delivers every input message exactly once, in the order sent", () => {
    fc.assert(fc.property(scripts, ([actions, config]) => {
      const played = play(actions, config)
      expect(delivered(played.messages)).toEqual(played.sent)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("bounds restarts by maxInputRestarts per turn and the model calls by the bursts and maxSteps", () => {
    fc.assert(fc.property(scripts, ([actions, config]) => {
      const played = play(actions, config)
      expect(Turn.inputRestarts(played.messages)).toBeLessThanOrEqual(config.maxInputRestarts! + 1)
      if (Turn.inputRestarts(played.messages) > config.maxInputRestarts!) expect(played.final._tag).toBe("InputLimit")
      expect(played.modelCalls).toBeLessThanOrEqual((played.bursts + 1) * config.maxSteps)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("keeps the state writable: the played messages encode and decode as stored documents", () => {
    fc.assert(fc.property(scripts, ([actions, config]) => {
      const played = play(actions, config)
      const json = Messages.toJson(played.messages)
      expect(Result.isSuccess(json)).toBe(true)
      if (Result.isSuccess(json)) expect(Result.getOrThrow(Messages.fromJson(json.success))).toEqual(played.messages)
    }), { numRuns: 100 })
  }, runs.timeout)
})
