/**
 * An `effect/ai` `LanguageModel` that talks HTTP to the replay server: made
 * with `LanguageModel.make` over one of chat-ts's own provider layers
 * (`@chat-ts/openai`'s Responses API), so the bridge can be run against the
 * recorded OpenAI traffic now that no `@effect/ai-*` provider loads on
 * Effect 4.1. It does what an `effect/ai` provider does: the `Prompt` and the
 * `Tool`s (their JSON Schema, `Tool.Strict`) become the request, the answer
 * comes back as encoded response parts, and the provider's HTTP errors as
 * `AiError`s carrying the status, headers and body, as a real provider
 * reports them. It never retries (effect/ai providers leave that to the app).
 * Like a provider's own `Config` service, `Config` in a request's context
 * sets its temperature and output token limit.
 */
import { type ChatError, LanguageModel, Messages, Tool } from "@chat-ts/core"
import * as AiError from "effect/ai/AiError"
import * as AiLanguageModel from "effect/ai/LanguageModel"
import type * as Prompt from "effect/ai/Prompt"
import type * as AiResponse from "effect/ai/Response"
import * as AiTool from "effect/ai/Tool"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

type Metadata = { readonly [key: string]: unknown }

/** The provider settings of a request, read from its context (as an effect/ai provider reads its `Config`). */
export class Config extends Context.Service<Config, {
  readonly temperature?: number
  readonly max_output_tokens?: number
}>()("@chat-ts/effect-ai/test/ReplayOpenAi/Config") {}

/** The request with the settings of `Config` in context, if any. */
const configured = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Request> =>
  Effect.map(Effect.serviceOption(Config), (config) =>
    config._tag === "None" ? request : {
      ...request,
      options: {
        ...request.options,
        ...(config.value.temperature === undefined ? {} : { temperature: config.value.temperature }),
        ...(config.value.max_output_tokens === undefined ? {} : { maxTokens: config.value.max_output_tokens })
      }
    })

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A tool result as the chat-ts status whose projection gives it back. */
const statusOf = (part: Prompt.ToolResultPart): Messages.ToolCallStatus => {
  if (!part.isFailure) return { _tag: "Completed", result: part.result }
  const result = part.result
  const error = typeof result === "object" && result !== null && "error" in result ? (result as { readonly error: unknown }).error : result
  return { _tag: "Failed", error: typeof error === "string" ? error : JSON.stringify(error) }
}

/**
 * The provider metadata of a reasoning part as an effect/ai provider keeps it: chat-ts's `signature` (OpenAI's
 * encrypted content) goes under `openai.encryptedContent`, as `@effect/ai-openai` kept it.
 */
const reasoningMetadata = (metadata: Metadata | undefined, signature: string | undefined): Metadata => {
  if (signature === undefined) return metadata ?? {}
  const openai = typeof metadata?.["openai"] === "object" && metadata["openai"] !== null ? metadata["openai"] as Metadata : {}
  return { ...metadata, openai: { ...openai, encryptedContent: signature } }
}

/** A reasoning part of the prompt as chat-ts's: its options are its provider metadata, the encrypted content its signature. */
const fromReasoning = (part: Prompt.ReasoningPart): Messages.Part => {
  const openai = part.options["openai"]
  const encrypted = typeof openai === "object" && openai !== null && !Array.isArray(openai)
    ? (openai as { readonly [key: string]: unknown })["encryptedContent"]
    : undefined
  return {
    _tag: "Reasoning",
    text: part.text,
    ...(typeof encrypted === "string" ? { signature: encrypted } : {}),
    ...(Object.keys(part.options).length === 0 ? {} : { providerMetadata: part.options })
  }
}

/** The prompt as chat-ts messages: tool results become the statuses of their calls. */
export const fromPrompt = (prompt: Prompt.Prompt): Messages.Messages => {
  const results = new Map<string, Prompt.ToolResultPart>()
  for (const message of prompt.content) {
    if (message.role === "tool") for (const part of message.content) if (part.type === "tool-result") results.set(part.id, part)
  }
  return prompt.content.flatMap((message): Messages.Messages => {
    switch (message.role) {
      case "system":
        return [Messages.system(message.content)]
      case "user":
        return [{
          role: "user",
          parts: message.content.map((part) =>
            part.type === "text"
              ? Messages.text(part.text)
              : part.data instanceof URL
              ? Messages.file({ mediaType: part.mediaType, url: part.data.href })
              : Messages.file({ mediaType: part.mediaType, base64: typeof part.data === "string" ? part.data : Base64.encode(part.data) })
          )
        }]
      case "assistant":
        return [{
          role: "assistant",
          parts: message.content.flatMap((part): ReadonlyArray<Messages.Part> => {
            switch (part.type) {
              case "text":
                return [Messages.text(part.text)]
              case "reasoning":
                return [fromReasoning(part)]
              case "tool-call": {
                const call = Messages.toolCall({ id: part.id, name: part.name, arguments: JSON.stringify(part.params) ?? "{}" })
                const result = results.get(part.id)
                return [result === undefined ? call : { ...call, status: statusOf(result) }]
              }
              default:
                return []
            }
          })
        }]
      case "tool":
        return []
    }
  })
}

/** The request chat-ts's provider gets for the options effect/ai prepared. */
export const toRequest = (options: AiLanguageModel.ProviderOptions): LanguageModel.Request => {
  const format = options.responseFormat
  const schema = format.type === "json" ? AiTool.getJsonSchemaFromSchema(format.schema) as Metadata : undefined
  const choice = options.toolChoice
  const toolChoice: LanguageModel.ToolChoice | undefined = options.tools.length === 0
    ? undefined
    : typeof choice === "string"
    ? choice
    : "tool" in choice
    ? { tool: choice.tool }
    : choice.mode === "required"
    ? "required"
    : "auto"
  return {
    messages: fromPrompt(options.prompt),
    tools: options.tools.map((tool) => ({
      name: tool.name,
      description: AiTool.getDescription(tool) ?? tool.name,
      parameters: AiTool.getJsonSchema(tool) as Metadata,
      strict: AiTool.getStrictMode(tool) ?? false
    })),
    options: {
      ...(toolChoice === undefined ? {} : { toolChoice }),
      ...(format.type === "json" && schema !== undefined
        ? { responseFormat: { type: "json", name: format.objectName, schema, strict: Tool.isStrictCompatible(schema) } }
        : {})
    }
  }
}

const usage = (value: LanguageModel.Response["usage"]): typeof AiResponse.Usage.Encoded => ({
  inputTokens: { total: value.inputTokens, ...(value.cachedInputTokens === undefined ? {} : { cacheRead: value.cachedInputTokens }) },
  outputTokens: { total: value.outputTokens, ...(value.reasoningTokens === undefined ? {} : { reasoning: value.reasoningTokens }) }
})

const metadataOf = (value: Metadata | undefined) => (value ?? {}) as AiResponse.ProviderMetadata

const partOf = (part: Messages.Part): ReadonlyArray<AiResponse.PartEncoded> => {
  switch (part._tag) {
    case "Text":
      return [{ type: "text", text: part.text }]
    case "Reasoning":
      return [{ type: "reasoning", text: part.text, metadata: metadataOf(reasoningMetadata(part.providerMetadata, part.signature)) }]
    case "ToolCall":
      return [{ type: "tool-call", id: part.id, name: part.name, params: parse(part.arguments) }]
    case "File":
      return part.data._tag === "Base64" ? [{ type: "file", mediaType: part.mediaType, data: part.data.base64 }] : []
    default:
      return []
  }
}

/** The response's id and model, from chat-ts's OpenAI metadata, as effect/ai's `response-metadata` part. */
const responseMetadata = (metadata: Metadata | undefined): ReadonlyArray<AiResponse.ResponseMetadataPartEncoded> => {
  const openai = metadata?.["openai"]
  if (typeof openai !== "object" || openai === null) return []
  const { model, responseId } = openai as { readonly responseId?: unknown; readonly model?: unknown }
  return [{
    type: "response-metadata",
    ...(typeof responseId === "string" ? { id: responseId } : {}),
    ...(typeof model === "string" ? { modelId: model } : {})
  }]
}

/** A whole chat-ts response as effect/ai's encoded parts. */
export const toParts = (response: LanguageModel.Response): Array<AiResponse.PartEncoded> => [
  ...responseMetadata(response.providerMetadata),
  ...response.parts.flatMap(partOf),
  { type: "finish", reason: response.finishReason, usage: usage(response.usage), metadata: metadataOf(response.providerMetadata) }
]

/** One streamed chat-ts part as effect/ai's encoded stream parts. */
const toStreamParts = (part: LanguageModel.StreamPart, index: number): ReadonlyArray<AiResponse.StreamPartEncoded> => {
  const id = `part-${index}`
  switch (part._tag) {
    case "TextDelta":
      return [...(part.start === true ? [{ type: "text-start" as const, id }] : []), { type: "text-delta", id, delta: part.text }]
    case "ReasoningDelta":
      return [
        ...(part.start === true ? [{ type: "reasoning-start" as const, id }] : []),
        { type: "reasoning-delta", id, delta: part.text, metadata: metadataOf(reasoningMetadata(part.providerMetadata, part.signature)) }
      ]
    case "ToolCallStart":
      return [{ type: "tool-params-start", id: part.id, name: part.name }]
    case "ToolCallDelta":
      return [{ type: "tool-params-delta", id: part.id, delta: part.argumentsDelta }]
    case "Part":
      return partOf(part.part).map((encoded) =>
        encoded.type === "text"
          ? { type: "text-delta", id, delta: encoded.text }
          : encoded.type === "reasoning"
          ? { type: "reasoning-delta", id, delta: encoded.text, ...(encoded.metadata === undefined ? {} : { metadata: encoded.metadata }) }
          : encoded as AiResponse.StreamPartEncoded
      )
    case "Finish":
      return [
        ...responseMetadata(part.providerMetadata),
        { type: "finish", reason: part.finishReason, usage: usage(part.usage), metadata: metadataOf(part.providerMetadata) }
      ]
  }
}

/** What an HTTP provider knows of a failed response: its status, headers and JSON error body. */
const http = (status: number, error: Metadata, headers: Record<string, string> = {}) => ({
  response: { status, headers },
  body: JSON.stringify({ error })
})

/** A chat-ts model error as the `AiError` an effect/ai HTTP provider reports for that response. */
export const toAiError = (error: ChatError.ModelError): AiError.AiError => {
  const reason = ((): AiError.AiErrorReason => {
    switch (error._tag) {
      case "RateLimited": {
        const headers = error.retryAfterMillis === undefined ? {} : { "retry-after-ms": String(error.retryAfterMillis) }
        const context = { http: http(429, { message: error.message, code: error.code ?? null }, headers) }
        return error.code === "insufficient_quota"
          ? new AiError.QuotaExhaustedError(context)
          : new AiError.RateLimitError({
            ...context,
            ...(error.retryAfterMillis === undefined ? {} : { retryAfter: Duration.millis(error.retryAfterMillis) })
          })
      }
      case "AuthenticationError":
        return new AiError.AuthenticationError({
          kind: error.status === 403 ? "InsufficientPermissions" : "InvalidKey",
          http: http(error.status ?? 401, { message: error.message })
        })
      case "ContextLengthExceeded":
        return new AiError.InvalidRequestError({ http: http(400, { message: error.message, code: "context_length_exceeded" }) })
      case "InvalidRequest":
        return new AiError.InvalidRequestError({
          http: http(error.status ?? 400, { message: error.message, ...(error.code === undefined ? {} : { code: error.code }) })
        })
      case "ServerError":
        return new AiError.InternalProviderError({ description: error.message, http: http(error.status ?? 500, { message: error.message }) })
      case "NetworkError":
        return new AiError.NetworkError({ reason: "TransportError", method: "POST", url: "/v1/responses", description: error.message })
      case "MalformedResponse":
        return new AiError.InvalidResponseError({ description: error.message })
    }
  })()
  return AiError.make({ module: "ReplayOpenAi", method: "request", reason })
}

/** The effect/ai model over the chat-ts model of `layer`. */
export const layer = <E>(chatTs: Layer.Layer<LanguageModel.LanguageModel, E>): Layer.Layer<AiLanguageModel.LanguageModel, E> =>
  Layer.effect(
    AiLanguageModel.LanguageModel,
    Effect.gen(function*() {
      const model = yield* LanguageModel.LanguageModel
      return yield* AiLanguageModel.make({
        generateText: (options) =>
          configured(toRequest(options)).pipe(Effect.flatMap(model.generate), Effect.map(toParts), Effect.mapError(toAiError)),
        streamText: (options) =>
          Stream.unwrap(Effect.map(configured(toRequest(options)), model.stream)).pipe(
            Stream.zipWithIndex,
            Stream.flatMap(([part, index]) => Stream.fromIterable(toStreamParts(part, index))),
            Stream.mapError(toAiError)
          )
      })
    })
  ).pipe(Layer.provide(chatTs))
