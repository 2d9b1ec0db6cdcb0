/**
 * The core `LanguageModel` on Gemini's generateContent
 * (POST models/{model}:generateContent and :streamGenerateContent).
 *
 * Tool calls travel as `functionCall` parts of the model's content, their
 * results as `functionResponse` parts of the next user content, through the
 * shared projection `Messages.projectToolCall`: edited arguments replace the
 * model's, a failed or rejected call answers `{ error }` with the reason, a
 * completed one `{ output }`. Thought signatures are kept and sent back
 * unchanged. A response cut by a safety filter ends with finish reason
 * `content-filter`; a prompt Gemini refuses to answer at all fails with
 * `ChatError.InvalidRequest` (its `code` is the block reason).
 *
 * @since 0.1.0
 */
import { type ChatError, LanguageModel, ProviderRetry, ProviderStream } from "@chat-ts/core"
import type { SafetySetting } from "@google/genai"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { GoogleClient } from "./GoogleClient.js"
import * as Wire from "./internal/wire.js"

/** How the model may call functions (Gemini's `functionCallingConfig`). */
export interface FunctionCalling {
  /** `auto` (the model decides), `any` (it must call one), `none`, or `validated` (calls or text, always schema-valid). */
  readonly mode?: "auto" | "any" | "none" | "validated"
  /** With `any` or `validated`: the functions it may call. */
  readonly allowedFunctionNames?: ReadonlyArray<string>
}

/** Gemini's thinking settings. */
export interface Thinking {
  /** Tokens the model may think with (Gemini 2.5; `0` turns thinking off where allowed, `-1` lets the model decide). */
  readonly budget?: number
  /** Whether the response carries thought summaries (as `Reasoning` parts). */
  readonly includeThoughts?: boolean
  /** The thinking level (Gemini 3); a request's `reasoningEffort` is sent as the level when this and `budget` are unset. */
  readonly level?: "minimal" | "low" | "medium" | "high"
}

/** Settings of the model; a request's own options take precedence over these. */
export interface Options {
  /** The model id, e.g. `gemini-2.5-flash`. */
  readonly model: string
  /** Sampling temperature. */
  readonly temperature?: number
  /** The most tokens the response may use (`maxOutputTokens`). */
  readonly maxTokens?: number
  /** Nucleus sampling. */
  readonly topP?: number
  /** Top-k sampling. */
  readonly topK?: number
  /** Sampling seed. */
  readonly seed?: number
  /** Stop sequences. */
  readonly stop?: ReadonlyArray<string>
  /** Thinking budget, level and whether thoughts are returned. */
  readonly thinking?: Thinking
  /** How the model may use tools (sent only when tools are declared). */
  readonly toolChoice?: LanguageModel.ToolChoice
  /** Gemini's function-calling mode and allowed names; wins over `toolChoice` (sent only when tools are declared). */
  readonly functionCalling?: FunctionCalling
  /** Safety thresholds per harm category, sent as `safetySettings`. */
  readonly safetySettings?: ReadonlyArray<SafetySetting>
  /**
   * How tool parameters and structured output schemas are sent: `openapi`
   * (default) rewrites them to Gemini's schema subset (`parameters`,
   * `responseSchema`, see `GoogleSchema`); `json-schema` sends them as they are
   * (`parametersJsonSchema`, `responseJsonSchema`, for models that take JSON Schema).
   */
  readonly schemas?: "openapi" | "json-schema"
  /** The retry policy (default `Retry.defaultPolicy`); `false` disables retries. */
  readonly retry?: ProviderRetry.Policy
  /** The longest wait between two events of a stream, and for the first (default 5 minutes; `false`: no limit). */
  readonly idleTimeout?: Duration.DurationInput | false
  /** The longest one call may take, streamed or not, retries included (default: no limit). */
  readonly totalTimeout?: Duration.DurationInput
}

/** Builds the model on the `GoogleClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, GoogleClient> =>
  Effect.map(GoogleClient, (client) => {
    const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
      Effect.flatMap(Wire.toParams(request, options), (params) =>
        ProviderRetry.withRetry(client.generateContent(params), options.retry).pipe(
          (attempts) => ProviderStream.withTotalTimeout(attempts, options),
          Effect.flatMap((response) => Wire.fromResponse(response, client.redact))
        ))

    const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> =>
      Stream.unwrap(Effect.map(Wire.toParams(request, options), (params) =>
        ProviderStream.decodeStream(
          client.streamGenerateContent(params),
          options.retry,
          () => new Wire.StreamState(client.redact),
          (chunks, state) => Stream.mapConcat(chunks, (chunk) => state.push(chunk)),
          options
        )))

    return LanguageModel.make({ generate, stream })
  })

/** A layer providing `LanguageModel.LanguageModel` on Gemini; requires `GoogleClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, GoogleClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
