/**
 * The settings of `AnthropicLanguageModel`, in a module of their own so the
 * wire mapping (`messages.ts`) reads them without importing the public module
 * that imports it. Re-exported as `AnthropicLanguageModel.Options`,
 * `Thinking` and `PromptCaching`.
 *
 * @internal
 */
import type { LanguageModel, ProviderRetry } from "@chat-ts/core"
import type * as Duration from "effect/Duration"

/** Extended thinking: a token budget (at least 1024, below `maxTokens`), or `adaptive` (the model decides). */
export type Thinking =
  | { readonly type: "enabled"; readonly budgetTokens: number }
  | { readonly type: "adaptive" }

/** Prompt caching: a `cache_control` breakpoint on the system prompt and on the tools. */
export interface PromptCaching {
  /** How long the cache lives (default `5m`, the API's default). */
  readonly ttl?: "5m" | "1h"
}

/** Settings of the model; a request's own options take precedence over these. */
export interface Options {
  /** The model id, e.g. `claude-sonnet-5-5` (`AnthropicDefaults.model`). */
  readonly model: string
  /** The most tokens the response may use (`max_tokens`, required by the API; default 4096, or the thinking budget + 4096). */
  readonly maxTokens?: number
  /**
   * Not an option: the Messages API of version `2026-10-21` (the one
   * `@anthropic-ai/sdk` 1.x sends) refuses `temperature`, `top_p` and `top_k`
   * with a 400, even at their defaults. Setting one is a compile error; set
   * anyway (JavaScript, a cast), every call fails with `InvalidRequest` before
   * anything is sent. `providerOptions` are sent as given, for an endpoint
   * that still takes them.
   */
  readonly temperature?: never
  /** Not an option: refused by the API like `temperature`. */
  readonly topP?: never
  /** Not an option: refused by the API like `temperature`. */
  readonly topK?: never
  /** Stop sequences (`stop_sequences`). */
  readonly stop?: ReadonlyArray<string>
  /** Extended thinking (default: off). */
  readonly thinking?: Thinking
  /** How the model may use tools (sent only when tools are declared). */
  readonly toolChoice?: LanguageModel.ToolChoice
  /** `false`: at most one tool call per response (`disable_parallel_tool_use`). */
  readonly parallelToolCalls?: boolean
  /** `true`: strict declarations are sent with `strict: true` (for models with structured outputs). Default off. */
  readonly strictTools?: boolean
  /**
   * How structured output (`responseFormat`) is asked for: `tool` (a forced
   * tool whose input is the answer; every model) or `native`
   * (`output_config.format`, on models with structured outputs). Default:
   * `native` while thinking is on (the API refuses a forced tool then), else `tool`.
   */
  readonly structuredOutput?: "tool" | "native"
  /** Prompt caching: `cache_control` on the system prompt and the tools (default off). */
  readonly promptCaching?: boolean | PromptCaching
  /** An end-user id (`metadata.user_id`), for the provider's abuse monitoring. */
  readonly user?: string
  /** The retry policy (default `Retry.defaultPolicy`); `false` disables retries. */
  readonly retry?: ProviderRetry.Policy
  /**
   * The longest wait between two events of a stream, and for the first
   * (default `AnthropicDefaults.idleTimeout`, 5 minutes; `false`: no limit).
   * Past it the stream fails with a `NetworkError`.
   */
  readonly idleTimeout?: Duration.Input | false
  /**
   * The longest one call may take, retries included; past it a `NetworkError`
   * and the request is aborted. Default: `AnthropicDefaults.totalTimeout` (10
   * minutes) for `generate`, no limit for `stream` (whose `idleTimeout`
   * bounds every wait); `false`: no limit.
   */
  readonly totalTimeout?: Duration.Input | false
}
