/**
 * What each check of a step costs (scenario 7's table of a step by check).
 * A step of the loop turn (a `noop` tool with no parameters, `{}` as its
 * arguments, `{ ok: true }` as its result) calls the functions below; each is
 * run here on the inputs that step gives it, many calls per sample, the
 * samples of every check interleaved in rounds (so that load on the machine
 * falls on all of them alike), and its CPU time per call is the median of its
 * rounds. Several are core's internal functions (not exported by
 * `@chat-ts/core`): they are loaded from core's sources by path, the same
 * modules the turn runs (the workspace maps `@chat-ts/core` to those sources).
 */
import { Messages, Turn } from "@chat-ts/core"
import * as Schema from "effect/Schema"
import { cpuNow } from "./harness.js"
import { Noop } from "./peers/chatts.js"

export interface Config {
  /** Interleaved rounds; each check's figure is the median of its rounds. */
  readonly rounds: number
  /** Calls of each check per round. */
  readonly calls: number
}

export interface Row {
  readonly check: string
  /** How many times one step of the loop turn makes it. */
  readonly perStep: number
  readonly usPerCall: number
  /** `usPerCall × perStep`. */
  readonly usPerStep: number
}

type Part = Messages.ToolCallPart

/** The internal functions measured, as core's sources export them. */
interface Internals {
  readonly canonicalCall: (part: Part) => Part
  readonly decodeArguments: (tool: typeof Noop, text: string) => unknown
  readonly toStoredJson: (value: unknown) => unknown
  readonly toMessage: (response: unknown, parts: ReadonlyArray<Messages.Part>) => unknown
  readonly satisfied: (messages: Messages.Messages, call: Part) => boolean
  readonly argumentsHash: (text: string) => string
  readonly uniqueId: (id: string, isTaken: (id: string) => boolean, count: number) => string
}

// Core as published (tsc's dist/, built by `npx tsc -b`), as the loop it is compared with runs.
const internal = (file: string): Promise<unknown> => import(new URL(`../../core/dist/${file}`, import.meta.url).href)

const loadInternals = async (): Promise<Internals> => {
  const [jsonText, json, policy, streamed] = (await Promise.all(
    ["internal/jsonText.js", "tools/ToolCodec.js", "turn/internal/policy.js", "turn/Stepping.js"].map(internal)
  )) as Array<Record<string, unknown>>
  return {
    canonicalCall: jsonText!.canonicalCall,
    decodeArguments: json!.decodeArguments,
    toStoredJson: json!.toStoredJson,
    toMessage: json!.toMessage,
    satisfied: policy!.satisfied,
    argumentsHash: policy!.argumentsHash,
    uniqueId: streamed!.uniqueId
  } as Internals
}

/** One check: its name, how often a step makes it, and one call of it (returning something, so it is not optimised away). */
interface Check {
  readonly check: string
  readonly perStep: number
  readonly run: () => unknown
}

/** The events of one loop turn of `steps` tool steps, as the shell sends them (scenario 4's sequence). */
const turnEvents = (steps: number): Array<Turn.Event> => {
  const usage = { inputTokens: 10, outputTokens: 5 }
  const events: Array<Turn.Event> = [Turn.Event.Resume({ now: 0 })]
  for (let i = 1; i <= steps; i++) {
    const id = `call_${i}`
    events.push(
      Turn.Event.ModelResponded({
        message: { role: "assistant", parts: [Messages.toolCall({ id, name: "noop", arguments: "{}" })], usage, finishReason: "tool-calls" }
      }),
      Turn.Event.Decided({ now: 0, decisions: [{ id, decision: Turn.Decision.Execute() }] }),
      Turn.Event.ToolSucceeded({ id, result: { ok: true } }),
      Turn.Event.Resume({ now: 0 })
    )
  }
  events.push(Turn.Event.ModelResponded({ message: { role: "assistant", parts: [{ _tag: "Text", text: "Done." }], usage, finishReason: "stop" } }))
  return events
}

const checks = (core: Internals): ReadonlyArray<Check> => {
  const call = Messages.toolCall({ id: "call_1", name: "noop", arguments: "{}" })
  const encode = Schema.encodeUnknownResult(Noop.success as Schema.Codec<unknown, unknown>)
  const response = { parts: [call], usage: { inputTokens: 10, outputTokens: 5 }, finishReason: "tool-calls" }
  const approved: Part = { ...call, status: { _tag: "Approved" } }
  // A 2-of-n policy approved by two people (not the loop's case: what the check costs where it has work to do).
  const hash = core.argumentsHash("{}")
  const vote = (by: string) => ({ by, at: 1, argumentsHash: hash })
  const underPolicy: Part = {
    ...call,
    status: { _tag: "Approved", policy: { quorum: 2 }, decision: { by: "b", at: 1, argumentsHash: hash, votes: [vote("a"), vote("b")] } }
  }
  const conversation: Messages.Messages = [Messages.user("Go.")]
  const taken = new Set(Array.from({ length: 10 }, (_, i) => `call_${i + 100}`))
  const steps = 10
  const events = turnEvents(steps)
  const execute = Turn.Decision.Execute()
  return [
    { check: "the model's arguments read on entry (`canonicalCall`: JSON, duplicate keys, canonical text)", perStep: 1, run: () => core.canonicalCall(call) },
    { check: "arguments parsed and decoded with the tool's Schema (`decodeArguments`: at the decision; the handler gets that value when no strategy saw it)", perStep: 1, run: () => core.decodeArguments(Noop, "{}") },
    { check: "result encoded with the tool's success Schema", perStep: 1, run: () => encode({ ok: true }) },
    { check: "result checked as storable JSON (`toStoredJson`)", perStep: 1, run: () => core.toStoredJson({ ok: true }) },
    { check: "response made storable (`toMessage`: counts, parts)", perStep: 1, run: () => core.toMessage(response, response.parts) },
    { check: "decision checked (`Turn.isValidDecision`)", perStep: 2, run: () => Turn.isValidDecision(execute) },
    { check: "decision policy before the run (`Policy.satisfied`; no policy, as in the loop)", perStep: 1, run: () => core.satisfied(conversation, approved) },
    { check: "decision policy, 2-of-n with two votes (hash of the arguments, each vote; not in the loop)", perStep: 0, run: () => core.satisfied(conversation, underPolicy) },
    {
      check: "call id made unique in the conversation (`uniqueId` on the turn's id set)",
      perStep: 1,
      run: () => core.uniqueId("call_1", (id) => taken.has(id), taken.size)
    },
    {
      // One call is a whole turn of `steps` tool steps and the answer: a step is 1/(steps + 1) of it.
      check: `the reducer's four events (\`Turn.run\` of a ${steps}-step turn; includes the read on entry, the decision and policy checks above)`,
      perStep: 1 / (steps + 1),
      run: () => Turn.run(conversation, events)
    }
  ]
}

/** Times every check, interleaved, and returns their costs per call and per step. */
export const measure = async (config: Config): Promise<ReadonlyArray<Row>> => {
  const list = checks(await loadInternals())
  const samples = list.map((): Array<number> => [])
  let sink = 0
  // Warm up every check before timing any of them.
  for (const check of list) for (let i = 0; i < config.calls; i++) sink += check.run() === undefined ? 0 : 1
  for (let round = 0; round < config.rounds; round++) {
    list.forEach((check, index) => {
      const start = cpuNow()
      for (let i = 0; i < config.calls; i++) sink += check.run() === undefined ? 0 : 1
      samples[index]!.push(((cpuNow() - start) * 1000) / config.calls)
    })
  }
  if (sink < 0) throw new Error("unreachable")
  return list.map((check, index) => {
    const sorted = [...samples[index]!].sort((a, b) => a - b)
    const usPerCall = Math.round(sorted[Math.floor(sorted.length / 2)]! * 1000) / 1000
    return { check: check.check, perStep: check.perStep, usPerCall, usPerStep: Math.round(usPerCall * check.perStep * 1000) / 1000 }
  })
}
