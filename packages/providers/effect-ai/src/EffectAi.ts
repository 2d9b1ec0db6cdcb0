/**
 * Any `effect/ai` language model as a chat-ts `LanguageModel`.
 *
 * `layer()` reads the `effect/ai` `LanguageModel` in context (any service
 * made with `LanguageModel.make`, with its own `HttpClient`, config and
 * tracing) and provides chat-ts's `LanguageModel` over it. The conversation
 * goes out as a `Prompt` (tool calls with their effective arguments, results
 * and rejections as tool results); tools go out as `effect/ai` tools whose
 * JSON Schema is exactly the one chat-ts declares; the answer comes back as
 * chat-ts parts (text, reasoning with its provider metadata, tool calls,
 * files), with usage and finish reason, streamed part by part. Tool calls
 * are never run by `effect/ai`: chat-ts decides and runs them (approval,
 * edits, schedules). `AiError`s become chat-ts's typed model errors.
 *
 * @since 0.1.0
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as Messages from "@chat-ts/core/Messages"
import type * as AiError from "effect/ai/AiError"
import * as AiLanguageModel from "effect/ai/LanguageModel"
import type * as AiResponse from "effect/ai/Response"
import type * as Tool from "effect/ai/Tool"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Convert from "./internal/convert.js"
import * as Errors from "./internal/error.js"

/** The provider metadata key under which the bridge keeps tool calls' provider metadata and the response's id. */
export const metadataKey = Convert.metadataKey

/** Options of `make` and `layer`. */
export interface Options {
  /**
   * The provider settings of one request, from chat-ts's options
   * (`temperature`, `maxTokens`, `seed`…): a Context merged into the call,
   * for example `Context.make(MyProvider.Config, { temperature })`.
   * `effect/ai` has no provider-neutral fields for them, so without this
   * they are not sent (tool choice and response format always are).
   */
  readonly requestContext?: (options: LanguageModel.Options) => Context.Context<never>
  /**
   * The longest wait between two parts of a stream (and for the first), past
   * which the stream fails with a retryable `NetworkError` (so a router falls
   * back). Default 5 minutes; `false`: wait forever.
   */
  readonly idleTimeout?: Duration.Input | false
}

/** The default longest wait between two parts of a stream. */
export const defaultIdleTimeout: Duration.Input = "5 minutes"

/** A chat-ts tool declaration as the `effect/ai` tool the bridge sends (its JSON Schema is the declared one). */
export const toTool: (declaration: LanguageModel.ToolDeclaration) => Tool.Any = Convert.toTool

/** A chat-ts conversation as the `effect/ai` prompt the bridge sends. */
export const toPrompt = Convert.toPrompt

/** Maps an `effect/ai` error to the chat-ts model error (retryable: transport, 429 other than quota, 5xx). */
export const toModelError = (error: AiError.AiError | AiError.AiErrorReason): Effect.Effect<ChatError.ModelError> =>
  Effect.map(Clock.currentTimeMillis, (now) => Errors.fromAiError(error, now))

type Content = ReadonlyArray<AiResponse.Part<Convert.Tools, "encoded">>
type StreamContent = AiResponse.StreamPart<Convert.Tools, "encoded">

/** The whole response of `effect/ai` parts. */
const fromContent = (content: Content): LanguageModel.Response => {
  const parts: Array<Messages.Part> = []
  const metadata = new Convert.MetadataBuilder()
  let finish: AiResponse.FinishPart | undefined
  for (const part of content) {
    switch (part.type) {
      case "text":
        parts.push(Messages.text(part.text))
        break
      case "reasoning":
        parts.push({
          _tag: "Reasoning",
          text: part.text,
          ...(Object.keys(part.metadata).length === 0 ? {} : { providerMetadata: part.metadata })
        })
        break
      case "tool-call":
        if (part.providerExecuted) break
        metadata.toolCall(part.id, part.metadata)
        parts.push(Messages.toolCall({ id: part.id, name: part.name, arguments: JSON.stringify(part.params) ?? "null" }))
        break
      case "file":
        parts.push(Convert.fromFile(part))
        break
      case "response-metadata":
        metadata.responseMetadata(part)
        break
      case "finish":
        finish = part
        metadata.finished(part.metadata)
        break
    }
  }
  const providerMetadata = metadata.build()
  return {
    parts,
    usage: finish === undefined ? LanguageModel.noUsage : Convert.usage(finish.usage),
    finishReason: finish !== undefined
      ? Convert.finishReason(finish.reason)
      : parts.some((part) => part._tag === "ToolCall")
      ? "tool-calls"
      : "stop",
    ...(providerMetadata === undefined ? {} : { providerMetadata })
  }
}

/** Turns streamed `effect/ai` parts into chat-ts stream parts (state: one per stream). */
const streamConverter = () => {
  const metadata = new Convert.MetadataBuilder()
  const streamedCalls = new Set<string>()
  let textStart = false
  let reasoningStart = false
  const withMetadata = (value: { readonly [key: string]: unknown }) =>
    Object.keys(value).length === 0 ? {} : { providerMetadata: value }
  return (part: StreamContent): Effect.Effect<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError> => {
    switch (part.type) {
      case "text-start":
        textStart = true
        return Effect.succeed([])
      case "text-delta": {
        const start = textStart
        textStart = false
        return Effect.succeed([{ _tag: "TextDelta", text: part.delta, ...(start ? { start } : {}) }])
      }
      case "reasoning-start":
        reasoningStart = Object.keys(part.metadata).length === 0
        return Effect.succeed(
          reasoningStart ? [] : [{ _tag: "ReasoningDelta", text: "", start: true, ...withMetadata(part.metadata) }]
        )
      case "reasoning-delta": {
        const start = reasoningStart
        reasoningStart = false
        return Effect.succeed([{
          _tag: "ReasoningDelta",
          text: part.delta,
          ...(start ? { start } : {}),
          ...withMetadata(part.metadata)
        }])
      }
      case "reasoning-end":
        return Effect.succeed(
          Object.keys(part.metadata).length === 0 ? [] : [{ _tag: "ReasoningDelta", text: "", ...withMetadata(part.metadata) }]
        )
      case "tool-params-start":
        if (part.providerExecuted) return Effect.succeed([])
        streamedCalls.add(part.id)
        return Effect.succeed([{ _tag: "ToolCallStart", id: part.id, name: part.name }])
      case "tool-params-delta":
        return Effect.succeed(streamedCalls.has(part.id) ? [{ _tag: "ToolCallDelta", id: part.id, argumentsDelta: part.delta }] : [])
      case "tool-call": {
        if (part.providerExecuted) return Effect.succeed([])
        metadata.toolCall(part.id, part.metadata)
        return Effect.succeed(
          streamedCalls.has(part.id) ? [] : [
            { _tag: "ToolCallStart", id: part.id, name: part.name },
            { _tag: "ToolCallDelta", id: part.id, argumentsDelta: JSON.stringify(part.params) ?? "null" }
          ]
        )
      }
      case "file":
        return Effect.succeed([{ _tag: "Part", part: Convert.fromFile(part) }])
      case "response-metadata":
        metadata.responseMetadata(part)
        return Effect.succeed([])
      case "finish": {
        metadata.finished(part.metadata)
        const providerMetadata = metadata.build()
        return Effect.succeed([{
          _tag: "Finish",
          usage: Convert.usage(part.usage),
          finishReason: Convert.finishReason(part.reason),
          ...(providerMetadata === undefined ? {} : { providerMetadata })
        }])
      }
      case "error":
        return Effect.fail(Errors.fromErrorPart(part.error))
      default:
        return Effect.succeed([])
    }
  }
}

const isObject = (input: unknown): boolean => typeof input === "object" && input !== null && !Array.isArray(input)

/**
 * The schema `generateObject` asks for: any JSON object (chat-ts decodes the
 * answer with the turn's own Schema), whose JSON Schema is the requested one
 * (a JSON value has none of its own: the filter's is the whole of it).
 */
const objectSchema = (format: LanguageModel.ResponseFormat) => {
  const jsonSchema = format.description === undefined || "description" in format.schema
    ? format.schema
    : { ...format.schema, description: format.description }
  // The filter lets only JSON objects through, so the Json codec is one of objects.
  return Schema.Json.check(
    Schema.makeFilter((input) => isObject(input) ? undefined : "Expected a JSON object", { toJsonSchema: () => jsonSchema })
  ) as Schema.Codec<{ readonly [key: string]: Schema.Json }>
}

/** Builds the bridge over the `effect/ai` model in context. */
export const make = (options: Options = {}): Effect.Effect<LanguageModel.Service, never, AiLanguageModel.LanguageModel> =>
  Effect.map(AiLanguageModel.LanguageModel, (ai) => {
    const contextOf = (request: LanguageModel.Request) =>
      options.requestContext === undefined ? Context.empty() : options.requestContext(request.options)

    // Always a toolkit (an empty one without tools), its calls never resolved by effect/ai: chat-ts runs them.
    const textOptions = (request: LanguageModel.Request) => {
      const toolChoice = request.options.toolChoice
      return {
        prompt: Convert.toPrompt(request.messages),
        toolkit: Convert.toToolkit(request.tools),
        disableToolCallResolution: true as const,
        ...(toolChoice === undefined ? {} : { toolChoice })
      }
    }

    const idle = options.idleTimeout ?? defaultIdleTimeout
    const stalled = (d: Duration.Input) =>
      new ChatError.NetworkError({
        message: `The model's stream sent nothing for ${Duration.format(Duration.fromInputUnsafe(d))} (idleTimeout) and was stopped.`
      })

    const mapError = <A>(effect: Effect.Effect<A, AiError.AiError>) => Effect.catch(effect, (error) => Effect.flip(toModelError(error)))

    const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> => {
      const format = request.options.responseFormat
      const call: Effect.Effect<{ readonly content: Content }, AiError.AiError> = format === undefined
        ? ai.generateText(textOptions(request))
        : ai.generateObject({ ...textOptions(request), schema: objectSchema(format), objectName: format.name })
      const extra = contextOf(request)
      return mapError(call).pipe(
        Effect.map((response) => fromContent(response.content)),
        Effect.updateContext((context: Context.Context<never>) => Context.merge(context, extra))
      )
    }

    const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
      // effect/ai streams text only: a structured answer is asked for whole, then streamed as its parts.
      if (request.options.responseFormat !== undefined) {
        return Stream.flatMap(Stream.fromEffect(generate(request)), LanguageModel.toStreamParts)
      }
      const extra = contextOf(request)
      return Stream.suspend(() => {
        const convert = streamConverter()
        const parts: Stream.Stream<StreamContent, AiError.AiError> = ai.streamText(textOptions(request))
        return parts.pipe(
          Stream.catch((error) => Stream.fromEffect(Effect.flip(toModelError(error)))),
          (typed) => idle === false ? typed : Stream.timeoutOrElse(typed, { duration: idle, orElse: () => Stream.fail(stalled(idle)) }),
          Stream.mapEffect(convert),
          Stream.flattenIterable,
          Stream.updateContext((context: Context.Context<never>) => Context.merge(context, extra))
        )
      })
    }

    return LanguageModel.make({ generate, stream })
  })

/** A layer providing chat-ts's `LanguageModel` over the `effect/ai` `LanguageModel` in context. */
export const layer = (options: Options = {}): Layer.Layer<LanguageModel.LanguageModel, never, AiLanguageModel.LanguageModel> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
