/**
 * The `@anthropic-ai/sdk` client as an Effect service.
 *
 * Every call runs through `Effect.tryPromise` with the fiber's `AbortSignal`,
 * so interrupting the fiber aborts the HTTP request; streams abort their
 * request when their scope closes. Failures are mapped to the core's typed
 * `ChatError.ModelError`s with the API key redacted. The SDK's own retries are
 * off (`maxRetries: 0`): the model layer retries with an Effect `Schedule`.
 * The SDK never reads the environment or credential files here: the key, base
 * URL and headers come from the options only.
 *
 * @since 0.1.0
 */
import Anthropic from "@anthropic-ai/sdk"
import type {
  Message,
  MessageCreateParamsNonStreaming,
  MessageCreateParamsStreaming,
  RawMessageStreamEvent
} from "@anthropic-ai/sdk/resources/messages"
import * as ChatError from "@chat-ts/core/ChatError"
import * as ProviderCall from "@chat-ts/core/ProviderCall"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Errors from "./internal/errors.js"

/** The default base URL: the Anthropic API. */
export const defaultBaseURL = "https://api.anthropic.com"

/** The longest wait for a non-streamed response's headers unless `timeout` says otherwise (the SDK's 10 minutes; given, so the SDK does not refuse a large `max_tokens`). */
const defaultTimeout = 600_000

/** Settings of the client. */
export interface Options {
  /** The API key (`x-api-key` header). */
  readonly apiKey: Redacted.Redacted<string>
  /** The API's base URL (default `https://api.anthropic.com`; requests go to `<baseURL>/v1/messages`). */
  readonly baseURL?: string | undefined
  /** Extra headers sent with every request (e.g. `anthropic-beta`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * The longest wait, in milliseconds, for one HTTP response's headers
   * (default 10 minutes, the SDK's). The body is bounded by the model layer's
   * `totalTimeout` and `idleTimeout` (see `AnthropicDefaults`).
   */
  readonly timeout?: number | undefined
}

/** The client service: the SDK client and Effect-shaped calls (`request`, `openStream`: core's `ProviderCall.Client`). */
export interface Service extends ProviderCall.Client<Anthropic> {
  /** POST /v1/messages. */
  readonly createMessage: (body: MessageCreateParamsNonStreaming) => Effect.Effect<Message, ChatError.ModelError>
  /** POST /v1/messages with `stream: true`. */
  readonly streamMessage: (
    body: MessageCreateParamsStreaming
  ) => Effect.Effect<Stream.Stream<RawMessageStreamEvent, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>
}

/** The Anthropic API client in use. */
export class AnthropicClient extends Context.Service<AnthropicClient, Service>()("@chat-ts/anthropic/AnthropicClient") {}

/** Builds the client service from `options` only. */
export const make = (options: Options): Effect.Effect<Service> =>
  Effect.sync(() => {
    const key = Redacted.value(options.apiKey)
    const baseURL = options.baseURL ?? defaultBaseURL
    const timeout = options.timeout ?? defaultTimeout
    const sdk = new Anthropic({
      apiKey: key,
      authToken: null,
      baseURL,
      maxRetries: 0,
      timeout,
      ...(options.headers === undefined ? {} : { defaultHeaders: { ...options.headers } })
    })
    const redact = Errors.makeRedactor([key])
    const toError: ProviderCall.ToError = (error, now) => Errors.fromUnknown(error, { redact, now })

    const client = ProviderCall.makeClient({ sdk, baseURL, redact, toError, server: "Anthropic's server" })
    const { request, openStream } = client

    return {
      ...client,
      createMessage: (body) => request((client, signal) => client.messages.create(body, { signal, timeout })),
      streamMessage: (body) => openStream((client, signal) => client.messages.create(body, { signal }))
    }
  })

/** A layer providing the client built from `options`. */
export const layer = (options: Options): Layer.Layer<AnthropicClient> => Layer.effect(AnthropicClient, make(options))

/**
 * A layer reading its settings from the configuration: `ANTHROPIC_API_KEY`
 * (required, read as a redacted secret) and optionally `ANTHROPIC_BASE_URL`.
 * `overrides` take precedence.
 */
export const layerConfig = (
  overrides: Partial<Options> = {}
): Layer.Layer<AnthropicClient, Config.ConfigError> =>
  Layer.effect(
    AnthropicClient,
    Effect.gen(function*() {
      const apiKey = yield* Config.Redacted("ANTHROPIC_API_KEY")
      const baseURL = yield* Config.option(Config.String("ANTHROPIC_BASE_URL"))
      return yield* make({
        apiKey: overrides.apiKey ?? apiKey,
        baseURL: overrides.baseURL ?? Option.getOrUndefined(baseURL),
        headers: overrides.headers,
        timeout: overrides.timeout
      })
    })
  )
