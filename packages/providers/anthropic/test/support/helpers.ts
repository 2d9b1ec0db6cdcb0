/**
 * Shared pieces of the Anthropic tests: the fake API key, layers pointing the
 * real SDK at the replay server, requests and tool declarations.
 */
import type { LanguageModel, Messages } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as AnthropicClient from "../../src/AnthropicClient.js"
import * as AnthropicLanguageModel from "../../src/AnthropicLanguageModel.js"
import type { ReplayServer } from "./ReplayServer.js"

/** A fake API key that must never show up in an error message. */
export const apiKey = "sk-ant-api03-TESTKEY0123456789abcdefghijklmnopqrstuvwxyzSECRET-AA"

/** The client layer for a replay server. */
export const clientLayer = (
  server: ReplayServer,
  options: Partial<AnthropicClient.Options> = {}
): Layer.Layer<AnthropicClient.AnthropicClient> =>
  AnthropicClient.layer({ apiKey: Redacted.make(apiKey), baseURL: server.baseURL, ...options })

/** A model on the replay server (no retries unless told). */
export const model = (
  server: ReplayServer,
  options: Partial<AnthropicLanguageModel.Options> = {}
): Effect.Effect<LanguageModel.Service> =>
  AnthropicLanguageModel.make({ model: "claude-opus-4-8", retry: false, ...options }).pipe(Effect.provide(clientLayer(server)))

/** A request. */
export const request = (
  messages: Messages.Messages,
  tools: ReadonlyArray<LanguageModel.ToolDeclaration> = [],
  options: LanguageModel.Options = {}
): LanguageModel.Request => ({ messages, tools, options })

/** The tool of the recorded ToolRunner fixtures. */
export const testTool: LanguageModel.ToolDeclaration = {
  name: "test_tool",
  description: "A test tool",
  parameters: { type: "object", properties: { count: { type: "number" } }, required: ["count"], additionalProperties: false },
  strict: true
}

/** The tool of the recorded streaming fixture. */
export const weatherTool: LanguageModel.ToolDeclaration = {
  name: "get_weather",
  description: "The weather in a city.",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  strict: false
}

/** The JSON body a request sent. */
export const bodyOf = (server: ReplayServer, index: number): { readonly [key: string]: unknown } =>
  server.requests[index]!.body as { readonly [key: string]: unknown }
