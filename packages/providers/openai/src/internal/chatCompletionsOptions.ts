/**
 * The settings of `OpenAiChatCompletions`, in a module of their own so the
 * wire mapping (`chatCompletions.ts`) reads them without importing the public
 * module that imports it. Re-exported as `OpenAiChatCompletions.Options`.
 *
 * @internal
 */
import type { LanguageModel, ProviderRetry } from "@chat-ts/core"
import type * as Duration from "effect/Duration"

/** Settings of the model; a request's own options take precedence over these. */
export interface Options {
  /** The model id, e.g. `gpt-5.6-luna` (`OpenAiDefaults.chatModel`), or the compatible server's model name. */
  readonly model: string
  /** Sampling temperature. */
  readonly temperature?: number
  /** The most tokens the response may use. */
  readonly maxTokens?: number
  /** Which body field carries `maxTokens` (default `max_completion_tokens`; some compatible servers only know `max_tokens`). */
  readonly maxTokensParameter?: "max_completion_tokens" | "max_tokens"
  /** Nucleus sampling. */
  readonly topP?: number
  /** Sampling seed. */
  readonly seed?: number
  /** Stop sequences. */
  readonly stop?: ReadonlyArray<string>
  /** Reasoning effort, for reasoning models. */
  readonly reasoningEffort?: "minimal" | "low" | "medium" | "high"
  /** How the model may use tools (sent only when tools are declared). */
  readonly toolChoice?: LanguageModel.ToolChoice
  /** Whether the model may call several tools at once (sent only when tools are declared). */
  readonly parallelToolCalls?: boolean
  /** An end-user id, for the provider's abuse monitoring. */
  readonly user?: string
  /**
   * Ask for usage at the end of a stream (`stream_options: { include_usage: true }`,
   * default `true`); `false` sends no `stream_options` (older vLLM and
   * Fireworks answer 400 to it). `providerOptions.stream_options` wins over both.
   */
  readonly streamUsage?: boolean
  /** `false`: never ask for strict mode, whatever the declarations say: no `strict` field is sent at all (some compatible servers refuse it). */
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
