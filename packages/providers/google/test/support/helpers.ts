/**
 * Shared pieces of the Gemini tests: the fake API key, layers pointing the
 * real `@google/genai` SDK at the replay server, requests and tool declarations.
 */
import type { EmbeddingModel, LanguageModel, Messages } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as GoogleClient from "../../src/GoogleClient.js"
import * as GoogleEmbeddings from "../../src/GoogleEmbeddings.js"
import * as GoogleLanguageModel from "../../src/GoogleLanguageModel.js"
import type { ReplayServer } from "@chat-ts/core/testing"

/** A fake Gemini API key that must never show up in an error message. */
export const apiKey = "AIzaSyTESTKEY0123456789abcdefghijklmnoSECRET"

/** The client layer for a replay server. */
export const clientLayer = (
  server: ReplayServer.ReplayServer,
  options: Partial<GoogleClient.Options> = {}
): Layer.Layer<GoogleClient.GoogleClient> =>
  GoogleClient.layer({ apiKey: Redacted.make(apiKey), baseURL: server.baseURL, ...options })

/** A Gemini model on the replay server (no retries unless told). */
export const geminiModel = (
  server: ReplayServer.ReplayServer,
  options: Partial<GoogleLanguageModel.Options> = {}
): Effect.Effect<LanguageModel.Service> =>
  GoogleLanguageModel.make({ model: "gemini-2.5-flash", retry: false, ...options }).pipe(Effect.provide(clientLayer(server)))

/** A Gemini embedding model on the replay server. */
export const embeddingModel = (
  server: ReplayServer.ReplayServer,
  options: Partial<GoogleEmbeddings.Options> = {}
): Effect.Effect<EmbeddingModel.Service> =>
  GoogleEmbeddings.make({ model: "gemini-embedding-001", retry: false, ...options }).pipe(Effect.provide(clientLayer(server)))

/** A request. */
export const request = (
  messages: Messages.Messages,
  tools: ReadonlyArray<LanguageModel.ToolDeclaration> = [],
  options: LanguageModel.Options = {}
): LanguageModel.Request => ({ messages, tools, options })

/** A tool declaration as the core makes them (JSON Schema with `additionalProperties: false`). */
export const weatherTool: LanguageModel.ToolDeclaration = {
  name: "get_weather",
  description: "The weather in a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false
  },
  strict: true
}

/** A second tool. */
export const emailTool: LanguageModel.ToolDeclaration = {
  name: "send_email",
  description: "Sends an email.",
  parameters: { type: "object", properties: { to: { type: "string" }, body: { type: "string" } }, required: ["to"] },
  strict: false
}

/** The signature the recorded function-call responses put on their first call. */
export const callSignature =
  "CiQB0e2Kb7ZQm3sP9yGxJ0vQ1cS5Yq8nW2dF4tH6uJ8kL0mN1oP2qR3sT4uV5wX6yZ7aB8cD9eF0gH1iJ2kL3mN4oP5qR6sT7uV8wX9yZ0="

/** The signature the recorded final answers put on their text. */
export const textSignature = "EjQKMgHR7Ypvx2lY7wQmN8bV5cX3zA1sD4fG6hJ8kL0pO9iU7yT5rE3wQ2aS4dF6gH8jK0lZ="
