/**
 * Bodies in the shape of the Chat Completions wire that Mistral
 * (https://docs.mistral.ai/api/#tag/chat/operation/chat_completion_v1_chat_completions_post),
 * Groq (https://console.groq.com/docs/api-reference#chat-create) and Azure OpenAI
 * (https://learn.microsoft.com/azure/ai-foundry/openai/reference#chat-completions) document: one
 * `chat.completion` object, or `chat.completion.chunk` events over SSE ending in `data: [DONE]`.
 * Each vendor's harness adds its own fields (`extra`) where its reference shows them.
 */

/** A call in a fixture. */
export interface Call {
  readonly id: string
  readonly name: string
  readonly arguments: { readonly [key: string]: unknown }
}

/** Usage as the wire reports it. */
export interface WireUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
  readonly [key: string]: unknown
}

/** Settings shared by the bodies of one vendor. */
export interface Vendor {
  readonly model: string
  /** Fields added to every response object and chunk (`system_fingerprint`, `x_groq`…). */
  readonly extra?: { readonly [key: string]: unknown }
  /** Fields added to every choice (`logprobs: null`, `content_filter_results`…). */
  readonly choiceExtra?: { readonly [key: string]: unknown }
  /** Whether a call in a chunk carries `type: "function"` (OpenAI, Azure and Groq do; Mistral does not). */
  readonly typedCalls: boolean
  /** Where the last chunk carries the usage: `usage` (default) or `x_groq.usage` (Groq). */
  readonly streamUsage?: "usage" | "x_groq"
}

const wireCall = (vendor: Vendor, call: Call, index?: number) => ({
  ...(index === undefined ? {} : { index }),
  id: call.id,
  ...(vendor.typedCalls ? { type: "function" } : {}),
  function: { name: call.name, arguments: JSON.stringify(call.arguments) }
})

/** A whole `chat.completion`. */
export const completion = (
  vendor: Vendor,
  options: {
    readonly id: string
    readonly content: string | ReadonlyArray<unknown> | null
    readonly calls?: ReadonlyArray<Call>
    readonly finish: string
    readonly usage: WireUsage
  }
) => ({
  id: options.id,
  object: "chat.completion",
  created: 1764633600,
  model: vendor.model,
  ...vendor.extra,
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: options.content,
      ...(options.calls === undefined ? {} : { tool_calls: options.calls.map((call) => wireCall(vendor, call)) })
    },
    finish_reason: options.finish,
    ...vendor.choiceExtra
  }],
  usage: options.usage
})

/** One delta of a stream. */
export type Delta =
  | { readonly text: string }
  | { readonly call: Call; readonly index: number; readonly split?: number }
  | { readonly finish: string; readonly usage?: WireUsage }

const chunk = (vendor: Vendor, id: string, delta: object, finish: string | null, usage?: WireUsage) => ({
  id,
  object: "chat.completion.chunk",
  created: 1764633600,
  model: vendor.model,
  ...vendor.extra,
  choices: [{ index: 0, delta, finish_reason: finish, ...vendor.choiceExtra }],
  ...(usage === undefined ? {} : vendor.streamUsage === "x_groq" ? { x_groq: { id: `req_${id}`, usage } } : { usage })
})

/** A streamed answer: a first chunk naming the role, one chunk per delta (a call's arguments in `split` pieces), `[DONE]`. */
export const stream = (vendor: Vendor, id: string, deltas: ReadonlyArray<Delta>): string => {
  const events: Array<unknown> = [chunk(vendor, id, { role: "assistant", content: "" }, null)]
  for (const delta of deltas) {
    if ("text" in delta) events.push(chunk(vendor, id, { content: delta.text }, null))
    else if ("call" in delta) {
      const args = JSON.stringify(delta.call.arguments)
      const pieces = delta.split ?? 1
      const size = Math.ceil(args.length / pieces)
      for (let i = 0; i < pieces; i++) {
        const text = args.slice(i * size, (i + 1) * size)
        const head = i === 0
          ? { index: delta.index, id: delta.call.id, ...(vendor.typedCalls ? { type: "function" } : {}), function: { name: delta.call.name, arguments: text } }
          : { index: delta.index, function: { arguments: text } }
        events.push(chunk(vendor, id, { tool_calls: [head] }, null))
      }
    } else events.push(chunk(vendor, id, {}, delta.finish, delta.usage))
  }
  return [...events.map((event) => `data: ${JSON.stringify(event)}\n\n`), "data: [DONE]\n\n"].join("")
}
