/**
 * The conformance harness of Gemini (`@chat-ts/core/testing`'s `Conformance`
 * suite): the layer against the replay server, the fixtures each scenario
 * serves (see fixtures/README.md), and checks of Gemini's own request format.
 */
import type { LanguageModel } from "@chat-ts/core"
import { Conformance, ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as GoogleClient from "../../src/GoogleClient.js"
import * as GoogleLanguageModel from "../../src/GoogleLanguageModel.js"
import { fixture } from "../support/fixtures.js"

/** The key the layer sends; the suite checks that no error shows it. */
export const apiKey = "AIzaSyCONFORMANCE0123456789abcdefghijSECRET"

const json = (name: string) => ReplayServer.json(fixture(name))
const sse = (name: string) => ReplayServer.sse(fixture(name))

const recipeFormat: LanguageModel.ResponseFormat = {
  type: "json",
  name: "Recipe",
  schema: {
    type: "object",
    properties: {
      recipeName: { type: "string" },
      ingredients: { type: "array", items: { type: "string" } },
      difficulty: { type: "string", enum: ["easy", "hard"] }
    },
    required: ["recipeName", "ingredients", "difficulty"],
    additionalProperties: false
  },
  strict: true
}

type Body = { readonly [key: string]: unknown }
type Content = { readonly role: string; readonly parts: ReadonlyArray<Body> }
const bodyOf = (request: ReplayServer.Recorded): Body => request.body as Body

/** Gemini's generateContent on the `@google/genai` SDK. */
export const gemini: Conformance.Harness = {
  name: "GoogleLanguageModel",
  apiKey,
  layer: (server, settings) =>
    GoogleLanguageModel.layer({
      model: "gemini-2.5-flash",
      idleTimeout: settings.idleTimeout,
      ...(settings.retry ? {} : { retry: false })
    }).pipe(Layer.provide(GoogleClient.layer({ apiKey: Redacted.make(apiKey), baseURL: server.url }))),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: true },
  fixtures: {
    text: {
      reply: json("generate/text.json"),
      text: "AI learns patterns from data to make predictions or decisions.",
      usage: { inputTokens: 8, outputTokens: 37, reasoningTokens: 25 }
    },
    streamText: {
      reply: sse("stream/text.sse"),
      text: "The sky is blue because air scatters short blue wavelengths of sunlight more than red ones.",
      usage: { inputTokens: 7, outputTokens: 49, reasoningTokens: 31 }
    },
    toolCall: {
      reply: json("generate/function-call.json"),
      calls: [{ id: "fc_7h2kd9wq", name: "get_capital", arguments: { country: "France" } }],
      usage: { inputTokens: 57, outputTokens: 16 }
    },
    streamToolCall: {
      reply: sse("stream/function-call.sse"),
      calls: [{ name: "get_capital", arguments: { country: "France" } }],
      usage: { inputTokens: 57, outputTokens: 16 }
    },
    parallelToolCalls: {
      reply: json("generate/function-calls-parallel.json"),
      calls: [
        { name: "get_weather", arguments: { city: "Paris" } },
        { name: "send_email", arguments: { to: "boss@example.com", body: "Weather in Paris to follow." } }
      ],
      usage: { inputTokens: 96, outputTokens: 135, reasoningTokens: 94 }
    },
    streamParallelToolCalls: {
      reply: sse("stream/function-calls-thinking.sse"),
      calls: [
        { name: "get_weather", arguments: { city: "Paris" } },
        { name: "send_email", arguments: { to: "boss@example.com", body: "Weather in Paris to follow." } }
      ],
      usage: { inputTokens: 96, outputTokens: 135, reasoningTokens: 94 }
    },
    structured: {
      reply: json("generate/structured.json"),
      format: recipeFormat,
      value: { recipeName: "Chocolate Chip Cookies", ingredients: ["flour", "butter", "sugar", "chocolate chips"], difficulty: "easy" }
    },
    reasoning: {
      reply: json("generate/thinking-function-call.json"),
      streamed: false,
      call: { name: "get_capital", arguments: { country: "France" } },
      then: json("generate/text.json")
    },
    // Gemini asks for the wait in the error's RetryInfo (37s in the recorded body).
    rateLimit: { reply: ReplayServer.json(fixture("errors/429-resource-exhausted.json"), { status: 429 }), retryAfterMillis: 37_000 },
    serverError: { reply: ReplayServer.json(fixture("errors/503-unavailable.json"), { status: 503 }), status: 503 },
    // Synthetic, in Google's error shape: a 401 whose message echoes the key.
    unauthorized: {
      reply: ReplayServer.json({
        error: { code: 401, message: `Request had invalid authentication credentials (key ${apiKey}).`, status: "UNAUTHENTICATED" }
      }, { status: 401 })
    }
  },
  wire: {
    text: (request, sent) => {
      expect(request.method).toBe("POST")
      expect(request.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent")
      expect(request.headers["x-goog-api-key"]).toBe(apiKey)
      const texts = (role: string) =>
        sent.messages.filter((m) => m.role === role).map((m) => m.parts.map((p) => (p._tag === "Text" ? p.text : "")).join(""))
      // The SDK sends an empty generationConfig when nothing is set.
      const { generationConfig, ...rest } = bodyOf(request)
      expect(generationConfig ?? {}).toEqual({})
      expect(rest).toEqual({
        contents: texts("user").map((text) => ({ role: "user", parts: [{ text }] })),
        systemInstruction: { parts: texts("system").map((text) => ({ text })) }
      })
    },
    stream: (request) => {
      expect(request.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    },
    toolResults: (request, { completed, rejected }) => {
      const contents = bodyOf(request)["contents"] as ReadonlyArray<Content>
      const model = contents.find((content) => content.role === "model")!
      expect(model.parts).toEqual(expect.arrayContaining([
        expect.objectContaining({ functionCall: expect.objectContaining({ name: completed.name, args: JSON.parse(completed.arguments) }) }),
        expect.objectContaining({ functionCall: expect.objectContaining({ name: rejected.name, args: JSON.parse(rejected.arguments) }) })
      ]))
      const responses = contents[contents.indexOf(model) + 1]!
      expect(responses.role).toBe("user")
      expect(responses.parts).toEqual([
        { functionResponse: { name: completed.name, response: { output: completed.result!.value } } },
        { functionResponse: { name: rejected.name, response: { error: expect.stringContaining(rejected.reason) } } }
      ])
    },
    // Three calls that did not run: three function responses answering `{ error }`.
    unrunCalls: (request) => {
      const contents = bodyOf(request)["contents"] as ReadonlyArray<Content>
      const responses = contents.at(-1)!.parts.map((part) => part["functionResponse"] as { readonly name: string; readonly response: object })
      expect(responses.map((response) => [response.name, Object.keys(response.response)])).toEqual([
        ["pay", ["error"]],
        ["email", ["error"]],
        ["remove", ["error"]]
      ])
    },
    structured: (request) => {
      expect(bodyOf(request)["generationConfig"]).toEqual({
        responseMimeType: "application/json",
        responseSchema: {
          type: "OBJECT",
          properties: {
            recipeName: { type: "STRING" },
            ingredients: { type: "ARRAY", items: { type: "STRING" } },
            difficulty: { type: "STRING", enum: ["easy", "hard"] }
          },
          required: ["recipeName", "ingredients", "difficulty"]
        }
      })
    },
    reasoning: (request, part) => {
      const contents = bodyOf(request)["contents"] as ReadonlyArray<Content>
      const model = contents.find((content) => content.role === "model")!
      expect(model.parts[0]).toEqual({ text: part.text, thought: true, thoughtSignature: part.signature })
    }
  }
}
