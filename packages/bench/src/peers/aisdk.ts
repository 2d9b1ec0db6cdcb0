/**
 * The Vercel AI SDK (`ai` 7) with its own test model (`MockLanguageModelV4`
 * from `ai/test`), looping with `generateText` and `stopWhen: isStepCount`.
 */
import { generateText, isStepCount, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { z } from "zod"

// The mock reports no warnings, but keep the SDK's console quiet regardless.
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

const toolResult = (id: string): GenerateResult => ({
  content: [{ type: "tool-call", toolCallId: id, toolName: "noop", input: "{}" }],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage,
  warnings: []
})

const textResult: GenerateResult = {
  content: [{ type: "text", text: "Done." }],
  finishReason: { unified: "stop", raw: "stop" },
  usage,
  warnings: []
}

/** A function running one whole `generateText` turn of `steps` tool steps and an answer. */
export const loopTurn = (steps: number) => {
  const responses = Array.from({ length: steps }, (_, i) => toolResult(`call_${i + 1}`))
  let index = 0
  const model = new MockLanguageModelV4({
    doGenerate: async () => (index < steps ? responses[index++]! : textResult)
  })
  const tools = {
    noop: tool({
      description: "Does nothing.",
      inputSchema: z.object({}),
      execute: async () => ({ ok: true })
    })
  }
  return async (): Promise<void> => {
    index = 0
    // The mock records every call; do not let that grow across iterations.
    model.doGenerateCalls.length = 0
    const result = await generateText({ model, tools, prompt: "Go.", stopWhen: isStepCount(steps + 1) })
    if (result.text !== "Done.") throw new Error("ai: the turn did not complete")
  }
}
