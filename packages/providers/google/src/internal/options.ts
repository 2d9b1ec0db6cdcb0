/**
 * The settings of `GoogleLanguageModel`, in a module of their own so the wire
 * mapping (`wire.ts`) reads them without importing the public module that
 * imports it. Re-exported as `GoogleLanguageModel.Options`, `Thinking` and
 * `FunctionCalling`.
 *
 * @internal
 */
import type { LanguageModel, ProviderRetry } from "@chat-ts/core"
import type { SafetySetting } from "@google/genai"
import type * as Duration from "effect/Duration"

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
  /** The model id, e.g. `gemini-3.8-flash` (`GoogleDefaults.model`). */
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
  /**
   * The longest wait between two events of a stream, and for the first
   * (default `GoogleDefaults.idleTimeout`, 5 minutes; `false`: no limit).
   * Past it the stream fails with a `NetworkError`.
   */
  readonly idleTimeout?: Duration.Input | false
  /**
   * The longest one call may take, retries included; past it a `NetworkError`
   * and the request is aborted. Default: `GoogleDefaults.totalTimeout` (10
   * minutes) for `generate`, no limit for `stream` (whose `idleTimeout`
   * bounds every wait); `false`: no limit.
   */
  readonly totalTimeout?: Duration.Input | false
}
