/**
 * Scenario 12: the AI SDK bridge's overhead per model call. One whole Chat
 * Completions answer served by a loopback HTTP server in another process,
 * asked for by:
 *   (a) `@ai-sdk/openai`'s chat model, its `doGenerate` called directly (the baseline),
 *   (b) the same model through `@chat-ts/ai-sdk-provider`'s `AiSdkLanguageModel.generate`,
 *   (c) chat-ts's native `OpenAiChatCompletions.generate` on the `openai` SDK,
 *   (d) the bare `openai` SDK's `chat.completions.create`.
 * The callers are interleaved, round after round, and each sample is the CPU
 * time of this process for `calls` calls in a row (the server's work is not
 * in it). The target: (b) ≤ 1.1× (a).
 */
import { createOpenAI } from "@ai-sdk/openai"
import { AiSdkLanguageModel } from "@chat-ts/ai-sdk-provider"
import { LanguageModel, Messages } from "@chat-ts/core"
import { OpenAiChatCompletions, OpenAiClient } from "@chat-ts/openai"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import OpenAI from "openai"
import { fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import { cpuNow, gc, ratio, summarise, type Timing } from "../harness.js"
import { answer } from "../json-server.js"

export interface Config {
  /** Rounds run first and not measured. */
  readonly warmupRounds: number
  /** Rounds measured: one sample per caller per round. */
  readonly rounds: number
  /** Calls in one sample. */
  readonly calls: number
}

export const callers = [
  "(a) @ai-sdk/openai doGenerate, direct",
  "(b) AiSdkLanguageModel.generate on the same model",
  "(c) chat-ts OpenAiChatCompletions.generate (native)",
  "(d) openai SDK chat.completions.create (bare)"
] as const

export interface Row {
  readonly caller: (typeof callers)[number]
  /** CPU per call. */
  readonly perCall: Timing
  /** Median CPU per call over (a)'s. */
  readonly ratio: number
}

export interface Result {
  readonly rounds: number
  readonly calls: number
  readonly rows: ReadonlyArray<Row>
}

const startServer = () =>
  new Promise<{ origin: string; close: () => void }>((resolve, reject) => {
    const child = fork(fileURLToPath(new URL("../json-server.ts", import.meta.url)), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}`)))
    child.on("message", (message) => {
      const { origin } = message as { origin?: string }
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

const modelId = "gpt-4o-mini"
const question = "What is the capital of France?"

const expectText = (caller: string, text: string | undefined) => {
  if (text !== answer) throw new Error(`${caller}: got ${JSON.stringify(text)}, expected the server's answer`)
}

/** The callers against `baseURL`: each makes one call and checks its answer. */
export const makeCallers = async (baseURL: string): Promise<Record<(typeof callers)[number], () => Promise<void>>> => {
  const aiSdk = createOpenAI({ apiKey: "bench", baseURL }).chat(modelId)
  const bridge = await Effect.runPromise(AiSdkLanguageModel.make({ model: aiSdk }))
  const native = await Effect.runPromise(
    Effect.map(
      Layer.build(OpenAiChatCompletions.layer({ model: modelId }).pipe(Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("bench"), baseURL })))),
      Context.get(LanguageModel.LanguageModel)
    ).pipe(Effect.scoped)
  )
  const sdk = new OpenAI({ apiKey: "bench", baseURL, maxRetries: 0 })
  const request: LanguageModel.Request = { messages: [Messages.user(question)], tools: [], options: {} }
  const textOf = (parts: ReadonlyArray<Messages.Part>) => parts.flatMap((part) => part._tag === "Text" ? [part.text] : []).join("")
  return {
    [callers[0]]: async () => {
      const result = await aiSdk.doGenerate({ prompt: [{ role: "user", content: [{ type: "text", text: question }] }] })
      expectText(callers[0], result.content.flatMap((part) => part.type === "text" ? [part.text] : []).join(""))
    },
    [callers[1]]: async () => expectText(callers[1], textOf((await Effect.runPromise(bridge.generate(request))).parts)),
    [callers[2]]: async () => expectText(callers[2], textOf((await Effect.runPromise(native.generate(request))).parts)),
    [callers[3]]: async () => {
      const completion = await sdk.chat.completions.create({ model: modelId, messages: [{ role: "user", content: question }] })
      expectText(callers[3], completion.choices[0]?.message.content ?? undefined)
    }
  }
}

export const run = async (config: Config): Promise<Result> => {
  const server = await startServer()
  try {
    const run = await makeCallers(`${server.origin}/v1`)
    const cpu: Record<string, Array<number>> = {}
    const wall: Record<string, Array<number>> = {}
    for (let round = 0; round < config.warmupRounds + config.rounds; round++) {
      for (const caller of callers) {
        gc()
        const wallStart = performance.now()
        const cpuStart = cpuNow()
        for (let i = 0; i < config.calls; i++) await run[caller]()
        const cpuMs = (cpuNow() - cpuStart) / config.calls
        const wallMs = (performance.now() - wallStart) / config.calls
        if (round < config.warmupRounds) continue
        ;(cpu[caller] ??= []).push(cpuMs)
        ;(wall[caller] ??= []).push(wallMs)
      }
    }
    const timings = callers.map((caller) => ({ caller, perCall: summarise(cpu[caller]!, wall[caller]!) }))
    const base = timings[0]!.perCall.medianUs
    return {
      rounds: config.rounds,
      calls: config.calls,
      rows: timings.map((t) => ({ ...t, ratio: ratio(t.perCall.medianUs, base) }))
    }
  } finally {
    server.close()
  }
}
