/**
 * The settings of `OpenAiResponses`, in a module of their own so the wire
 * mapping (`responses.ts`) reads them without importing the public module
 * that imports it. Re-exported as `OpenAiResponses.Options`.
 *
 * @internal
 */
import type { LanguageModel, ProviderRetry } from "@chat-ts/core"
import type * as Duration from "effect/Duration"

/** Settings of the model; a request's own options take precedence over these. */
export interface Options {
  /** The model id, e.g. `gpt-5.6-luna` (`OpenAiDefaults.chatModel`). */
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
   * (default `OpenAiDefaults.idleTimeout`, 5 minutes; `false`: no limit). Past
   * it the stream fails with a `NetworkError`. The client's `timeout` only
   * covers the wait for the headers.
   */
  readonly idleTimeout?: Duration.Input | false
  /**
   * The longest one call may take, retries included; past it a `NetworkError`
   * and the request is aborted. Default: `OpenAiDefaults.totalTimeout` (10
   * minutes) for `generate`, no limit for `stream` (whose `idleTimeout`
   * bounds every wait); `false`: no limit.
   */
  readonly totalTimeout?: Duration.Input | false
}
