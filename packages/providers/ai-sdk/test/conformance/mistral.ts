/**
 * `@ai-sdk/mistral` (AI SDK 7, specification v4; and AI SDK 6's v3 under the
 * alias `@ai-sdk/mistral-v3`) through the bridge, against the replay server.
 *
 * Fixtures: written from Mistral's API reference for `POST /v1/chat/completions`
 * (https://docs.mistral.ai/api/#tag/chat/operation/chat_completion_v1_chat_completions_post):
 * nine-character call ids, no `type` on streamed calls, `finish_reason` and `usage` on the last chunk,
 * Magistral's reasoning as a `thinking` content chunk
 * (https://docs.mistral.ai/capabilities/reasoning/), and error bodies as the reference's
 * `{ object: "error", message, type, param, code }`.
 */
import { createMistral } from "@ai-sdk/mistral"
import { createMistral as createMistralV3 } from "@ai-sdk/mistral-v3"
import { Conformance, ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import * as Chat from "../support/chatCompletions.js"
import { answer, bodyOf, bridge, cities, citiesFormat, streamedPieces } from "./shared.js"

export const apiKey = "mistral-CONFORMANCE-0123456789abcdefSECRET"

const vendor: Chat.Vendor = { model: "mistral-large-latest", typedCalls: false }
const weather = { id: "D681PevKs", name: "get_weather", arguments: { city: "Paris" } }
const time = { id: "Xq2bU8mTk", name: "get_time", arguments: { timezone: "Europe/Paris" } }
const usage = (prompt: number, completion: number) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion })

const error = (status: number, message: string, type: string, headers: Record<string, string> = {}) =>
  ReplayServer.json({ object: "error", message, type, param: null, code: String(status) }, { status, headers })

const fixtures: Conformance.Fixtures = {
  text: {
    reply: ReplayServer.json(Chat.completion(vendor, { id: "cmpl-text", content: answer, finish: "stop", usage: usage(21, 8) })),
    text: answer,
    usage: { inputTokens: 21, outputTokens: 8 }
  },
  streamText: {
    reply: ReplayServer.sse(Chat.stream(vendor, "cmpl-stream", [...streamedPieces.map((text) => ({ text })), { finish: "stop", usage: usage(21, 8) }])),
    text: streamedPieces.join(""),
    usage: { inputTokens: 21, outputTokens: 8 }
  },
  toolCall: {
    reply: ReplayServer.json(Chat.completion(vendor, { id: "cmpl-call", content: "", calls: [weather], finish: "tool_calls", usage: usage(80, 14) })),
    calls: [weather],
    usage: { inputTokens: 80, outputTokens: 14 }
  },
  streamToolCall: {
    reply: ReplayServer.sse(Chat.stream(vendor, "cmpl-stream-call", [{ call: weather, index: 0 }, { finish: "tool_calls", usage: usage(80, 14) }])),
    calls: [weather],
    usage: { inputTokens: 80, outputTokens: 14 }
  },
  parallelToolCalls: {
    reply: ReplayServer.json(Chat.completion(vendor, { id: "cmpl-parallel", content: "", calls: [weather, time], finish: "tool_calls", usage: usage(95, 30) })),
    calls: [weather, time]
  },
  streamParallelToolCalls: {
    reply: ReplayServer.sse(Chat.stream(vendor, "cmpl-stream-parallel", [
      { call: weather, index: 0 },
      { call: time, index: 1 },
      { finish: "tool_calls", usage: usage(95, 30) }
    ])),
    calls: [weather, time]
  },
  structured: {
    reply: ReplayServer.json(Chat.completion(vendor, { id: "cmpl-json", content: JSON.stringify(cities), finish: "stop", usage: usage(40, 12) })),
    format: citiesFormat,
    value: cities
  },
  reasoning: {
    reply: ReplayServer.json({
      ...Chat.completion({ ...vendor, model: "magistral-medium-latest" }, {
        id: "cmpl-think",
        content: [{ type: "thinking", thinking: [{ type: "text", text: "The user wants the weather in Paris; I should call get_weather." }] }],
        calls: [weather],
        finish: "tool_calls",
        usage: usage(90, 40)
      })
    }),
    streamed: false,
    call: weather,
    then: ReplayServer.json(Chat.completion(vendor, { id: "cmpl-after", content: "It is sunny in Paris.", finish: "stop", usage: usage(120, 7) }))
  },
  rateLimit: { reply: error(429, "Requests rate limit exceeded", "rate_limited", { "retry-after": "2" }), retryAfterMillis: 2000 },
  serverError: { reply: error(503, "Service unavailable", "internal_server_error"), status: 503 },
  unauthorized: { reply: error(401, `Unauthorized: invalid key ${apiKey}`, "invalid_request_error") }
}

const wire: Conformance.WireChecks = {
  text: (request) => {
    expect(request.path).toBe("/v1/chat/completions")
    expect(request.headers.authorization).toBe(`Bearer ${apiKey}`)
    const body = bodyOf(request)
    expect(body.model).toBe("mistral-large-latest")
    expect((body.messages as ReadonlyArray<{ role: string }>)[0]?.role).toBe("system")
  },
  stream: (request) => expect(bodyOf(request).stream).toBe(true),
  toolResults: (request, sent) => {
    const messages = bodyOf(request).messages as ReadonlyArray<{ role: string; tool_call_id?: string; content?: unknown }>
    const tools = messages.filter((message) => message.role === "tool")
    expect(tools.map((message) => message.tool_call_id)).toEqual([sent.completed.id, sent.rejected.id])
    expect(JSON.parse(tools[0]!.content as string)).toEqual(sent.completed.result!.value)
    expect(tools[1]!.content).toContain(sent.rejected.reason)
  },
  structured: (request) => {
    const format = bodyOf(request).response_format as { type: string; json_schema: { name: string } }
    expect(format.type).toBe("json_schema")
    expect(format.json_schema.name).toBe("cities")
  },
  reasoning: (request, part) => {
    const messages = bodyOf(request).messages as ReadonlyArray<{ role: string; content: unknown }>
    const assistant = messages.find((message) => message.role === "assistant")!
    expect(assistant.content).toContainEqual({ type: "thinking", thinking: [{ type: "text", text: part.text }], closed: true })
  }
}

/** `@ai-sdk/mistral` 4 (AI SDK 7, v4). */
export const mistral: Conformance.Harness = {
  name: "AiSdkLanguageModel on @ai-sdk/mistral (v4)",
  basePath: "/v1",
  apiKey,
  layer: (server, settings) => bridge(createMistral({ apiKey, baseURL: server.baseURL })("mistral-large-latest"), settings, [apiKey]),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: true },
  fixtures,
  wire
}

/** `@ai-sdk/mistral` 3 (AI SDK 6, v3): the same wire, through the v3 adapter. */
export const mistralV3: Conformance.Harness = {
  ...mistral,
  name: "AiSdkLanguageModel on @ai-sdk/mistral@3 (v3, AI SDK 6)",
  layer: (server, settings) => bridge(createMistralV3({ apiKey, baseURL: server.baseURL })("mistral-large-latest"), settings, [apiKey])
}
