/**
 * Scenario 3: streaming overhead. One long Chat Completions stream (many text
 * deltas, then a tool call in fragments) served by a loopback HTTP server and
 * consumed to the end, each consumer ending up with the whole text and the
 * tool call's arguments:
 *   (a) the bare `openai` SDK (the baseline),
 *   (a′) the same SDK stream pulled through `Stream.fromAsyncIterable` (the floor of any Effect-stream consumer),
 *   (b) chat-ts's provider `OpenAiChatCompletions` `stream` (gathered with `LanguageModel.collect`),
 *   (c) `chat.stream` (the turn pauses on the tool call, which needs approval),
 *   (d) the AI SDK's `streamText` with `@ai-sdk/openai` at the same server.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { Action, Chat, LanguageModel, Messages, Tool, Toolkit } from "@chat-ts/core"
import { OpenAiChatCompletions, OpenAiClient } from "@chat-ts/providers"
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
import { type Budget, ratio, type Timing, timeTasks } from "../harness.js"
import { buildBody, type Expected } from "../sse.js"

;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

export interface Config {
  readonly deltas: number
  /** Microseconds between two events written by the server (0: the whole body at once). */
  readonly intervalUs: number
  readonly budget: Budget
}

export interface Row {
  readonly consumer: string
  /** Per stream; CPU time of this process is the consumer's own cost (the server runs in another process). */
  readonly timing: Timing
  /** Median CPU time over the bare SDK's median CPU time. */
  readonly ratio: number
  /** Median CPU microseconds per SSE event. */
  readonly cpuUsPerEvent: number
}

export interface Result {
  readonly events: number
  readonly bytes: number
  readonly intervalUs: number
  readonly rows: ReadonlyArray<Row>
}

/** Starts the stream server in a child process. */
const startServer = (deltas: number, intervalUs: number) =>
  new Promise<{ baseURL: string; close: () => void }>((resolve, reject) => {
    const child = fork(fileURLToPath(new URL("../sse-server.ts", import.meta.url)), [String(deltas), String(intervalUs)], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`the stream server exited with ${code}`)))
    child.once("message", (message) => {
      const { baseURL } = message as { baseURL: string }
      resolve({
        baseURL,
        close: () => {
          child.removeAllListeners("exit")
          child.disconnect()
        }
      })
    })
  })

const model = "gpt-4o-mini"
const prompt = "What is the weather in San Francisco?"

const check = (label: string, expected: Expected, text: string, name: string, args: string): void => {
  if (text !== expected.text) throw new Error(`${label}: wrong text (${text.length} chars, expected ${expected.text.length})`)
  if (name !== expected.toolName) throw new Error(`${label}: wrong tool name ${name}`)
  if (args !== expected.arguments) throw new Error(`${label}: wrong arguments ${args}`)
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
  "(a′) openai SDK in an Effect Stream",
  "(b) chat-ts provider stream",
  "(c) chat.stream",
  "(d) ai streamText"
] as const

/** Builds the four consumers against `baseURL`; each streams the whole response once and checks it. */
export const makeConsumers = async (baseURL: string, expected: Expected) => {
  const sdk = new OpenAI({ apiKey: "bench", baseURL, maxRetries: 0 })
  const bare = async (): Promise<void> => {
    const stream = await sdk.chat.completions.create({
      model,
      messages: [{ role: "user", content: prompt }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
      stream: true,
      stream_options: { include_usage: true }
    })
    let text = ""
    let name = ""
    const args: Array<string> = []
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta
      if (delta === undefined) continue
      if (typeof delta.content === "string") text += delta.content
      for (const call of delta.tool_calls ?? []) {
        if (call.function?.name) name = call.function.name
        if (call.function?.arguments) args.push(call.function.arguments)
      }
    }
    check("openai", expected, text, name, args.join(""))
  }

  // The floor of any consumer built on Effect streams: the same SDK stream, each chunk pulled
  // through Stream.fromAsyncIterable and handled in Stream.runForEach, nothing else.
  const effectStream = async (): Promise<void> => {
    const stream = await sdk.chat.completions.create({
      model,
      messages: [{ role: "user", content: prompt }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
      stream: true,
      stream_options: { include_usage: true }
    })
    let text = ""
    let name = ""
    const args: Array<string> = []
    await Effect.runPromise(Stream.runForEach(Stream.fromAsyncIterable(stream, (error) => error), (chunk) =>
      Effect.sync(() => {
        const delta = chunk.choices[0]?.delta
        if (delta === undefined) return
        if (typeof delta.content === "string") text += delta.content
        for (const call of delta.tool_calls ?? []) {
          if (call.function?.name) name = call.function.name
          if (call.function?.arguments) args.push(call.function.arguments)
        }
      })))
    check("openai in an Effect Stream", expected, text, name, args.join(""))
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
  const provider = async (): Promise<void> => {
    const response = await Effect.runPromise(LanguageModel.collect(languageModel.stream(request)))
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
    check("provider", expected, text, name, args)
  }

  const input = Messages.fromUser(prompt)
  const chatStream = async (): Promise<void> => {
    let text = ""
    let last: unknown
    await Effect.runPromise(Stream.runForEach(chat.stream(input), (event) =>
      Effect.sync(() => {
        if (event._tag === "TextDelta") text += event.text
        last = event
      })))
    const paused = last as { _tag: string; messages: Messages.Messages }
    if (paused._tag !== "Paused") throw new Error(`chat.stream ended with ${paused._tag}`)
    const call = Messages.toolCalls(paused.messages)[0]!
    check("chat.stream", expected, text, call.name, call.arguments)
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
  const ai = async (): Promise<void> => {
    const result = streamText({ model: openai.chat(model), prompt, tools, maxRetries: 0 })
    let text = ""
    let name = ""
    let args = ""
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") text += part.text
      else if (part.type === "tool-call") {
        name = part.toolName
        args = JSON.stringify(part.input)
      } else if (part.type === "error") throw part.error
    }
    check("ai", expected, text, name, args)
  }

  return {
    "(a) openai SDK": bare,
    "(a′) openai SDK in an Effect Stream": effectStream,
    "(b) chat-ts provider stream": provider,
    "(c) chat.stream": chatStream,
    "(d) ai streamText": ai
  }
}

export const run = async (config: Config): Promise<Result> => {
  const body = buildBody(config.deltas)
  const server = await startServer(config.deltas, config.intervalUs)
  try {
    const fns = await makeConsumers(server.baseURL, body.expected)
    const tasks = consumers.map((name) => ({ name, fn: fns[name] }))
    const timings = await timeTasks(tasks, config.budget)
    const base = timings[consumers[0]]!.medianUs
    return {
      events: body.events,
      bytes: body.bytes.length,
      intervalUs: config.intervalUs,
      rows: consumers.map((name) => ({
        consumer: name,
        timing: timings[name]!,
        ratio: ratio(timings[name]!.medianUs, base),
        cpuUsPerEvent: Math.round((timings[name]!.medianUs / body.events) * 1000) / 1000
      }))
    }
  } finally {
    server.close()
  }
}
