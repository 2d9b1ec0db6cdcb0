/**
 * The conformance harnesses of the two OpenAI wires (`@chat-ts/core/testing`'s
 * `Conformance` suite): how to build each layer against the replay server,
 * the recorded fixtures each scenario serves (see fixtures/README.md), and
 * checks of each API's own request format.
 *
 * A model for a harness of another provider: copy this file, swap the layer,
 * the fixtures and the wire checks.
 */
import type { LanguageModel } from "@chat-ts/core"
import { Conformance, ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as OpenAiChatCompletions from "../../src/OpenAiChatCompletions.js"
import * as OpenAiClient from "../../src/OpenAiClient.js"
import * as OpenAiCompatible from "../../src/OpenAiCompatible.js"
import * as OpenAiResponses from "../../src/OpenAiResponses.js"
import { fixture } from "../support/ReplayServer.js"

/** The key the layers send; the suite checks that no error shows it. */
export const apiKey = "sk-proj-CONFORMANCE0123456789abcdefghijklmnopqrstuvwxyzSECRET"

const client = (server: ReplayServer.ReplayServer) =>
  OpenAiClient.layer({ apiKey: Redacted.make(apiKey), baseURL: server.baseURL })

const json = (name: string) => ReplayServer.json(fixture(name))
const sse = (name: string) => ReplayServer.sse(fixture(name))

// Error bodies in the shape of the recorded errors/*.json (synthetic: no recording has these codes).
const rateLimit = {
  reply: ReplayServer.json({
    error: { message: "Rate limit reached for requests per min. Please try again in 3s.", type: "requests", param: null, code: "rate_limit_exceeded" }
  }, { status: 429, headers: { "retry-after": "3" } }),
  retryAfterMillis: 3000
}
const serverError = {
  reply: ReplayServer.json({
    error: { message: "The server had an error while processing your request.", type: "server_error", param: null, code: null }
  }, { status: 500 }),
  status: 500
}
// The API echoes the key it was given in its 401 message.
const unauthorized = {
  reply: ReplayServer.json({
    error: { message: `Incorrect API key provided: ${apiKey}.`, type: "invalid_request_error", param: null, code: "invalid_api_key" }
  }, { status: 401 })
}

/** The response format of the structured fixtures: an array of cities, wrapped in `value` as strict mode needs. */
const citiesFormat: LanguageModel.ResponseFormat = {
  type: "json",
  name: "cities",
  schema: {
    type: "object",
    properties: { value: { type: "array", items: { type: "string" } } },
    required: ["value"],
    additionalProperties: false
  },
  strict: true
}
const cities = { value: ["Paris", "Lyon", "Marseille"] }

type Body = { readonly [key: string]: unknown }
const bodyOf = (request: ReplayServer.Recorded): Body => request.body as Body

/** OpenAI Chat Completions (`POST /chat/completions`). */
export const chatCompletions: Conformance.Harness = {
  name: "OpenAiChatCompletions",
  basePath: "/v1",
  apiKey,
  layer: (server, settings) =>
    OpenAiChatCompletions.layer({
      model: "gpt-4o-2024-08-06",
      idleTimeout: settings.idleTimeout,
      ...(settings.retry ? {} : { retry: false })
    }).pipe(Layer.provide(client(server))),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: false },
  fixtures: {
    text: {
      reply: json("chat-completions/text.json"),
      text: JSON.parse(fixture("chat-completions/text.json")).choices[0].message.content,
      usage: { inputTokens: 16, outputTokens: 363 }
    },
    streamText: {
      reply: sse("chat-completions/stream-text.sse"),
      text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
      usage: { inputTokens: 14, outputTokens: 30 }
    },
    toolCall: {
      reply: json("constructed/chat-tool-call-optional-null.json"),
      calls: [{ id: "call_search_1", name: "search", arguments: { query: "cats", limit: null } }],
      usage: { inputTokens: 80, outputTokens: 18 }
    },
    streamToolCall: {
      reply: sse("chat-completions/stream-tool-call.sse"),
      calls: [{ id: "call_CTf1nWJLqSeRgDqaCG27xZ74", name: "get_weather", arguments: { city: "San Francisco", state: "CA" } }],
      usage: { inputTokens: 48, outputTokens: 19 }
    },
    parallelToolCalls: {
      reply: json("chat-completions/tool-calls-parallel.json"),
      calls: [
        { id: "call_fdNz3vOBKYgOIpMdWotB9MjY", name: "GetWeatherArgs", arguments: { city: "Edinburgh", country: "GB", units: "c" } },
        { id: "call_h1DWI1POMJLb0KwIyQHWXD4p", name: "get_stock_price", arguments: { ticker: "AAPL", exchange: "NASDAQ" } }
      ],
      usage: { inputTokens: 149, outputTokens: 60 }
    },
    streamParallelToolCalls: {
      reply: sse("chat-completions/stream-tool-calls-parallel.sse"),
      calls: [
        { id: "call_JMW1whyEaYG438VE1OIflxA2", name: "GetWeatherArgs", arguments: { city: "Edinburgh", country: "GB", units: "c" } },
        { id: "call_DNYTawLBoN8fj3KN6qU9N1Ou", name: "get_stock_price", arguments: { ticker: "AAPL", exchange: "NASDAQ" } }
      ],
      usage: { inputTokens: 149, outputTokens: 60 }
    },
    structured: { reply: json("constructed/chat-structured-wrapped.json"), format: citiesFormat, value: cities },
    rateLimit,
    serverError,
    unauthorized
  },
  wire: {
    text: (request, sent) => {
      expect(request.method).toBe("POST")
      expect(request.path).toBe("/v1/chat/completions")
      expect(request.headers["authorization"]).toBe(`Bearer ${apiKey}`)
      const body = bodyOf(request)
      expect(body["model"]).toBe("gpt-4o-2024-08-06")
      expect(body["messages"]).toEqual(sent.messages.map((message) => ({ role: message.role, content: message.parts.map((part) => part._tag === "Text" ? part.text : "").join("") })))
    },
    stream: (request) => {
      expect(bodyOf(request)).toMatchObject({ stream: true, stream_options: { include_usage: true } })
    },
    toolResults: (request, { completed, rejected }) => {
      const messages = bodyOf(request)["messages"] as ReadonlyArray<Body>
      const assistant = messages.find((message) => message["role"] === "assistant" && message["tool_calls"] !== undefined)!
      expect(assistant["tool_calls"]).toEqual(expect.arrayContaining([
        { id: completed.id, type: "function", function: { name: completed.name, arguments: completed.arguments } },
        { id: rejected.id, type: "function", function: { name: rejected.name, arguments: rejected.arguments } }
      ]))
      expect(messages.filter((message) => message["role"] === "tool")).toEqual([
        { role: "tool", tool_call_id: completed.id, content: completed.result!.text },
        { role: "tool", tool_call_id: rejected.id, content: rejected.result!.text }
      ])
      expect(rejected.result!.text).toContain(rejected.reason)
    },
    // Three calls that did not run: three tool messages, one per call.
    unrunCalls: (request) => {
      const messages = bodyOf(request)["messages"] as ReadonlyArray<Body>
      expect(messages.filter((message) => message["role"] === "tool").map((message) => message["tool_call_id"])).toEqual([
        "call_rejected",
        "call_expired",
        "call_cancelled"
      ])
    },
    structured: (request, format) => {
      expect(bodyOf(request)["response_format"]).toEqual({
        type: "json_schema",
        json_schema: { name: format.name, schema: format.schema, strict: true }
      })
    }
  }
}

/** OpenAI Responses (`POST /responses`), stateless (the default: `store: false`, the whole history each time). */
export const responses: Conformance.Harness = {
  name: "OpenAiResponses",
  basePath: "/v1",
  apiKey,
  layer: (server, settings) =>
    OpenAiResponses.layer({
      model: "gpt-5-mini",
      idleTimeout: settings.idleTimeout,
      ...(settings.retry ? {} : { retry: false })
    }).pipe(Layer.provide(client(server))),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: true },
  fixtures: {
    text: {
      reply: json("responses/text.json"),
      text: JSON.parse(fixture("responses/text.json")).output[0].content[0].text,
      usage: { inputTokens: 14, outputTokens: 50 }
    },
    streamText: {
      reply: sse("responses/stream-text.sse"),
      text: "The capital of France is Paris.",
      usage: { inputTokens: 278, outputTokens: 9 }
    },
    toolCall: {
      reply: json("responses/function-call.json"),
      calls: [{ id: "call_YfwRsW8sUxDKipwyhWTzOXCA", name: "get_capital", arguments: { country: "PotatoLand" } }],
      usage: { inputTokens: 40, outputTokens: 18 }
    },
    streamToolCall: {
      reply: sse("responses/stream-function-call.sse"),
      calls: [{ id: "call_kL0PCQV7M2WMoVX8V8OtYSAL", name: "get_capital", arguments: { country: "France" } }],
      usage: { inputTokens: 255, outputTokens: 16 }
    },
    parallelToolCalls: {
      reply: json("responses/function-calls-parallel.json"),
      calls: [
        { id: "call_LWVp74L5HaH2KNvgVz9PJsrj", name: "get_location", arguments: { loc_name: "Londos" } },
        { id: "call_YnRAWeTyxI91m5uNa5bxXwVO", name: "get_location", arguments: { loc_name: "London" } }
      ]
    },
    streamParallelToolCalls: {
      reply: sse("constructed/responses-stream-function-calls-parallel.sse"),
      calls: [
        { id: "call_LWVp74L5HaH2KNvgVz9PJsrj", name: "get_location", arguments: { loc_name: "Londos" } },
        { id: "call_YnRAWeTyxI91m5uNa5bxXwVO", name: "get_location", arguments: { loc_name: "London" } }
      ]
    },
    structured: { reply: json("constructed/responses-structured-wrapped.json"), format: citiesFormat, value: cities },
    reasoning: {
      reply: sse("responses/stream-function-call-reasoning.sse"),
      streamed: true,
      call: { id: "call_CWXgs68YprAjp6t0371hiPOI", name: "final_result", arguments: { result: 6666 } },
      then: json("responses/text.json")
    },
    rateLimit,
    serverError,
    unauthorized
  },
  wire: {
    text: (request) => {
      expect(request.path).toBe("/v1/responses")
      expect(request.headers["authorization"]).toBe(`Bearer ${apiKey}`)
      const body = bodyOf(request)
      expect(body).toMatchObject({ model: "gpt-5-mini", store: false, instructions: "You are a conformance test. Answer briefly." })
      expect(body["input"]).toEqual([{ role: "user", content: "What is the capital of France? (conformance question)" }])
    },
    stream: (request) => {
      expect(bodyOf(request)["stream"]).toBe(true)
    },
    toolResults: (request, { completed, rejected }) => {
      const input = bodyOf(request)["input"] as ReadonlyArray<Body>
      expect(input).toEqual(expect.arrayContaining([
        { type: "function_call", call_id: completed.id, name: completed.name, arguments: completed.arguments },
        { type: "function_call", call_id: rejected.id, name: rejected.name, arguments: rejected.arguments },
        { type: "function_call_output", call_id: completed.id, output: completed.result!.text },
        { type: "function_call_output", call_id: rejected.id, output: rejected.result!.text }
      ]))
      expect(bodyOf(request)["previous_response_id"]).toBeUndefined()
    },
    // Three calls that did not run: three function_call_output items, one per call.
    unrunCalls: (request) => {
      const input = bodyOf(request)["input"] as ReadonlyArray<Body>
      expect(input.filter((item) => item["type"] === "function_call_output").map((item) => item["call_id"])).toEqual([
        "call_rejected",
        "call_expired",
        "call_cancelled"
      ])
    },
    structured: (request, format) => {
      expect((bodyOf(request)["text"] as Body)["format"]).toEqual({ type: "json_schema", name: format.name, schema: format.schema, strict: true })
    },
    reasoning: (request, part) => {
      const input = bodyOf(request)["input"] as ReadonlyArray<Body>
      expect(input).toContainEqual(expect.objectContaining({ type: "reasoning", encrypted_content: part.signature }))
    }
  }
}

/**
 * An OpenAI-compatible preset on Chat Completions: DeepSeek (its base URL has
 * no `/v1`), whose thinking mode's `reasoning_content` must go back within the
 * tool loop. The same wire as `chatCompletions`, so the same fixtures, plus
 * the DeepSeek answer of `constructed/deepseek-thinking-tool-call.json`.
 */
export const deepSeek: Conformance.Harness = {
  ...chatCompletions,
  name: "OpenAiCompatible (deepseek preset)",
  basePath: "",
  layer: (server, settings) =>
    OpenAiChatCompletions.layer({
      model: "deepseek-reasoner",
      maxTokensParameter: "max_tokens",
      idleTimeout: settings.idleTimeout,
      ...(settings.retry ? {} : { retry: false })
    }).pipe(Layer.provide(OpenAiCompatible.layer("deepseek", { apiKey: Redacted.make(apiKey), baseURL: server.baseURL }))),
  capabilities: { ...chatCompletions.capabilities, reasoningRoundTrip: true },
  fixtures: {
    ...chatCompletions.fixtures,
    reasoning: {
      reply: json("constructed/deepseek-thinking-tool-call.json"),
      streamed: false,
      call: { id: "call_00_kZ8qVnJm4Rw2T", name: "get_weather", arguments: { city: "Hangzhou" } },
      then: json("chat-completions/text.json")
    }
  },
  wire: {
    ...chatCompletions.wire,
    text: (request) => {
      expect(request.path).toBe("/chat/completions")
      expect(request.headers["authorization"]).toBe(`Bearer ${apiKey}`)
      expect(bodyOf(request)["model"]).toBe("deepseek-reasoner")
    },
    reasoning: (request, part) => {
      const messages = bodyOf(request)["messages"] as ReadonlyArray<Body>
      expect(messages.find((message) => message["role"] === "assistant")).toMatchObject({ reasoning_content: part.text })
    }
  }
}
