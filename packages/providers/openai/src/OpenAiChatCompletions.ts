/**
 * The core `LanguageModel` on OpenAI's Chat Completions API
 * (POST /chat/completions), also spoken by most OpenAI-compatible servers.
 *
 * Tool calls and their results reach the wire through the shared projection
 * `Messages.projectToolCall`: an assistant message with `tool_calls`, then one
 * `tool` message per answered call carrying the result text.
 *
 * @since 0.1.0
 */
import type { ChatError } from "@chat-ts/core"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderRetry from "@chat-ts/core/ProviderRetry"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Internal from "./internal/chatCompletions.js"
import type { Options } from "./internal/chatCompletionsOptions.js"
import * as Timeouts from "./internal/timeouts.js"
import { OpenAiClient } from "./OpenAiClient.js"

/** Settings of the model; a request's own options take precedence over these. */
export type { Options } from "./internal/chatCompletionsOptions.js"

/** Builds the model on the `OpenAiClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, OpenAiClient> =>
  OpenAiClient.useSync((client) => {
    const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
      Effect.flatMap(Effect.fromResult(Internal.toBody(request, options)), (body) =>
        ProviderRetry.withRetry(client.createChatCompletion({ ...body, stream: false }), options.retry).pipe(
          (attempts) => ProviderStream.withTotalTimeout(attempts, Timeouts.call(options)),
          Effect.flatMap((completion) => Effect.fromResult(Internal.fromCompletion(completion, client.redact)))
        ))

    // Not `Stream.unwrap`: the stream of `decodeEvents` itself is returned, so that `chat.events` can read
    // the SDK's iterator directly (see `ProviderStream.decodeEvents`).
    const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
      const body = Internal.toBody(request, options)
      if (Result.isFailure(body)) return Stream.fail(body.failure)
      return ProviderStream.decodeEvents(
        client.streamChatCompletion({
          ...(options.streamUsage === false ? {} : { stream_options: { include_usage: true } }),
          ...body.success,
          stream: true
        }),
        options.retry,
        () => new Internal.StreamState(client.redact),
        Timeouts.stream(options)
      )
    }

    return LanguageModel.make({ generate, stream })
  })

/** A layer providing `LanguageModel.LanguageModel` on Chat Completions; requires `OpenAiClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, OpenAiClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
