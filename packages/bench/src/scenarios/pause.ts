/**
 * Scenario 2: pause → serialise → resume. A conversation with a history of H
 * messages gets a new user message; the model asks for a tool that needs
 * approval and the turn pauses. Then: encode the paused state to a JSON
 * string, decode it, approve the call, resume to completion. The same with the
 * OpenAI Agents SDK's `RunState` (`toString`, `RunState.fromString`,
 * `state.approve`, `run(agent, state)`) on the same history.
 *
 * Sizes: our paused state (the versioned messages document) and the Agents
 * SDK's serialised `RunState`, against the conversation's own JSON: the Chat
 * Completions wire messages (what is sent to the model, nothing else).
 */
import { Messages, PauseReason } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import * as EffectResult from "effect/Result"
import { type Budget, ratio, type Timing, timeTasks } from "../harness.js"
import * as history from "../history.js"
import * as agents from "../peers/agents.js"
import * as chatts from "../peers/chatts.js"

export interface Config {
  readonly sizes: ReadonlyArray<number>
  readonly budget: Budget
}

export const phases = ["encode", "decode", "approve", "resume", "restore (decode + approve + resume)"] as const
export type Phase = (typeof phases)[number]

export interface LibraryRow {
  readonly library: "chat-ts" | "@openai/agents"
  readonly historyMessages: number
  readonly stateBytes: number
  /** State bytes over the wire JSON of the same conversation. */
  readonly sizeRatio: number
  readonly timings: Record<Phase, Timing>
}

export interface Result {
  readonly rows: ReadonlyArray<LibraryRow & { readonly wireBytes: number }>
}

const prompt = "Delete the old logs."

const bytes = (text: string): number => Buffer.byteLength(text, "utf8")

/** The conversation's own JSON at the pause: history, the new user message and the call. */
const wireJson = (entries: ReadonlyArray<history.Entry>): string =>
  JSON.stringify([
    ...history.toWire(entries),
    { role: "user", content: prompt },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "delete_files", arguments: "{\"paths\":[\"a.log\"]}" } }]
    }
  ])

/** Scales the number of samples down for long histories so the scenario's time stays bounded. */
const budgetFor = (budget: Budget, size: number): Budget => {
  const scale = Math.max(1, Math.floor(size / 100))
  return { ...budget, iterations: Math.max(2, Math.floor(budget.iterations / scale)) }
}

const chatTs = async (entries: ReadonlyArray<history.Entry>, budget: Budget): Promise<LibraryRow> => {
  const chat = await chatts.approvalChat()
  const input = [...history.toChatTs(entries), Messages.user(prompt)]
  const paused = await Effect.runPromise(chat.complete(input))
  if (paused.outcome._tag !== "Paused") throw new Error("chat-ts: the turn did not pause")
  const id = PauseReason.toolIds(paused.outcome.reason)[0]!
  const json = EffectResult.getOrThrow(Messages.toJson(paused.messages))
  const decoded = EffectResult.getOrThrow(Messages.fromJson(json))
  const approved = EffectResult.getOrThrow(Messages.approve(decoded, id))
  const resume = async (messages: Messages.Messages) => {
    const done = await Effect.runPromise(chat.resume(messages))
    if (done.outcome._tag !== "Complete") throw new Error("chat-ts: the turn did not complete")
  }
  const timings = await timeTasks([
    { name: "encode", fn: () => EffectResult.getOrThrow(Messages.toJson(paused.messages)) },
    { name: "decode", fn: () => EffectResult.getOrThrow(Messages.fromJson(json)) },
    { name: "approve", fn: () => EffectResult.getOrThrow(Messages.approve(decoded, id)) },
    { name: "resume", fn: () => resume(approved) },
    {
      name: "restore (decode + approve + resume)",
      fn: () => resume(EffectResult.getOrThrow(Messages.approve(EffectResult.getOrThrow(Messages.fromJson(json)), id)))
    }
  ], budget)
  return {
    library: "chat-ts",
    historyMessages: entries.length,
    stateBytes: bytes(json),
    sizeRatio: ratio(bytes(json), bytes(wireJson(entries))),
    timings: timings as Record<Phase, Timing>
  }
}

const openaiAgents = async (entries: ReadonlyArray<history.Entry>, budget: Budget): Promise<LibraryRow> => {
  const agent = agents.approvalAgent()
  const input: Array<agents.AgentInputItem> = [...history.toAgents(entries), { role: "user", content: prompt }]
  const paused = await agents.run(agent, input)
  if (paused.interruptions.length !== 1) throw new Error("@openai/agents: the run did not pause on one approval")
  const text = paused.state.toString()
  type State = Awaited<ReturnType<typeof agents.RunState.fromString<unknown, typeof agent>>>
  const restore = () => agents.RunState.fromString(agent, text)
  const approve = (state: State) => {
    state.approve(state.getInterruptions()[0]!)
    return state
  }
  const resume = async (state: State) => {
    const done = await agents.run(agent, state)
    if (done.finalOutput !== "Deleted.") throw new Error("@openai/agents: the run did not complete")
  }
  // Approving and running change the state: each call gets a fresh one, prepared untimed.
  let fresh: State | undefined
  let approved: State | undefined
  const timings = await timeTasks([
    { name: "encode", fn: () => paused.state.toString() },
    { name: "decode", fn: restore },
    {
      name: "approve",
      beforeEach: async () => {
        fresh = await restore()
      },
      fn: () => approve(fresh!)
    },
    {
      name: "resume",
      beforeEach: async () => {
        approved = approve(await restore())
      },
      fn: () => resume(approved!)
    },
    { name: "restore (decode + approve + resume)", fn: async () => resume(approve(await restore())) }
  ], budget)
  return {
    library: "@openai/agents",
    historyMessages: entries.length,
    stateBytes: bytes(text),
    sizeRatio: ratio(bytes(text), bytes(wireJson(entries))),
    timings: timings as Record<Phase, Timing>
  }
}

export const run = async (config: Config): Promise<Result> => {
  const rows: Array<LibraryRow & { wireBytes: number }> = []
  for (const size of config.sizes) {
    const entries = history.entries(size)
    const budget = budgetFor(config.budget, size)
    const wireBytes = bytes(wireJson(entries))
    rows.push({ ...(await chatTs(entries, budget)), wireBytes })
    rows.push({ ...(await openaiAgents(entries, budget)), wireBytes })
  }
  return { rows }
}
