/**
 * Scenario 5: many conversations. N turns start at once on a scripted model;
 * each asks for a tool that needs approval and pauses. The paused states are
 * kept in memory (what an application would hold or store to resume: chat-ts's
 * messages, the Agents SDK's `RunState`, the AI SDK's messages), then every
 * call is approved and all N turns resume at once to completion.
 *
 * One library per process (the parent runs this scenario once per library),
 * so peak RSS is the library's own.
 */
import { Messages, PauseReason } from "@chat-ts/core"
import type { ModelMessage } from "ai"
import type { MockLanguageModelV3 } from "ai/test"
import * as Effect from "effect/Effect"
import * as EffectResult from "effect/Result"
import { gc, retainedHeap } from "../harness.js"
import * as chatts from "../peers/chatts.js"

export const libraries = ["chat-ts", "@openai/agents", "ai"] as const
export type Library = (typeof libraries)[number]

export interface Config {
  readonly conversations: number
  readonly library: Library
}

export interface Result {
  readonly library: Library
  readonly conversations: number
  /** Wall-clock milliseconds to start every turn and have all of them paused. */
  readonly pauseMs: number
  /** Wall-clock milliseconds to approve every call and run all turns to completion. */
  readonly resumeMs: number
  readonly totalMs: number
  /** CPU milliseconds (user + system) of the two phases. */
  readonly cpuMs: number
  /** Heap retained per paused conversation (after a full GC), in bytes. */
  readonly heapPerPausedBytes: number
  /** RSS of the process before the turns start and at its peak, in MB. */
  readonly baselineRssMB: number
  readonly peakRssMB: number
}

/** A paused conversation as the library needs it to resume, and how to resume it. */
interface Driver<S> {
  readonly start: (i: number) => Promise<S>
  readonly resume: (state: S) => Promise<void>
  /** Forget anything the harness itself recorded (mock call logs) before measuring the heap. */
  readonly forget: () => void
}

const prompt = (i: number) => `Delete the old logs of service ${i}.`

const chatTsDriver = async (): Promise<Driver<{ messages: Messages.Messages; id: string }>> => {
  const chat = await chatts.approvalChat()
  return {
    start: async (i) => {
      const paused = await Effect.runPromise(chat.complete(Messages.fromUser(prompt(i))))
      if (paused.outcome._tag !== "Paused") throw new Error("chat-ts: the turn did not pause")
      return { messages: paused.messages, id: PauseReason.toolIds(paused.outcome.reason)[0]! }
    },
    resume: async (state) => {
      const approved = EffectResult.getOrThrow(Messages.approve(state.messages, state.id))
      const done = await Effect.runPromise(chat.resume(approved))
      if (done.outcome._tag !== "Complete") throw new Error("chat-ts: the turn did not complete")
    },
    forget: () => {}
  }
}

// The peers are imported only by the process that measures them, so they do not weigh on the others' RSS.
const agentsDriver = async () => {
  const agents = await import("../peers/agents.js")
  const agent = agents.approvalAgent()
  type State = Awaited<ReturnType<typeof agents.run<typeof agent>>>["state"]
  const driver: Driver<State> = {
    start: async (i) => {
      const paused = await agents.run(agent, prompt(i))
      if (paused.interruptions.length !== 1) throw new Error("@openai/agents: the run did not pause")
      return paused.state
    },
    resume: async (state) => {
      state.approve(state.getInterruptions()[0]!)
      const done = await agents.run(agent, state)
      if (done.finalOutput !== "Deleted.") throw new Error("@openai/agents: the run did not complete")
    },
    forget: () => {}
  }
  return driver
}

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>

const aiDriver = async (): Promise<Driver<{ messages: Array<ModelMessage>; approvalId: string }>> => {
  const { generateText, stepCountIs, tool } = await import("ai")
  const { MockLanguageModelV3 } = await import("ai/test")
  const { z } = await import("zod")
  ;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined }
  }
  const answer: GenerateResult = {
    content: [{ type: "text", text: "Deleted." }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: []
  }
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      const last = options.prompt[options.prompt.length - 1]
      return last?.role === "user"
        ? {
          content: [{
            type: "tool-call",
            toolCallId: `call_${options.prompt.length}`,
            toolName: "delete_files",
            input: "{\"paths\":[\"a.log\"]}"
          }],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: []
        }
        : answer
    }
  })
  const tools = {
    delete_files: tool({
      description: "Delete files.",
      inputSchema: z.object({ paths: z.array(z.string()) }),
      needsApproval: true,
      execute: async ({ paths }) => ({ deleted: paths.length })
    })
  }
  return {
    start: async (i) => {
      const input: Array<ModelMessage> = [{ role: "user", content: prompt(i) }]
      const paused = await generateText({ model, tools, messages: input, stopWhen: stepCountIs(5) })
      const request = paused.content.find((part) => part.type === "tool-approval-request")
      if (request === undefined) throw new Error("ai: the turn did not pause")
      return { messages: [...input, ...paused.response.messages], approvalId: request.approvalId }
    },
    resume: async (state) => {
      const done = await generateText({
        model,
        tools,
        messages: [...state.messages, {
          role: "tool",
          content: [{ type: "tool-approval-response", approvalId: state.approvalId, approved: true }]
        }],
        stopWhen: stepCountIs(5)
      })
      if (done.text !== "Deleted.") throw new Error("ai: the turn did not complete")
    },
    forget: () => {
      model.doGenerateCalls.length = 0
    }
  }
}

const driverFor = async (library: Library): Promise<Driver<unknown>> => {
  switch (library) {
    case "chat-ts":
      return (await chatTsDriver()) as Driver<unknown>
    case "@openai/agents":
      return (await agentsDriver()) as Driver<unknown>
    case "ai":
      return (await aiDriver()) as Driver<unknown>
  }
}

const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10

const cpuMs = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

export const run = async (config: Config): Promise<Result> => {
  const driver = await driverFor(config.library)
  const n = config.conversations
  // Warm up the code paths on a few conversations, then measure from a clean heap.
  for (let i = 0; i < 20; i++) await driver.resume(await driver.start(i))
  driver.forget()
  const baseHeap = retainedHeap()
  const baselineRss = process.memoryUsage().rss

  const cpu0 = cpuMs()
  const t0 = performance.now()
  const paused = await Promise.all(Array.from({ length: n }, (_, i) => driver.start(i)))
  const t1 = performance.now()
  const cpu1 = cpuMs()

  driver.forget()
  const pausedHeap = retainedHeap()

  const cpu2 = cpuMs()
  const t2 = performance.now()
  await Promise.all(paused.map((state) => driver.resume(state)))
  const t3 = performance.now()
  const cpu3 = cpuMs()
  driver.forget()
  gc()

  const pauseMs = Math.round(t1 - t0)
  const resumeMs = Math.round(t3 - t2)
  return {
    library: config.library,
    conversations: n,
    pauseMs,
    resumeMs,
    totalMs: pauseMs + resumeMs,
    cpuMs: Math.round(cpu1 - cpu0 + cpu3 - cpu2),
    heapPerPausedBytes: Math.round((pausedHeap - baseHeap) / n),
    baselineRssMB: mb(baselineRss),
    peakRssMB: mb(process.resourceUsage().maxRSS * 1024)
  }
}
