/**
 * `@ai-sdk/azure` (AI SDK 7, specification v4) through the bridge: its Chat
 * Completions model (`azure.chat(deployment)`) on the URLs it builds for a
 * real resource (`https://<resource>.openai.azure.com/openai/v1/chat/completions?api-version=v1`),
 * sent to the replay server by a custom `fetch`.
 *
 * Fixtures: written from the Azure OpenAI REST reference, chat completions
 * (https://learn.microsoft.com/azure/ai-foundry/openai/reference#chat-completions): OpenAI-shaped
 * bodies with `prompt_filter_results` and per-choice `content_filter_results`, the stream's first
 * chunk holding only the prompt filter results, usage in a last chunk with no choices
 * (`stream_options.include_usage`), and errors `{ error: { code, message } }` with `retry-after`
 * and `retry-after-ms` on a 429 (https://learn.microsoft.com/azure/ai-foundry/openai/quotas-limits).
 */
import { createAzure } from "@ai-sdk/azure"
import { Conformance, ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import * as Chat from "../support/chatCompletions.js"
import { redirect } from "../support/redirect.js"
import { answer, bodyOf, bridge, cities, citiesFormat, streamedPieces, time, weather } from "./shared.js"

export const apiKey = "azure0CONFORMANCE0123456789abcdefSECRET"

const filters = {
  hate: { filtered: false, severity: "safe" },
  self_harm: { filtered: false, severity: "safe" },
  sexual: { filtered: false, severity: "safe" },
  violence: { filtered: false, severity: "safe" }
}
const vendor: Chat.Vendor = {
  model: "gpt-4o-2024-11-20",
  typedCalls: true,
  extra: { system_fingerprint: "fp_ee1d74bde0" },
  choiceExtra: { logprobs: null, content_filter_results: filters }
}
const promptFilters = { prompt_filter_results: [{ prompt_index: 0, content_filter_results: filters }] }
const usage = (prompt: number, completion: number, cached = 0) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
})
const whole = (options: Parameters<typeof Chat.completion>[1]) => ReplayServer.json({ ...Chat.completion(vendor, options), ...promptFilters })

/** Azure's stream: a chunk of prompt filter results, the deltas, then a usage chunk with no choices. */
const streamed = (id: string, deltas: ReadonlyArray<Chat.Delta>, finish: string, wireUsage: Chat.WireUsage) => {
  const first = `data: ${JSON.stringify({ id: "", object: "", created: 0, model: "", choices: [], ...promptFilters })}\n\n`
  const body = Chat.stream(vendor, id, [...deltas, { finish }])
  const usageChunk = `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1764633600, model: vendor.model, choices: [], usage: wireUsage })}\n\n`
  return ReplayServer.sse(first + body.replace("data: [DONE]\n\n", usageChunk + "data: [DONE]\n\n"))
}
export const error = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  ReplayServer.json({ error: { code, message } }, { status, headers })

const fixtures: Conformance.Fixtures = {
  text: {
    reply: whole({ id: "chatcmpl-AzText", content: answer, finish: "stop", usage: usage(1200, 8, 1024) }),
    text: answer,
    usage: { inputTokens: 1200, outputTokens: 8, cachedInputTokens: 1024 }
  },
  streamText: {
    reply: streamed("chatcmpl-AzStream", streamedPieces.map((text) => ({ text })), "stop", usage(21, 8)),
    text: streamedPieces.join(""),
    usage: { inputTokens: 21, outputTokens: 8 }
  },
  toolCall: {
    reply: whole({ id: "chatcmpl-AzCall", content: null, calls: [weather], finish: "tool_calls", usage: usage(80, 14) }),
    calls: [weather],
    usage: { inputTokens: 80, outputTokens: 14 }
  },
  streamToolCall: {
    reply: streamed("chatcmpl-AzStreamCall", [{ call: weather, index: 0, split: 3 }], "tool_calls", usage(80, 14)),
    calls: [weather],
    usage: { inputTokens: 80, outputTokens: 14 }
  },
  parallelToolCalls: {
    reply: whole({ id: "chatcmpl-AzParallel", content: null, calls: [weather, time], finish: "tool_calls", usage: usage(95, 30) }),
    calls: [weather, time]
  },
  streamParallelToolCalls: {
    reply: streamed("chatcmpl-AzStreamParallel", [{ call: weather, index: 0, split: 2 }, { call: time, index: 1, split: 2 }], "tool_calls", usage(95, 30)),
    calls: [weather, time]
  },
  structured: {
    reply: whole({ id: "chatcmpl-AzJson", content: JSON.stringify(cities), finish: "stop", usage: usage(40, 12) }),
    format: citiesFormat,
    value: cities
  },
  rateLimit: {
    reply: error(
      429,
      "429",
      "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 4 seconds.",
      { "retry-after": "4", "retry-after-ms": "4000" }
    ),
    retryAfterMillis: 4000
  },
  serverError: { reply: error(500, "InternalServerError", "The server had an error while processing your request. Sorry about that!"), status: 500 },
  unauthorized: {
    reply: error(401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.")
  }
}

/** `@ai-sdk/azure` 4 (AI SDK 7, v4), Chat Completions. */
export const azure: Conformance.Harness = {
  name: "AiSdkLanguageModel on @ai-sdk/azure (v4, chat)",
  apiKey,
  layer: (server, settings) =>
    bridge(createAzure({ resourceName: "chat-ts-conformance", apiKey, fetch: redirect(server.url) }).chat("gpt-4o-deployment"), settings, [apiKey]),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: false },
  fixtures,
  wire: {
    text: (request) => {
      expect(request.path).toBe("/openai/v1/chat/completions?api-version=v1")
      expect(request.headers["api-key"]).toBe(apiKey)
      expect(bodyOf(request).model).toBe("gpt-4o-deployment")
    },
    stream: (request) => expect(bodyOf(request).stream_options).toEqual({ include_usage: true }),
    toolResults: (request, sent) => {
      const messages = bodyOf(request).messages as ReadonlyArray<{ role: string; tool_call_id?: string; content?: unknown }>
      const tools = messages.filter((message) => message.role === "tool")
      expect(tools.map((message) => message.tool_call_id)).toEqual([sent.completed.id, sent.rejected.id])
      expect(tools[1]!.content).toContain(sent.rejected.reason)
    },
    structured: (request) => expect((bodyOf(request).response_format as { type: string }).type).toBe("json_schema")
  }
}
