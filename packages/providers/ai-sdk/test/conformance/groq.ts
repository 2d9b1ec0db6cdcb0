/**
 * `@ai-sdk/groq` (AI SDK 7, specification v4) through the bridge, against the
 * replay server.
 *
 * Fixtures: written from Groq's API reference for `POST /openai/v1/chat/completions`
 * (https://console.groq.com/docs/api-reference#chat-create): OpenAI-shaped bodies with
 * `logprobs: null` on each choice, `system_fingerprint`, the stream's usage in `x_groq.usage` of its
 * last chunk (https://console.groq.com/docs/api-reference#chat-create, "stream"), reasoning as the
 * message's `reasoning` field with `reasoning_format: "parsed"` (https://console.groq.com/docs/reasoning),
 * and error bodies `{ error: { message, type, code } }` (https://console.groq.com/docs/errors).
 */
import { createGroq } from "@ai-sdk/groq"
import { Conformance, ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import * as Chat from "../support/chatCompletions.js"
import { answer, bodyOf, bridge, cities, citiesFormat, streamedPieces, time, weather } from "./shared.js"

export const apiKey = "gsk_CONFORMANCE0123456789abcdefghijklmnopSECRET"

const vendor: Chat.Vendor = {
  model: "llama-3.3-70b-versatile",
  typedCalls: true,
  streamUsage: "x_groq",
  extra: { system_fingerprint: "fp_c5d2e7a1b3" },
  choiceExtra: { logprobs: null }
}
const usage = (prompt: number, completion: number, extra: object = {}) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  queue_time: 0.01,
  prompt_time: 0.002,
  completion_time: 0.03,
  total_time: 0.032,
  ...extra
})
const error = (status: number, message: string, type: string, code: string, headers: Record<string, string> = {}) =>
  ReplayServer.json({ error: { message, type, code } }, { status, headers })

const fixtures: Conformance.Fixtures = {
  text: {
    reply: ReplayServer.json(Chat.completion(vendor, {
      id: "chatcmpl-text",
      content: answer,
      finish: "stop",
      usage: usage(40, 8, { prompt_tokens_details: { cached_tokens: 32 } })
    })),
    text: answer,
    usage: { inputTokens: 40, outputTokens: 8, cachedInputTokens: 32 }
  },
  streamText: {
    reply: ReplayServer.sse(Chat.stream(vendor, "chatcmpl-stream", [...streamedPieces.map((text) => ({ text })), { finish: "stop", usage: usage(40, 8) }])),
    text: streamedPieces.join(""),
    usage: { inputTokens: 40, outputTokens: 8 }
  },
  toolCall: {
    reply: ReplayServer.json(Chat.completion(vendor, { id: "chatcmpl-call", content: null, calls: [weather], finish: "tool_calls", usage: usage(220, 18) })),
    calls: [weather],
    usage: { inputTokens: 220, outputTokens: 18 }
  },
  streamToolCall: {
    reply: ReplayServer.sse(Chat.stream(vendor, "chatcmpl-stream-call", [{ call: weather, index: 0 }, { finish: "tool_calls", usage: usage(220, 18) }])),
    calls: [weather],
    usage: { inputTokens: 220, outputTokens: 18 }
  },
  parallelToolCalls: {
    reply: ReplayServer.json(Chat.completion(vendor, { id: "chatcmpl-parallel", content: null, calls: [weather, time], finish: "tool_calls", usage: usage(240, 36) })),
    calls: [weather, time]
  },
  streamParallelToolCalls: {
    reply: ReplayServer.sse(Chat.stream(vendor, "chatcmpl-stream-parallel", [
      { call: weather, index: 0 },
      { call: time, index: 1 },
      { finish: "tool_calls", usage: usage(240, 36) }
    ])),
    calls: [weather, time]
  },
  structured: {
    reply: ReplayServer.json(Chat.completion(vendor, { id: "chatcmpl-json", content: JSON.stringify(cities), finish: "stop", usage: usage(60, 12) })),
    format: citiesFormat,
    value: cities
  },
  reasoning: {
    reply: ReplayServer.json((() => {
      const body = Chat.completion({ ...vendor, model: "openai/gpt-oss-120b" }, {
        id: "chatcmpl-think",
        content: null,
        calls: [weather],
        finish: "tool_calls",
        usage: usage(150, 60, { completion_tokens_details: { reasoning_tokens: 42 } })
      })
      const choice = body.choices[0]!
      return { ...body, choices: [{ ...choice, message: { ...choice.message, reasoning: "The user asks for the weather in Paris; call get_weather." } }] }
    })()),
    streamed: false,
    call: weather,
    then: ReplayServer.json(Chat.completion(vendor, { id: "chatcmpl-after", content: "It is sunny in Paris.", finish: "stop", usage: usage(200, 7) }))
  },
  rateLimit: {
    reply: error(429, "Rate limit reached for model `llama-3.3-70b-versatile` on tokens per minute (TPM). Please try again in 1.5s.", "tokens", "rate_limit_exceeded", { "retry-after": "1.5" }),
    retryAfterMillis: 1500
  },
  serverError: { reply: error(503, "Service Unavailable", "internal_server_error", "service_unavailable"), status: 503 },
  unauthorized: { reply: error(401, `Invalid API Key: ${apiKey}`, "invalid_request_error", "invalid_api_key") }
}

/** `@ai-sdk/groq` 4 (AI SDK 7, v4). */
export const groq: Conformance.Harness = {
  name: "AiSdkLanguageModel on @ai-sdk/groq (v4)",
  basePath: "/openai/v1",
  apiKey,
  layer: (server, settings) => bridge(createGroq({ apiKey, baseURL: server.baseURL })("llama-3.3-70b-versatile"), settings, [apiKey]),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: true },
  fixtures,
  wire: {
    text: (request) => {
      expect(request.path).toBe("/openai/v1/chat/completions")
      expect(request.headers.authorization).toBe(`Bearer ${apiKey}`)
    },
    stream: (request) => expect(bodyOf(request).stream).toBe(true),
    toolResults: (request, sent) => {
      const messages = bodyOf(request).messages as ReadonlyArray<{ role: string; tool_call_id?: string; content?: unknown }>
      const tools = messages.filter((message) => message.role === "tool")
      expect(tools.map((message) => message.tool_call_id)).toEqual([sent.completed.id, sent.rejected.id])
      expect(tools[1]!.content).toContain(sent.rejected.reason)
    },
    structured: (request) => expect((bodyOf(request).response_format as { type: string }).type).toBe("json_schema"),
    reasoning: (request, part) => {
      const messages = bodyOf(request).messages as ReadonlyArray<{ role: string; reasoning?: string }>
      expect(messages.find((message) => message.role === "assistant")?.reasoning).toBe(part.text)
    }
  }
}
