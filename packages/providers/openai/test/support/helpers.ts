/**
 * Shared pieces of the provider tests: the fake API key, layers pointing the
 * real SDK at the replay server, requests and conversations with resolved
 * tool calls.
 */
import type { EmbeddingModel } from "@chat-ts/core"
import { LanguageModel, Messages } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as OpenAiChatCompletions from "../../src/OpenAiChatCompletions.js"
import * as OpenAiClient from "../../src/OpenAiClient.js"
import * as OpenAiEmbeddings from "../../src/OpenAiEmbeddings.js"
import * as OpenAiResponses from "../../src/OpenAiResponses.js"
import type { ReplayServer } from "./ReplayServer.js"

/** A fake API key that must never show up in an error message. */
export const apiKey = "sk-proj-TESTKEY0123456789abcdefghijklmnopqrstuvwxyzSECRET"

/** The client layer for a replay server. */
export const clientLayer = (
  server: ReplayServer,
  options: OpenAiClient.Options = {}
): Layer.Layer<OpenAiClient.OpenAiClient> =>
  OpenAiClient.layer({ apiKey: Redacted.make(apiKey), baseURL: server.baseURL, ...options })

/** A Chat Completions model on the replay server (no retries unless told). */
export const chatModel = (
  server: ReplayServer,
  options: Partial<OpenAiChatCompletions.Options> = {}
): Effect.Effect<LanguageModel.Service> =>
  OpenAiChatCompletions.make({ model: "gpt-4o-2024-08-06", retry: false, ...options }).pipe(
    Effect.provide(clientLayer(server))
  )

/** A Responses model on the replay server (no retries unless told). */
export const responsesModel = (
  server: ReplayServer,
  options: Partial<OpenAiResponses.Options> = {}
): Effect.Effect<LanguageModel.Service> =>
  OpenAiResponses.make({ model: "gpt-4o", retry: false, ...options }).pipe(Effect.provide(clientLayer(server)))

/** An embedding model on the replay server. */
export const embeddingModel = (
  server: ReplayServer,
  options: Partial<OpenAiEmbeddings.Options> = {}
): Effect.Effect<EmbeddingModel.Service> =>
  OpenAiEmbeddings.make({ model: "text-embedding-3-small", retry: false, ...options }).pipe(
    Effect.provide(clientLayer(server))
  )

/** A request. */
export const request = (
  messages: Messages.Messages,
  tools: ReadonlyArray<LanguageModel.ToolDeclaration> = [],
  options: LanguageModel.Options = {}
): LanguageModel.Request => ({ messages, tools, options })

/** A strict tool declaration. */
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

/** A non-strict tool declaration. */
export const emailTool: LanguageModel.ToolDeclaration = {
  name: "send_email",
  description: "Sends an email.",
  parameters: { type: "object", properties: { to: { type: "string" }, body: { type: "string" } } },
  strict: false
}

const unwrap = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) throw new Error(`unexpected: ${String(result.failure)}`)
  return result.success
}

/**
 * A conversation paused on two calls, then decided by a person: `call_weather`
 * approved with edited arguments and run (completed), `call_email` rejected
 * with a reason. Built with `Messages.approve` / `Messages.reject`.
 */
export const decidedConversation = (): Messages.Messages => {
  const paused: Messages.Messages = [
    Messages.system("You are terse."),
    Messages.user("Weather in Paris, then email it to my boss."),
    {
      role: "assistant",
      parts: [
        Messages.text("Checking."),
        { ...Messages.toolCall({ id: "call_weather", name: "get_weather", arguments: "{\"city\":\"Pariss\"}" }), status: { _tag: "AwaitingApproval" } },
        { ...Messages.toolCall({ id: "call_email", name: "send_email", arguments: "{\"to\":\"boss@example.com\"}" }), status: { _tag: "AwaitingApproval" } }
      ],
      providerMetadata: { openai: { responseId: "resp_previous" } }
    }
  ]
  const approved = unwrap(Messages.approve(paused, "call_weather", { city: "Paris" }))
  const ran = Messages.updateTool(approved, "call_weather", (call) => ({
    ...call,
    status: { _tag: "Completed", result: { temperature: 21 }, editedArguments: "{\"city\":\"Paris\"}" }
  }))
  return unwrap(Messages.reject(ran, "call_email", "Do not email my boss today"))
}
