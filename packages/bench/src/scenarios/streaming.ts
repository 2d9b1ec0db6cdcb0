/**
 * Scenario 3: streaming overhead. One long Chat Completions stream (many text
 * deltas, then a tool call in fragments) served by a loopback HTTP server in
 * another process, paced on its clock (one event every 1 ms, every 100 µs) or
 * all at once (the burst, a labelled extra), and consumed to the end, each
 * consumer ending up with the same text deltas, text and tool call:
 *   (a) the bare `openai` SDK (the baseline),
 *   (a″) the same SDK iterator read with one `Effect.callback` per event (the least any Effect consumer pays),
 *   (a′) the same SDK stream pulled through `Stream.fromAsyncIterable` (the floor of any Effect-stream consumer),
 *   (b) chat-ts's provider `OpenAiChatCompletions` `stream` (gathered with `LanguageModel.collect`),
 *   (c) `chat.stream` (the turn pauses on the tool call, which needs approval),
 *   (e) `chat.events`, the same turn's events as a plain `AsyncIterable` read with `for await`,
 *   (d) the AI SDK's `streamText` with `@ai-sdk/openai` at the same server.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { Action, Chat, LanguageModel, Messages, Tool, Toolkit } from "@chat-ts/core"
import { OpenAiChatCompletions, OpenAiClient } from "@chat-ts/openai"
import { streamText, tool, type ToolSet } from "ai"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import OpenAI from "openai"
import { fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import { z } from "zod"
import * as os from "node:os"
import { cpuNow, gc, ratio, summarise, type Timing } from "../harness.js"
import { countInstructions } from "../instructions.js"
import { buildBody, caseURL, type Expected, type Pace } from "../sse.js"

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

/** One way of serving the stream. */
export interface Case {
  readonly deltas: number
  /** Microseconds between two events written by the server (0: the whole body at once, the burst). */
  readonly intervalUs: number
}

export interface Config {
  readonly cases: ReadonlyArray<Case>
  /** Rounds run first and not measured (each round streams once through every consumer). */
  readonly warmupRounds: number
  /** Rounds measured; each consumer's samples are one stream per round, the consumers interleaved. */
  readonly rounds: number
  /**
   * A full GC before each stream (untimed), so that no consumer pays for the
   * garbage of the one before it. About 0.4 s each on the benchmark machine:
   * off in the smoke run.
   */
  readonly collect: boolean
}

/** What a consumer ended up with: the same for every consumer, or the scenario fails. */
export interface Work {
  /** Text deltas seen one by one. */
  readonly textDeltas: number
  readonly textChars: number
  readonly toolName: string
  readonly arguments: string
}

export interface Row {
  readonly consumer: string
  /** Per stream; CPU time of this process is the consumer's own cost (the server runs in another process). */
  readonly timing: Timing
  /** Median CPU time over the bare SDK's median CPU time. */
  readonly ratio: number
  /** Median CPU microseconds per SSE event. */
  readonly cpuUsPerEvent: number
  /** Effect interpreter instructions per SSE event (consumers built on Effect; one stream counted after the timed ones). */
  readonly instructionsPerEvent: number | undefined
  readonly work: Work
}

/** How the server actually paced the responses of a case (medians over its responses). */
export interface PaceSummary {
  readonly responses: number
  /** SSE frames per response, the final `[DONE]` included. */
  readonly frames: number
  /** Microseconds between two events, achieved. */
  readonly achievedUs: number
  /** Events per write (above 1: a late timer or turn caught up with several events in one write). */
  readonly eventsPerWrite: number
}

export interface CaseResult {
  readonly intervalUs: number
  readonly events: number
  readonly bytes: number
  /** Paced cases only. */
  readonly pace: PaceSummary | undefined
  /** 1-minute load average of the machine when the case started and when it ended. */
  readonly loadAverage: { readonly start: number; readonly end: number }
  readonly rows: ReadonlyArray<Row>
}

export interface Result {
  readonly rounds: number
  readonly cases: ReadonlyArray<CaseResult>
}

/** Starts the stream server in a child process; `onPace` gets each paced response's pace. */
const startServer = (onPace: (pace: Pace & { readonly intervalUs: number }) => void) =>
  new Promise<{ origin: string; close: () => void }>((resolve, reject) => {
    const child = fork(fileURLToPath(new URL("../sse-server.ts", import.meta.url)), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`the stream server exited with ${code}`)))
    child.on("message", (message) => {
      const { origin, pace } = message as { origin?: string; pace?: Pace & { readonly intervalUs: number } }
      if (pace !== undefined) return onPace(pace)
      if (origin === undefined) return
      resolve({
        origin,
        close: () => {
          child.removeAllListeners("exit")
          child.disconnect()
        }
      })
    })
  })

const model = "gpt-4o-mini"
const prompt = "What is the weather in San Francisco?"

const check = (label: string, expected: Expected, textDeltas: number, text: string, name: string, args: string): Work => {
  if (text !== expected.text) throw new Error(`${label}: wrong text (${text.length} chars, expected ${expected.text.length})`)
  if (name !== expected.toolName) throw new Error(`${label}: wrong tool name ${name}`)
  if (args !== expected.arguments) throw new Error(`${label}: wrong arguments ${args}`)
  return { textDeltas, textChars: text.length, toolName: name, arguments: args }
}

const GetWeather = Tool.make(
  "get_weather",
  {
    description: "Get the weather.",
    parameters: {
      city: Schema.String,
      unit: Schema.String,
      days: Schema.Number,
      include: Schema.Array(Schema.String)
    },
    success: Schema.String
  }
)
const weatherKit = Toolkit.make(GetWeather).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

export const consumers = [
  "(a) openai SDK",
  "(a″) openai SDK, one Effect.callback per event",
  "(a′) openai SDK in an Effect Stream",
  "(b) chat-ts provider stream",
  "(c) chat.stream",
  "(e) chat.events (AsyncIterable)",
  "(d) ai streamText"
] as const

/** The consumers built on Effect: their interpreter instructions per event are counted too. */
export const counted: ReadonlyArray<(typeof consumers)[number]> = [
  "(a″) openai SDK, one Effect.callback per event",
  "(a′) openai SDK in an Effect Stream",
  "(b) chat-ts provider stream",
  "(c) chat.stream",
  "(e) chat.events (AsyncIterable)"
]

/**
 * Builds the consumers against `baseURL`; each streams the whole response
 * once, checks it and returns what it got. `count` runs the consumer's
 * Effect under the instruction counter instead, and gives its count.
 */
export const makeConsumers = async (
  baseURL: string,
  expected: Expected
): Promise<{
  readonly run: Record<(typeof consumers)[number], () => Promise<Work>>
  readonly count: (name: (typeof consumers)[number]) => Promise<number>
}> => {
  let counting = false
  let instructions = 0
  const exec = async <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
    if (!counting) return Effect.runPromise(effect)
    const counted = await countInstructions(effect)
    instructions = counted.instructions
    return counted.value
  }
  const sdk = new OpenAI({ apiKey: "bench", baseURL, maxRetries: 0 })
  const open = () =>
    sdk.chat.completions.create({
      model,
      messages: [{ role: "user", content: prompt }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
      stream: true,
      stream_options: { include_usage: true }
    })
  const bare = async (): Promise<Work> => {
    const stream = await open()
    let text = ""
    let deltas = 0
    let name = ""
    const args: Array<string> = []
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta
      if (delta === undefined) continue
      if (typeof delta.content === "string" && delta.content !== "") {
        deltas++
        text += delta.content
      }
      for (const call of delta.tool_calls ?? []) {
        if (call.function?.name) name = call.function.name
        if (call.function?.arguments) args.push(call.function.arguments)
      }
    }
    return check("openai", expected, deltas, text, name, args.join(""))
  }

  // The floor of any consumer built on Effect streams: the same SDK stream, each chunk pulled
  // through Stream.fromAsyncIterable and handled in Stream.runForEach, nothing else.
  const effectStream = async (): Promise<Work> => {
    const stream = await open()
    let text = ""
    let deltas = 0
    let name = ""
    const args: Array<string> = []
    await exec(Stream.runForEach(Stream.fromAsyncIterable(stream, (error) => error), (chunk) =>
      Effect.sync(() => {
        const delta = chunk.choices[0]?.delta
        if (delta === undefined) return
        if (typeof delta.content === "string" && delta.content !== "") {
          deltas++
          text += delta.content
        }
        for (const call of delta.tool_calls ?? []) {
          if (call.function?.name) name = call.function.name
          if (call.function?.arguments) args.push(call.function.arguments)
        }
      })))
    return check("openai in an Effect Stream", expected, deltas, text, name, args.join(""))
  }

  // The least any consumer in Effect pays at a model's pace: the fiber waits once per event
  // (one Effect.callback on the SDK iterator's promise), no Stream.
  const oneAsync = async (): Promise<Work> => {
    const iterator = (await open())[Symbol.asyncIterator]()
    const next = Effect.callback<IteratorResult<OpenAI.Chat.Completions.ChatCompletionChunk>, unknown>((resume) => {
      iterator.next().then((result) => resume(Effect.succeed(result)), (error) => resume(Effect.fail(error)))
    })
    let text = ""
    let deltas = 0
    let name = ""
    const args: Array<string> = []
    await exec(Effect.gen(function*() {
      while (true) {
        const result = yield* next
        if (result.done === true) return
        const delta = result.value.choices[0]?.delta
        if (delta === undefined) continue
        if (typeof delta.content === "string" && delta.content !== "") {
          deltas++
          text += delta.content
        }
        for (const call of delta.tool_calls ?? []) {
          if (call.function?.name) name = call.function.name
          if (call.function?.arguments) args.push(call.function.arguments)
        }
      }
    }))
    return check("openai, one Effect.callback per event", expected, deltas, text, name, args.join(""))
  }

  const layer = OpenAiChatCompletions.layer({ model, retry: false }).pipe(
    Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("bench"), baseURL }))
  )
  const handlers = weatherKit.toLayer({ get_weather: () => Effect.succeed("sunny") })
  const { chat, languageModel } = await Effect.runPromise(
    Effect.gen(function*() {
      return { chat: yield* Chat.make({ tools: [weatherKit] }), languageModel: yield* LanguageModel.LanguageModel }
    }).pipe(Effect.provide(Layer.merge(layer, handlers)))
  )
  const request: LanguageModel.Request = {
    messages: Messages.fromUser(prompt),
    tools: [GetWeather.declaration],
    options: {}
  }
  // What `LanguageModel.collect` does (a `runForEach` into an `Accumulator`), counting the text deltas.
  const provider = async (): Promise<Work> => {
    const acc = new LanguageModel.Accumulator()
    let deltas = 0
    await exec(Stream.runForEach(languageModel.stream(request), (part) =>
      Effect.sync(() => {
        if (part._tag === "TextDelta") deltas++
        acc.add(part)
      })))
    const response = acc.response()
    if (response === undefined) throw new Error("provider: the stream ended before its finish")
    let text = ""
    let name = ""
    let args = ""
    for (const part of response.parts) {
      if (part._tag === "Text") text += part.text
      else if (part._tag === "ToolCall") {
        name = part.name
        args = part.arguments
      }
    }
    return check("provider", expected, deltas, text, name, args)
  }

  const input = Messages.fromUser(prompt)
  const chatStream = async (): Promise<Work> => {
    let text = ""
    let deltas = 0
    let last: unknown
    await exec(Stream.runForEach(chat.stream(input), (event) =>
      Effect.sync(() => {
        if (event._tag === "TextDelta") {
          deltas++
          text += event.text
        }
        last = event
      })))
    const paused = last as { _tag: string; messages: Messages.Messages }
    if (paused._tag !== "Paused") throw new Error(`chat.stream ended with ${paused._tag}`)
    const call = Messages.toolCalls(paused.messages)[0]!
    return check("chat.stream", expected, deltas, text, call.name, call.arguments)
  }

  // The same turn read with `for await`; its fibers (the turn's, the watchdog's) are counted through
  // `exec` running an effect that waits for the loop.
  const chatEvents = async (): Promise<Work> => {
    let text = ""
    let deltas = 0
    let last: unknown
    const loop = async () => {
      for await (const event of chat.events(input)) {
        if (event._tag === "TextDelta") {
          deltas++
          text += event.text
        }
        last = event
      }
    }
    await (counting ? exec(Effect.promise(loop)) : loop())
    const paused = last as { _tag: string; messages: Messages.Messages }
    if (paused._tag !== "Paused") throw new Error(`chat.events ended with ${paused._tag}`)
    const call = Messages.toolCalls(paused.messages)[0]!
    return check("chat.events", expected, deltas, text, call.name, call.arguments)
  }

  const openai = createOpenAI({ apiKey: "bench", baseURL })
  // No `execute`: the call is handed back, as chat-ts pauses on it. (The cast: ai's ToolSet does not
  // accept a tool without `execute` under exactOptionalPropertyTypes.)
  const tools = {
    get_weather: tool({
      description: "Get the weather.",
      inputSchema: z.object({ city: z.string(), unit: z.string(), days: z.number(), include: z.array(z.string()) })
    })
  } as unknown as ToolSet
  const ai = async (): Promise<Work> => {
    const result = streamText({ model: openai.chat(model), prompt, tools, maxRetries: 0 })
    let text = ""
    let deltas = 0
    let name = ""
    let args = ""
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        deltas++
        text += part.text
      } else if (part.type === "tool-call") {
        name = part.toolName
        args = JSON.stringify(part.input)
      } else if (part.type === "error") throw part.error
    }
    return check("ai", expected, deltas, text, name, args)
  }

  const run = {
    "(a) openai SDK": bare,
    "(a″) openai SDK, one Effect.callback per event": oneAsync,
    "(a′) openai SDK in an Effect Stream": effectStream,
    "(b) chat-ts provider stream": provider,
    "(c) chat.stream": chatStream,
    "(e) chat.events (AsyncIterable)": chatEvents,
    "(d) ai streamText": ai
  }
  const count = async (name: (typeof consumers)[number]): Promise<number> => {
    counting = true
    try {
      await run[name]()
      return instructions
    } finally {
      counting = false
    }
  }
  return { run, count }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length === 0 ? Number.NaN : sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const load = (): number => Math.round(os.loadavg()[0]! * 100) / 100

/**
 * Runs one case: `warmupRounds + rounds` rounds, each streaming once through
 * every consumer (the order rotating from round to round, so that no consumer
 * always follows the same one), a full GC before each stream if asked. A sample is the
 * CPU time of this process over one whole stream (what the consumer cost; the
 * server is another process), with wall time alongside.
 */
export const runCase = async (
  origin: string,
  paces: ReadonlyArray<Pace & { readonly intervalUs: number }>,
  testCase: Case,
  config: Config
): Promise<CaseResult> => {
  const { rounds, warmupRounds } = config
  const body = buildBody(testCase.deltas)
  const loadStart = load()
  const already = paces.length
  const consumer = await makeConsumers(caseURL(origin, testCase.deltas, testCase.intervalUs), body.expected)
  const fns = consumer.run
  const cpu = new Map<string, Array<number>>(consumers.map((name) => [name, []]))
  const wall = new Map<string, Array<number>>(consumers.map((name) => [name, []]))
  const work = new Map<string, Work>()
  for (let round = 0; round < warmupRounds + rounds; round++) {
    for (let i = 0; i < consumers.length; i++) {
      const name = consumers[(i + round) % consumers.length]!
      gc()
      const startWall = performance.now()
      const startCpu = cpuNow()
      const got = await fns[name]()
      const cpuMs = cpuNow() - startCpu
      const wallMs = performance.now() - startWall
      work.set(name, got)
      if (round >= warmupRounds) {
        cpu.get(name)!.push(cpuMs)
        wall.get(name)!.push(wallMs)
      }
    }
  }
  const timings = new Map(consumers.map((name) => [name, summarise(cpu.get(name)!, wall.get(name)!)]))
  const instructions = new Map<string, number>()
  for (const name of counted) instructions.set(name, Math.round((await consumer.count(name)) / body.events * 10) / 10)
  // The last responses' paces may still be on their way from the server.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const paced = paces.slice(already).filter((p) => p.intervalUs === testCase.intervalUs)
  const base = timings.get(consumers[0])!.medianUs
  return {
    intervalUs: testCase.intervalUs,
    events: body.events,
    bytes: body.bytes.length,
    pace: testCase.intervalUs > 0 && paced.length > 0
      ? {
        responses: paced.length,
        frames: median(paced.map((p) => p.frames)),
        achievedUs: Math.round(median(paced.map((p) => p.achievedUs)) * 10) / 10,
        eventsPerWrite: Math.round(median(paced.map((p) => p.frames / p.writes)) * 1000) / 1000
      }
      : undefined,
    loadAverage: { start: loadStart, end: load() },
    rows: consumers.map((name) => ({
      consumer: name,
      timing: timings.get(name)!,
      ratio: ratio(timings.get(name)!.medianUs, base),
      cpuUsPerEvent: Math.round((timings.get(name)!.medianUs / body.events) * 1000) / 1000,
      instructionsPerEvent: instructions.get(name),
      work: work.get(name)!
    }))
  }
}

/** Runs every case, one after the other, against one server process. */
export const run = async (config: Config): Promise<Result> => {
  const paces: Array<Pace & { readonly intervalUs: number }> = []
  const server = await startServer((pace) => paces.push(pace))
  try {
    const cases: Array<CaseResult> = []
    for (const testCase of config.cases) cases.push(await runCase(server.origin, paces, testCase, config))
    return { rounds: config.rounds, cases }
  } finally {
    server.close()
  }
}
