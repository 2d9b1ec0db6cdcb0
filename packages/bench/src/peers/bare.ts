/**
 * The floor: a tool loop written by hand on the `openai` SDK's own types, with
 * a fake `chat.completions.create` (no HTTP). It does what any loop must: call
 * the model, keep its message, parse and run each tool call, append the
 * results, repeat until the model answers.
 */
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool
} from "openai/resources/chat/completions"

type Create = (params: ChatCompletionCreateParamsNonStreaming) => Promise<ChatCompletion>

const completion = (message: ChatCompletion.Choice["message"], finish: ChatCompletion.Choice["finish_reason"]): ChatCompletion => ({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 0,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
})

const tools: Array<ChatCompletionTool> = [{
  type: "function",
  function: { name: "noop", description: "Does nothing.", parameters: { type: "object", properties: {} } }
}]

const handlers: Record<string, (args: unknown) => Promise<unknown>> = {
  noop: async () => ({ ok: true })
}

/** A hand-written loop over `create`; returns the final text. */
export const loop = async (create: Create, input: string, maxSteps: number): Promise<string> => {
  const messages: Array<ChatCompletionMessageParam> = [{ role: "user", content: input }]
  for (let step = 0; step < maxSteps; step++) {
    const response = await create({ model: "gpt-4o-mini", messages, tools })
    const message = response.choices[0]!.message
    messages.push(message)
    const calls = message.tool_calls ?? []
    if (calls.length === 0) return message.content ?? ""
    const results = await Promise.all(calls.map(async (call) => {
      if (call.type !== "function") return "unsupported tool type"
      const handler = handlers[call.function.name]
      if (handler === undefined) return `unknown tool ${call.function.name}`
      let args: unknown
      try {
        args = JSON.parse(call.function.arguments)
      } catch {
        return "invalid JSON arguments"
      }
      return JSON.stringify(await handler(args))
    }))
    calls.forEach((call, i) => messages.push({ role: "tool", tool_call_id: call.id, content: results[i]! }))
  }
  throw new Error("step limit")
}

/** A function running one whole turn of `steps` tool steps and an answer. */
export const loopTurn = (steps: number) => {
  const responses = Array.from({ length: steps }, (_, i) =>
    completion({
      role: "assistant",
      content: null,
      refusal: null,
      tool_calls: [{ id: `call_${i + 1}`, type: "function", function: { name: "noop", arguments: "{}" } }]
    }, "tool_calls"))
  const answer = completion({ role: "assistant", content: "Done.", refusal: null }, "stop")
  let index = 0
  const create: Create = async () => (index < steps ? responses[index++]! : answer)
  return async (): Promise<void> => {
    index = 0
    const text = await loop(create, "Go.", steps + 1)
    if (text !== "Done.") throw new Error("bare openai: the turn did not complete")
  }
}
