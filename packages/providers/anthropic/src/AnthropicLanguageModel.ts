/**
 * The core `LanguageModel` on Anthropic's Messages API (POST /v1/messages).
 *
 * Tool calls reach the wire through the shared projection
 * `Messages.projectToolCall`: a response's calls are `tool_use` blocks of its
 * assistant message, and their answers are `tool_result` blocks of one user
 * message right after it (a rejected or failed call is a `tool_result` with
 * `is_error: true` and the reason). Thinking blocks come back as Reasoning
 * parts with their signatures and go back unchanged, redacted thinking too.
 *
 * @since 0.1.0
 */
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AnthropicClient } from "./AnthropicClient.js"
import * as Defaults from "./AnthropicDefaults.js"
import * as Internal from "./internal/messages.js"
import type { Options } from "./internal/options.js"

/** Extended thinking: a token budget (at least 1024, below `maxTokens`), or `adaptive` (the model decides). */
export type { Thinking } from "./internal/options.js"

/** Prompt caching: a `cache_control` breakpoint on the system prompt and on the tools. */
export type { PromptCaching } from "./internal/options.js"

/** Settings of the model; a request's own options take precedence over these. */
export type { Options } from "./internal/options.js"

/** Builds the model on the `AnthropicClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, AnthropicClient> =>
  AnthropicClient.useSync((client) =>
    ProviderStream.languageModel({
      toBody: (request) => Internal.toBody(request, options),
      warning: ({ notSent }) => notSent,
      call: ({ body }) => client.createMessage({ ...body, stream: false }),
      decode: (message, { structuredTool }) => Internal.fromMessage(message, structuredTool),
      open: ({ body }) => client.streamMessage({ ...body, stream: true }),
      decoder: ({ structuredTool }) => new Internal.StreamState(structuredTool, client.redact),
      options,
      defaults: Defaults
    })
  )

/** A layer providing `LanguageModel.LanguageModel` on the Messages API; requires `AnthropicClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, AnthropicClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
