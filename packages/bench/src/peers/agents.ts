/**
 * The OpenAI Agents SDK (`@openai/agents` 0.14) with a fake `Model` (version
 * 0.14 ships no scripted model), tracing disabled.
 */
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  RunState,
  setTracingDisabled,
  tool,
  Usage
} from "@openai/agents"
import { z } from "zod"

setTracingDisabled(true)

const usage = () => new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })

const functionCall = (callId: string, name: string, args: string): ModelResponse => ({
  usage: usage(),
  output: [{ type: "function_call", callId, name, arguments: args, status: "completed" }]
})

const message = (text: string): ModelResponse => ({
  usage: usage(),
  output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] }]
})

/** A model answering from a function of the request. */
export const fakeModel = (respond: (request: ModelRequest) => ModelResponse): Model => ({
  getResponse: async (request) => respond(request),
  getStreamedResponse: () => {
    throw new Error("the benchmarks do not stream through the Agents SDK")
  }
})

/** A function running one whole turn of `steps` tool steps and an answer. */
export const loopTurn = (steps: number) => {
  const responses = Array.from({ length: steps }, (_, i) => functionCall(`call_${i + 1}`, "noop", "{}"))
  const answer = message("Done.")
  let index = 0
  const agent = new Agent({
    name: "bench",
    instructions: "Benchmark agent.",
    model: fakeModel(() => (index < steps ? responses[index++]! : answer)),
    tools: [
      tool({
        name: "noop",
        description: "Does nothing.",
        parameters: z.object({}),
        execute: async () => JSON.stringify({ ok: true })
      })
    ]
  })
  return async (): Promise<void> => {
    index = 0
    const result = await run(agent, "Go.", { maxTurns: steps + 1 })
    if (result.finalOutput !== "Done.") throw new Error("@openai/agents: the turn did not complete")
  }
}

/** An agent whose `delete_files` tool needs approval; the model asks for it when the last item is the user's. */
export const approvalAgent = () => {
  const answer = message("Deleted.")
  return new Agent({
    name: "bench",
    instructions: "Benchmark agent.",
    model: fakeModel((request) => {
      const input = request.input
      const last = Array.isArray(input) ? input[input.length - 1] : undefined
      const fromUser = typeof input === "string" || (last !== undefined && "role" in last && last.role === "user")
      return fromUser
        ? functionCall(`call_${Array.isArray(input) ? input.length : 1}`, "delete_files", "{\"paths\":[\"a.log\"]}")
        : answer
    }),
    tools: [
      tool({
        name: "delete_files",
        description: "Delete files.",
        parameters: z.object({ paths: z.array(z.string()) }),
        needsApproval: true,
        execute: async ({ paths }) => JSON.stringify({ deleted: paths.length })
      })
    ]
  })
}

export { type AgentInputItem, run, RunState }
