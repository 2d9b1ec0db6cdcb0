/**
 * `@ai-sdk/azure`'s default model (`azure(deployment)`: the Responses API) through the bridge, on the
 * URLs it builds for a real resource (`https://<resource>.openai.azure.com/openai/v1/responses?api-version=v1`),
 * sent to the replay server by a custom `fetch`. Reasoning goes back as the encrypted items the
 * layer asks for (`store: false`, `include: ["reasoning.encrypted_content"]` in `providerOptions`).
 *
 * Fixtures: recorded OpenAI Responses traffic (../fixtures/README.md says where each file comes
 * from); Azure's v1 Responses API answers in the same shape. The errors are Azure's, as in ./azure.ts.
 */
import { createAzure } from "@ai-sdk/azure"
import { Conformance, ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import * as Layer from "effect/Layer"
import { readFileSync } from "node:fs"
import * as AiSdkLanguageModel from "../../src/AiSdkLanguageModel.js"
import { redirect } from "../support/redirect.js"
import { apiKey, azure } from "./azure.js"
import { bodyOf, cities, citiesFormat } from "./shared.js"

const fixture = (name: string) => readFileSync(new URL(`../fixtures/responses/${name}`, import.meta.url), "utf8")
const json = (name: string) => ReplayServer.json(fixture(name))
const sse = (name: string) => ReplayServer.sse(fixture(name))

/** `@ai-sdk/azure` 4 (AI SDK 7, v4), Responses. */
export const azureResponses: Conformance.Harness = {
  name: "AiSdkLanguageModel on @ai-sdk/azure (v4, Responses)",
  apiKey,
  layer: (server, settings) =>
    Layer.orDie(AiSdkLanguageModel.layer({
      model: createAzure({ resourceName: "chat-ts-conformance", apiKey, fetch: redirect(server.url) })("gpt-5-mini"),
      idleTimeout: settings.idleTimeout,
      secrets: [apiKey],
      providerOptions: { azure: { store: false, include: ["reasoning.encrypted_content"] }, openai: { store: false, include: ["reasoning.encrypted_content"] } },
      ...(settings.retry ? {} : { retry: false })
    })),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: true },
  fixtures: {
    text: { reply: json("text.json"), text: JSON.parse(fixture("text.json")).output[0].content[0].text, usage: { inputTokens: 14, outputTokens: 50 } },
    streamText: { reply: sse("stream-text.sse"), text: "The capital of France is Paris.", usage: { inputTokens: 278, outputTokens: 9 } },
    toolCall: {
      reply: json("function-call.json"),
      calls: [{ id: "call_YfwRsW8sUxDKipwyhWTzOXCA", name: "get_capital", arguments: { country: "PotatoLand" } }],
      usage: { inputTokens: 40, outputTokens: 18 }
    },
    streamToolCall: {
      reply: sse("stream-function-call.sse"),
      calls: [{ id: "call_kL0PCQV7M2WMoVX8V8OtYSAL", name: "get_capital", arguments: { country: "France" } }],
      usage: { inputTokens: 255, outputTokens: 16 }
    },
    parallelToolCalls: {
      reply: json("function-calls-parallel.json"),
      calls: [
        { id: "call_LWVp74L5HaH2KNvgVz9PJsrj", name: "get_location", arguments: { loc_name: "Londos" } },
        { id: "call_YnRAWeTyxI91m5uNa5bxXwVO", name: "get_location", arguments: { loc_name: "London" } }
      ]
    },
    streamParallelToolCalls: {
      reply: sse("responses-stream-function-calls-parallel.sse"),
      calls: [
        { id: "call_LWVp74L5HaH2KNvgVz9PJsrj", name: "get_location", arguments: { loc_name: "Londos" } },
        { id: "call_YnRAWeTyxI91m5uNa5bxXwVO", name: "get_location", arguments: { loc_name: "London" } }
      ]
    },
    structured: { reply: json("responses-structured-wrapped.json"), format: citiesFormat, value: cities },
    reasoning: {
      reply: sse("stream-function-call-reasoning.sse"),
      streamed: true,
      call: { id: "call_CWXgs68YprAjp6t0371hiPOI", name: "final_result", arguments: { result: 6666 } },
      then: json("text.json")
    },
    rateLimit: azure.fixtures.rateLimit,
    serverError: azure.fixtures.serverError,
    unauthorized: azure.fixtures.unauthorized
  },
  wire: {
    text: (request) => {
      expect(request.path).toBe("/openai/v1/responses?api-version=v1")
      expect(request.headers["api-key"]).toBe(apiKey)
      expect(bodyOf(request).model).toBe("gpt-5-mini")
    },
    stream: (request) => expect(bodyOf(request).stream).toBe(true),
    toolResults: (request, sent) => {
      const input = bodyOf(request).input as ReadonlyArray<{ type?: string; call_id?: string; output?: unknown }>
      const outputs = input.filter((item) => item.type === "function_call_output")
      expect(outputs.map((item) => item.call_id)).toEqual([sent.completed.id, sent.rejected.id])
    },
    structured: (request) => expect((bodyOf(request).text as { format: { type: string } }).format.type).toBe("json_schema"),
    reasoning: (request) => {
      const input = bodyOf(request).input as ReadonlyArray<{ type?: string; encrypted_content?: unknown }>
      expect(input.some((item) => item.type === "reasoning")).toBe(true)
    }
  }
}
