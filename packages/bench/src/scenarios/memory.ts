/**
 * Scenario 11: memory. The heap a process holds per 1,000 completed turns it
 * keeps, each turn scenario 1's at N=10 (a no-op tool called ten times, then an
 * answer) in a conversation of its own. Every library reads the same model
 * responses from the "wire": each model call parses a Chat Completions body
 * (JSON text) afresh, so no library keeps strings or objects another turn
 * shares through the script. The floor is what a hand-written loop keeps: the
 * simplest plain objects holding the same content (see `floorTurn`).
 *
 * Heap is measured after a full GC, in the spaces holding objects (see
 * `retainedData`): a first batch of turns is run and kept (so that type
 * feedback and the libraries' caches are in the baseline), then the measured
 * batch, kept beside it; the figure is what the measured batch added, per
 * 1,000 turns.
 */
import { Chat, LanguageModel, Messages } from "@chat-ts/core"
import { Agent, type Model, run as runAgent, setTracingDisabled, tool as agentTool, Usage as AgentUsage } from "@openai/agents"
import { generateText, isStepCount, type ModelMessage, tool as aiTool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as EffectResult from "effect/Result"
import { z } from "zod"
import * as v8 from "node:v8"
import { gc } from "../harness.js"
import { noopHandlers, noopKit } from "../peers/chatts.js"

export interface Config {
  /** Turns per batch: one batch kept as warm-up, then the measured one. */
  readonly turns: number
  /** Tool steps per turn (scenario 1's N). */
  readonly steps: number
}

export const libraries = ["chat-ts", "plain objects (floor)", "ai", "@openai/agents"] as const
export type Library = (typeof libraries)[number]

export interface Row {
  readonly library: Library
  readonly turns: number
  /** Heap the measured batch added after a full GC, per 1,000 kept turns, in bytes. */
  readonly bytesPer1000Turns: number
  /** Items the library keeps per turn (messages, or history items). */
  readonly itemsPerTurn: number
}

export interface Result {
  readonly steps: number
  readonly rows: ReadonlyArray<Row>
  /** chat-ts's stored JSON (`Messages.toJson`) of one kept turn, in bytes: what the same turn takes as text. */
  readonly chatTsJsonBytesPerTurn: number
}

// ---------------------------------------------------------------------------
// The wire: one Chat Completions body per model call, parsed by each library's model
// ---------------------------------------------------------------------------

interface WireBody {
  readonly choices: ReadonlyArray<{
    readonly message: {
      readonly content: string | null
      readonly tool_calls?: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string; readonly arguments: string } }>
    }
    readonly finish_reason: "stop" | "tool_calls"
  }>
  readonly usage: { readonly prompt_tokens: number; readonly completion_tokens: number }
}

/**
 * A call id as Chat Completions gives them: `call_` and 24 letters and digits,
 * different for every call (built from the call's number, so runs repeat).
 */
export const callId = (n: number): string => `call_${n.toString(36).padStart(24, "0")}`

/**
 * The bodies of turn `turn`: `steps` calls of `noop` (fresh ids), then the
 * answer. The input tokens grow with the conversation, as a model reports them.
 */
export const wireTurn = (steps: number, turn: number): ReadonlyArray<string> => [
  ...Array.from({ length: steps }, (_, i) =>
    JSON.stringify({
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: callId(turn * steps + i + 1), type: "function", function: { name: "noop", arguments: "{}" } }]
        },
        finish_reason: "tool_calls"
      }],
      usage: { prompt_tokens: 12 + 20 * i, completion_tokens: 5, total_tokens: 17 + 20 * i }
    })),
  JSON.stringify({
    choices: [{ index: 0, message: { role: "assistant", content: "Done." }, finish_reason: "stop" }],
    usage: { prompt_tokens: 12 + 20 * steps, completion_tokens: 2, total_tokens: 14 + 20 * steps }
  })
]

/**
 * A model reading one turn's bodies in order, one JSON text parsed per call;
 * `reset` starts the next turn (with new call ids).
 */
const wireModel = (steps: number) => {
  let turn = 0
  let bodies = wireTurn(steps, turn)
  let index = 0
  return {
    next: (): WireBody => JSON.parse(bodies[Math.min(index++, bodies.length - 1)]!) as WireBody,
    reset: () => {
      bodies = wireTurn(steps, ++turn)
      index = 0
    }
  }
}

// ---------------------------------------------------------------------------
// The kept turns, one function per library
// ---------------------------------------------------------------------------

/** Runs one turn and returns what the library keeps of it. */
type Turn = () => Promise<ReadonlyArray<unknown>>

const chatTsTurn = async (steps: number): Promise<Turn> => {
  const wire = wireModel(steps)
  const service = LanguageModel.make({
    generate: () =>
      Effect.sync((): LanguageModel.Response => {
        const body = wire.next()
        const choice = body.choices[0]!
        const calls = choice.message.tool_calls ?? []
        return {
          parts: calls.length > 0
            ? calls.map((c) => Messages.toolCall({ id: c.id, name: c.function.name, arguments: c.function.arguments }))
            : [Messages.text(choice.message.content ?? "")],
          usage: { inputTokens: body.usage.prompt_tokens, outputTokens: body.usage.completion_tokens },
          finishReason: choice.finish_reason === "stop" ? "stop" : "tool-calls"
        }
      })
  })
  const chat = await Effect.runPromise(
    Chat.make({ tools: [noopKit], maxSteps: steps + 1 }).pipe(
      Effect.provide(Layer.merge(LanguageModel.layer(service), noopHandlers))
    )
  )
  return async () => {
    wire.reset()
    const result = await Effect.runPromise(chat.complete([Messages.user("Go.")]))
    if (result.outcome._tag !== "Complete" || result.messages.length !== steps + 2) throw new Error("chat-ts: the turn did not complete")
    return result.messages
  }
}

/** A tool call as the floor keeps it: the wire's id, name and arguments, and the result sent back. */
export interface FloorCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
  result: string | undefined
}

/** The floor's kept messages: the fields a hand-written loop needs to send the conversation again. */
export type FloorMessage =
  | { readonly role: "user" | "assistant"; readonly text: string }
  | { readonly role: "assistant"; readonly calls: ReadonlyArray<FloorCall> }

const floorHandlers: Record<string, (args: unknown) => unknown> = { noop: () => ({ ok: true }) }

/**
 * The floor: a hand-written loop keeping, per message, its role and text; per
 * tool call, its id, name and arguments (the wire's strings) and, on the same
 * object, its result as the JSON text sent back to the model. No usage, no
 * finish reason, no status: the least that holds the same conversation.
 */
const floorTurn = (steps: number): Turn => {
  const wire = wireModel(steps)
  return () => {
    wire.reset()
    const messages: Array<FloorMessage> = [{ role: "user", text: "Go." }]
    for (let step = 0; step <= steps; step++) {
      const choice = wire.next().choices[0]!
      const calls: Array<FloorCall> = (choice.message.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
        result: undefined
      }))
      if (calls.length === 0) {
        messages.push({ role: "assistant", text: choice.message.content ?? "" })
        return Promise.resolve(messages)
      }
      messages.push({ role: "assistant", calls })
      for (const call of calls) call.result = JSON.stringify(floorHandlers[call.name]!(JSON.parse(call.arguments)))
    }
    throw new Error("floor: the turn did not complete")
  }
}

const aiTurn = (steps: number): Turn => {
  const wire = wireModel(steps)
  const usage = (body: WireBody) => ({
    inputTokens: { total: body.usage.prompt_tokens, noCache: body.usage.prompt_tokens, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: body.usage.completion_tokens, text: body.usage.completion_tokens, reasoning: undefined }
  })
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      const body = wire.next()
      const choice = body.choices[0]!
      const calls = choice.message.tool_calls ?? []
      return calls.length > 0
        ? {
          content: calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.id, toolName: c.function.name, input: c.function.arguments })),
          finishReason: { unified: "tool-calls" as const, raw: choice.finish_reason },
          usage: usage(body),
          warnings: []
        }
        : {
          content: [{ type: "text" as const, text: choice.message.content ?? "" }],
          finishReason: { unified: "stop" as const, raw: choice.finish_reason },
          usage: usage(body),
          warnings: []
        }
    }
  })
  const tools = { noop: aiTool({ description: "Does nothing.", inputSchema: z.object({}), execute: async () => ({ ok: true }) }) }
  return async () => {
    wire.reset()
    // The mock records every call: not what a user keeps.
    model.doGenerateCalls.length = 0
    const prompt: Array<ModelMessage> = [{ role: "user", content: "Go." }]
    const result = await generateText({ model, tools, messages: prompt, stopWhen: isStepCount(steps + 1) })
    if (result.text !== "Done.") throw new Error("ai: the turn did not complete")
    return [...prompt, ...result.responseMessages]
  }
}

const agentsTurn = (steps: number): Turn => {
  setTracingDisabled(true)
  const wire = wireModel(steps)
  const model: Model = {
    getResponse: async () => {
      const body = wire.next()
      const choice = body.choices[0]!
      const calls = choice.message.tool_calls ?? []
      const usage = new AgentUsage({
        requests: 1,
        inputTokens: body.usage.prompt_tokens,
        outputTokens: body.usage.completion_tokens,
        totalTokens: body.usage.prompt_tokens + body.usage.completion_tokens
      })
      return calls.length > 0
        ? {
          usage,
          output: calls.map((c) => ({
            type: "function_call" as const,
            callId: c.id,
            name: c.function.name,
            arguments: c.function.arguments,
            status: "completed" as const
          }))
        }
        : {
          usage,
          output: [{
            type: "message" as const,
            role: "assistant" as const,
            status: "completed" as const,
            content: [{ type: "output_text" as const, text: choice.message.content ?? "" }]
          }]
        }
    },
    getStreamedResponse: () => {
      throw new Error("the memory scenario does not stream")
    }
  }
  const agent = new Agent({
    name: "bench",
    instructions: "Benchmark agent.",
    model,
    tools: [agentTool({ name: "noop", description: "Does nothing.", parameters: z.object({}), execute: async () => JSON.stringify({ ok: true }) })]
  })
  return async () => {
    wire.reset()
    const result = await runAgent(agent, "Go.", { maxTurns: steps + 1 })
    if (result.finalOutput !== "Done.") throw new Error("@openai/agents: the turn did not complete")
    return result.history
  }
}

const makeTurn = (library: Library, steps: number): Promise<Turn> => {
  switch (library) {
    case "chat-ts":
      return chatTsTurn(steps)
    case "plain objects (floor)":
      return Promise.resolve(floorTurn(steps))
    case "ai":
      return Promise.resolve(aiTurn(steps))
    case "@openai/agents":
      return Promise.resolve(agentsTurn(steps))
  }
}

/** Runs `turns` turns one after the other and keeps what each returned. */
const keep = async (turn: Turn, turns: number): Promise<Array<ReadonlyArray<unknown>>> => {
  const kept: Array<ReadonlyArray<unknown>> = []
  for (let i = 0; i < turns; i++) kept.push(await turn())
  return kept
}

/** The heap spaces that hold JavaScript objects (not code, bytecode or other trusted data). */
const dataSpaces = new Set(["new_space", "old_space", "large_object_space", "new_large_object_space"])

/**
 * Bytes of objects in use after a full GC: the data spaces only. Compiled code
 * and bytecode (the code and trusted spaces) change on the JIT's schedule
 * (optimised code arrives later on a loaded machine, unused bytecode is
 * flushed after a few GCs), which would count another library's code in a
 * batch's figure.
 */
const retainedData = (): number => {
  gc()
  let used = 0
  for (const space of v8.getHeapSpaceStatistics()) if (dataSpaces.has(space.space_name)) used += space.space_used_size
  return used
}

/** The heap the measured batch of one library's turns holds, per 1,000 turns. */
const measure = async (library: Library, config: Config): Promise<Row> => {
  const turn = await makeTurn(library, config.steps)
  const warm = await keep(turn, config.turns)
  const before = retainedData()
  const measured = await keep(turn, config.turns)
  const after = retainedData()
  // Both batches stay reachable until both heaps are read.
  if (warm.length + measured.length !== 2 * config.turns) throw new Error("memory: a batch lost turns")
  return {
    library,
    turns: config.turns,
    bytesPer1000Turns: Math.round(((after - before) / config.turns) * 1000),
    itemsPerTurn: measured[0]!.length
  }
}

export const run = async (config: Config): Promise<Result> => {
  const rows: Array<Row> = []
  for (const library of libraries) rows.push(await measure(library, config))
  const sample = await (await chatTsTurn(config.steps))()
  const json = EffectResult.getOrThrow(Messages.toJson(sample as Messages.Messages))
  return { steps: config.steps, rows, chatTsJsonBytesPerTurn: Buffer.byteLength(json) }
}
