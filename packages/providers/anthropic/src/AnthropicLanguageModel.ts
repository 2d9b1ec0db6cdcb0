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
import type { ChatError } from "@chat-ts/core"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderRetry from "@chat-ts/core/ProviderRetry"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { AnthropicClient } from "./AnthropicClient.js"
import * as Internal from "./internal/messages.js"
import type { Options } from "./internal/options.js"
import * as Timeouts from "./internal/timeouts.js"

/** Extended thinking: a token budget (at least 1024, below `maxTokens`), or `adaptive` (the model decides). */
export type { Thinking } from "./internal/options.js"

/** Prompt caching: a `cache_control` breakpoint on the system prompt and on the tools. */
export type { PromptCaching } from "./internal/options.js"

/** Settings of the model; a request's own options take precedence over these. */
export type { Options } from "./internal/options.js"

/** Builds the model on the `AnthropicClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, AnthropicClient> =>
  AnthropicClient.useSync((client) => {
    const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
      Effect.flatMap(Effect.fromResult(Internal.toBody(request, options)), ({ body, notSent, structuredTool }) =>
        ProviderRetry.withRetry(client.createMessage({ ...body, stream: false }), options.retry).pipe(
          (attempts) => ProviderStream.withTotalTimeout(attempts, Timeouts.call(options)),
          (call) => notSent === undefined ? call : Effect.andThen(Effect.logWarning(notSent), call),
          Effect.flatMap((message) => Effect.fromResult(Internal.fromMessage(message, structuredTool)))
        ))

    // The stream of `decodeEvents` itself (no `Stream.unwrap`), so that `chat.events` reads the SDK's iterator.
    const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
      const made = Internal.toBody(request, options)
      if (Result.isFailure(made)) return Stream.fail(made.failure)
      const { body, notSent, structuredTool } = made.success
      // Warned once per call, not once per attempt.
      let warned = notSent === undefined
      const warning = Effect.suspend(() => warned ? Effect.void : (warned = true, Effect.logWarning(notSent)))
      return ProviderStream.decodeEvents(
        Effect.andThen(warning, client.streamMessage({ ...body, stream: true })),
        options.retry,
        () => new Internal.StreamState(structuredTool, client.redact),
        Timeouts.stream(options)
      )
    }

    return LanguageModel.make({ generate, stream })
  })

/** A layer providing `LanguageModel.LanguageModel` on the Messages API; requires `AnthropicClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, AnthropicClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
