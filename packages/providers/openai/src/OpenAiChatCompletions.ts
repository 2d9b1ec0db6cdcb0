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
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Internal from "./internal/chatCompletions.js"
import type { Options } from "./internal/chatCompletionsOptions.js"
import { OpenAiClient } from "./OpenAiClient.js"
import * as Defaults from "./OpenAiDefaults.js"

/** Settings of the model; a request's own options take precedence over these. */
export type { Options } from "./internal/chatCompletionsOptions.js"

/** Builds the model on the `OpenAiClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, OpenAiClient> =>
  OpenAiClient.useSync((client) =>
    ProviderStream.languageModel({
      toBody: (request) => Internal.toBody(request, options),
      call: (body) => client.createChatCompletion({ ...body, stream: false }),
      decode: (completion) => Internal.fromCompletion(completion, client.redact),
      open: (body) =>
        client.streamChatCompletion({
          ...(options.streamUsage === false ? {} : { stream_options: { include_usage: true } }),
          ...body,
          stream: true
        }),
      decoder: () => new Internal.StreamState(client.redact),
      options,
      defaults: Defaults
    })
  )

/** A layer providing `LanguageModel.LanguageModel` on Chat Completions; requires `OpenAiClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, OpenAiClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
