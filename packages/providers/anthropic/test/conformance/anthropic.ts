/**
 * The conformance harness of `AnthropicLanguageModel` (`@chat-ts/core/testing`'s
 * `Conformance` suite): the layer against the replay server, the fixtures each
 * scenario serves (see fixtures/README.md), and checks of the Messages API's
 * own request format.
 */
import type { LanguageModel } from "@chat-ts/core"
import { Conformance, ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as AnthropicClient from "../../src/AnthropicClient.js"
import * as AnthropicLanguageModel from "../../src/AnthropicLanguageModel.js"
import { fixture } from "../support/ReplayServer.js"

/** The key the layer sends; the suite checks that no error shows it. */
export const apiKey = "sk-ant-api03-CONFORMANCE0123456789abcdefghijklmnopqrstuvwxyz-AA"

const json = (name: string) => ReplayServer.json(fixture(name))
const sse = (name: string) => ReplayServer.sse(fixture(name))

type Body = { readonly [key: string]: unknown }
const bodyOf = (request: ReplayServer.Recorded): Body => request.body as Body
const contentOf = (name: string): ReadonlyArray<Body> => (JSON.parse(fixture(name)) as { content: ReadonlyArray<Body> }).content

/** The structured fixture's format: a forced tool named after it. */
const weatherFormat: LanguageModel.ResponseFormat = {
  type: "json",
  name: "Weather",
  schema: {
    type: "object",
    properties: { city: { type: "string" }, celsius: { type: "number" } },
    required: ["city", "celsius"],
    additionalProperties: false
  },
  strict: true
}

/** Anthropic's Messages API (`POST /v1/messages`). */
export const anthropic: Conformance.Harness = {
  name: "AnthropicLanguageModel",
  apiKey,
  layer: (server, settings) =>
    AnthropicLanguageModel.layer({
      model: "claude-opus-4-8",
      idleTimeout: settings.idleTimeout,
      ...(settings.retry ? {} : { retry: false })
    }).pipe(Layer.provide(AnthropicClient.layer({ apiKey: Redacted.make(apiKey), baseURL: server.baseURL }))),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: true },
  fixtures: {
    text: {
      reply: json("messages/text-after-tool.json"),
      text: contentOf("messages/text-after-tool.json")[0]!["text"] as string,
      usage: { inputTokens: 505, outputTokens: 41, cachedInputTokens: 0 }
    },
    streamText: { reply: sse("stream/text.sse"), text: "Hello there!", usage: { inputTokens: 11, outputTokens: 6 } },
    toolCall: {
      reply: json("messages/tool-use.json"),
      calls: [{ id: "toolu_011LF2VkWpAfJnTKJcmh1PNf", name: "test_tool", arguments: { value: "test" } }],
      usage: { inputTokens: 415, outputTokens: 76 }
    },
    streamToolCall: {
      reply: sse("stream/tool-use.sse"),
      calls: [{ id: "toolu_01NRLabsLyVHZPKxbKvkfSMn", name: "get_weather", arguments: { location: "Paris" } }],
      usage: { inputTokens: 377, outputTokens: 65 }
    },
    parallelToolCalls: {
      reply: json("messages/tool-use-parallel.json"),
      calls: [
        { id: "toolu_01L8GVQapA1HmggQcrwboukH", name: "test_tool", arguments: { count: 1 } },
        { id: "toolu_01J5Fvzxu7DP1Uh59c1kr5JD", name: "test_tool", arguments: { count: 2 } }
      ],
      usage: { inputTokens: 418, outputTokens: 113 },
      edit: { count: 5 }
    },
    streamParallelToolCalls: {
      reply: sse("constructed/stream-tool-use-parallel.sse"),
      calls: [
        { id: "toolu_01L8GVQapA1HmggQcrwboukH", name: "test_tool", arguments: { count: 1 } },
        { id: "toolu_01J5Fvzxu7DP1Uh59c1kr5JD", name: "test_tool", arguments: { count: 2 } }
      ],
      usage: { inputTokens: 418, outputTokens: 113 },
      edit: { count: 5 }
    },
    structured: { reply: json("constructed/structured-tool.json"), format: weatherFormat, value: { city: "Paris", celsius: 21 } },
    reasoning: {
      reply: json("constructed/thinking-tool-use.json"),
      streamed: false,
      call: { id: "toolu_01CswdEQBMshySk6Y9DFKrfq", name: "get_weather", arguments: { location: "Paris" } },
      then: json("messages/text-after-tool.json")
    },
    rateLimit: { reply: ReplayServer.json(fixture("errors/rate-limit-429.json"), { status: 429, headers: { "retry-after": "3" } }), retryAfterMillis: 3000 },
    serverError: {
      reply: ReplayServer.json({ type: "error", error: { type: "api_error", message: "Internal server error" } }, { status: 500 }),
      status: 500
    },
    // The API is told to echo the key it was given (synthetic: the recorded 401 says only "invalid x-api-key").
    unauthorized: {
      reply: ReplayServer.json({ type: "error", error: { type: "authentication_error", message: `invalid x-api-key: ${apiKey}` } }, { status: 401 })
    }
  },
  wire: {
    text: (request, sent) => {
      expect(request.method).toBe("POST")
      expect(request.path).toBe("/v1/messages")
      expect(request.headers["authorization"]).toBe(`Bearer ${apiKey}`)
      const body = bodyOf(request)
      expect(body).toMatchObject({ model: "claude-opus-4-8", max_tokens: 4096 })
      const text = (role: string) =>
        sent.messages.filter((message) => message.role === role).map((message) => ({
          type: "text",
          text: message.parts.map((part) => (part._tag === "Text" ? part.text : "")).join("")
        }))
      expect(body["system"]).toEqual(text("system"))
      expect(body["messages"]).toEqual([{ role: "user", content: text("user") }])
    },
    stream: (request) => {
      expect(bodyOf(request)["stream"]).toBe(true)
    },
    toolResults: (request, { completed, rejected }) => {
      const messages = bodyOf(request)["messages"] as ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<Body> }>
      const at = messages.findIndex((message) => message.role === "assistant" && message.content.some((block) => block["type"] === "tool_use"))
      expect(messages[at]!.content.filter((block) => block["type"] === "tool_use")).toEqual([
        { type: "tool_use", id: completed.id, name: completed.name, input: JSON.parse(completed.arguments) },
        { type: "tool_use", id: rejected.id, name: rejected.name, input: JSON.parse(rejected.arguments) }
      ])
      // The results of one response: one user message right after it, a rejection as an error with its reason.
      expect(messages[at + 1]).toEqual({
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: completed.id, content: completed.result!.text },
          { type: "tool_result", tool_use_id: rejected.id, content: rejected.result!.text, is_error: true }
        ]
      })
      expect(rejected.result!.text).toContain(rejected.reason)
    },
    // Three calls that did not run: three error results in the one user message after them.
    unrunCalls: (request) => {
      const messages = bodyOf(request)["messages"] as ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<Body> }>
      expect(messages.at(-1)!.content.map((block) => [block["type"], block["tool_use_id"], block["is_error"]])).toEqual([
        ["tool_result", "call_rejected", true],
        ["tool_result", "call_expired", true],
        ["tool_result", "call_cancelled", true]
      ])
    },
    structured: (request, format) => {
      expect(bodyOf(request)).toMatchObject({
        tools: [{ name: format.name, input_schema: format.schema }],
        tool_choice: { type: "tool", name: format.name }
      })
    },
    reasoning: (request, part) => {
      const messages = bodyOf(request)["messages"] as ReadonlyArray<{ readonly role: string; readonly content: ReadonlyArray<Body> }>
      const assistant = messages.find((message) => message.role === "assistant")!
      // Thinking and redacted thinking go back unchanged, in their order, before the call.
      expect(assistant.content).toEqual(contentOf("constructed/thinking-tool-use.json"))
      expect(assistant.content[0]).toEqual({ type: "thinking", thinking: part.text, signature: part.signature })
    }
  }
}
