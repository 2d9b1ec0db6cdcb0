/**
 * The core `LanguageModel` on OpenAI's Responses API (POST /responses).
 *
 * Stateless by default: the whole conversation is sent with `store: false`,
 * and a reasoning model's reasoning comes back encrypted
 * (`include: ["reasoning.encrypted_content"]`) so it can be sent back on the
 * next call; a Reasoning part keeps the
 * encrypted content as its `signature` and the item id in its
 * `providerMetadata`. With `previousResponseId: true` responses are stored and
 * chained: only what follows the last response is sent, and the response id
 * lives in the assistant message's `providerMetadata.openai.responseId`.
 *
 * Tool calls are `function_call` items and their results `function_call_output`
 * items, both through the shared projection `Messages.projectToolCall`.
 *
 * @since 0.1.0
 */
import { type ChatError, LanguageModel, ProviderRetry, ProviderStream } from "@chat-ts/core"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Internal from "./internal/responses.js"
import { OpenAiClient } from "./OpenAiClient.js"

/** Settings of the model; a request's own options take precedence over these. */
export interface Options {
  /** The model id, e.g. `gpt-5-mini`. */
  readonly model: string
  /** Sampling temperature. */
  readonly temperature?: number
  /** The most output tokens (`max_output_tokens`). */
  readonly maxTokens?: number
  /** Nucleus sampling. */
  readonly topP?: number
  /** Reasoning effort, for reasoning models. */
  readonly reasoningEffort?: "minimal" | "low" | "medium" | "high"
  /** Ask reasoning models for a summary of their reasoning. */
  readonly reasoningSummary?: "auto" | "concise" | "detailed"
  /** How the model may use tools (sent only when tools are declared). */
  readonly toolChoice?: LanguageModel.ToolChoice
  /** Whether the model may call several tools at once (sent only when tools are declared). */
  readonly parallelToolCalls?: boolean
  /** Store responses on OpenAI's side (default `false`). */
  readonly store?: boolean
  /**
   * Chain calls with `previous_response_id` (implies `store: true`): only the
   * messages after the last stored response are sent.
   */
  readonly previousResponseId?: boolean
  /**
   * When not storing, ask for reasoning's encrypted content so it can be sent
   * back. Default: only for reasoning models (reasoning effort or summary
   * asked for, or an `o1`/`o3`/`o4…`, `gpt-5` but not `gpt-5-chat`, or
   * `codex` model id), since other models answer 400 to it; set it for a
   * reasoning model behind another name (an Azure deployment).
   */
  readonly includeEncryptedReasoning?: boolean
  /** An end-user id, for the provider's abuse monitoring. */
  readonly user?: string
  /** `false`: never ask for strict mode, whatever the declarations say: tools and the response format are sent with `strict: false`. */
  readonly strict?: boolean
  /** The retry policy (default `Retry.defaultPolicy`); `false` disables retries. */
  readonly retry?: ProviderRetry.Policy
  /**
   * The longest wait between two events of a stream, and for the first
   * (default 5 minutes; `false`: no limit). Past it the stream fails with a
   * `NetworkError`. The client's `timeout` only covers the wait for the headers.
   */
  readonly idleTimeout?: Duration.DurationInput | false
  /** The longest one call may take, streamed or not, retries included (default: no limit); past it a `NetworkError`. */
  readonly totalTimeout?: Duration.DurationInput
}

/** Builds the model on the `OpenAiClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, OpenAiClient> =>
  Effect.map(OpenAiClient, (client) => {
    const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
      Effect.flatMap(Internal.toBody(request, options), (body) =>
        ProviderRetry.withRetry(client.createResponse({ ...body, stream: false }), options.retry).pipe(
          (attempts) => ProviderStream.withTotalTimeout(attempts, options),
          Effect.flatMap((response) => Internal.fromResponse(response, client.redact))
        ))

    const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> =>
      Stream.unwrap(Effect.map(Internal.toBody(request, options), (body) =>
        ProviderStream.decodeStream(
          client.streamResponse({ ...body, stream: true }),
          options.retry,
          () => new Internal.StreamState(client.redact),
          (events, state) => Stream.mapConcatEffect(events, (event) => state.push(event)),
          options
        )))

    return LanguageModel.make({ generate, stream })
  })

/** A layer providing `LanguageModel.LanguageModel` on the Responses API; requires `OpenAiClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, OpenAiClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
