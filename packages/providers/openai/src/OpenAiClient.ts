/**
 * The `openai` SDK client as an Effect service.
 *
 * Every call runs through `Effect.tryPromise` with the fiber's `AbortSignal`,
 * so interrupting the fiber aborts the HTTP request; streams abort their
 * request when their scope closes (the consumer stopped or was interrupted).
 * Failures are mapped to the core's typed `ChatError.ModelError`s, with the API
 * key redacted from every message. The SDK's own retries are off
 * (`maxRetries: 0`): the model layers retry with an Effect `Schedule`.
 *
 * @since 0.1.0
 */
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
import OpenAI from "openai"
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming
} from "openai/resources/chat/completions"
import type { CreateEmbeddingResponse, EmbeddingCreateParams } from "openai/resources/embeddings"
import type {
  Response,
  ResponseCreateParamsNonStreaming,
  ResponseCreateParamsStreaming,
  ResponseStreamEvent
} from "openai/resources/responses/responses"
import * as Errors from "./internal/errors.js"

/** The default base URL: the OpenAI API. */
export const defaultBaseURL = "https://api.openai.com/v1"

/** Settings of the client. */
export interface Options {
  /** The API key. Without one, no `Authorization` header is sent (for local OpenAI-compatible servers). */
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /** The API's base URL (default `https://api.openai.com/v1`). */
  readonly baseURL?: string | undefined
  /** The OpenAI organization id (`OpenAI-Organization` header). */
  readonly organization?: string | undefined
  /** The OpenAI project id (`OpenAI-Project` header). */
  readonly project?: string | undefined
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * The longest wait, in milliseconds, for one HTTP response's headers (the
   * SDK's default: 10 minutes). The body is bounded by the model layers'
   * `totalTimeout` and `idleTimeout` (see `OpenAiDefaults`).
   */
  readonly timeout?: number | undefined
}

/** The client service: the SDK client and Effect-shaped calls (`request`, `openStream`: core's `ProviderCall.Client`). */
export interface Service extends ProviderCall.Client<OpenAI> {
  /** POST /chat/completions. */
  readonly createChatCompletion: (body: ChatCompletionCreateParamsNonStreaming) => Effect.Effect<ChatCompletion, ChatError.ModelError>
  /** POST /chat/completions with `stream: true`. */
  readonly streamChatCompletion: (
    body: ChatCompletionCreateParamsStreaming
  ) => Effect.Effect<Stream.Stream<ChatCompletionChunk, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>
  /** POST /responses. */
  readonly createResponse: (body: ResponseCreateParamsNonStreaming) => Effect.Effect<Response, ChatError.ModelError>
  /** POST /responses with `stream: true`. */
  readonly streamResponse: (
    body: ResponseCreateParamsStreaming
  ) => Effect.Effect<Stream.Stream<ResponseStreamEvent, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>
  /** POST /embeddings. */
  readonly createEmbedding: (body: EmbeddingCreateParams) => Effect.Effect<CreateEmbeddingResponse, ChatError.ModelError>
}

/** The OpenAI (or OpenAI-compatible) API client in use. */
export class OpenAiClient extends Context.Service<OpenAiClient, Service>()("@chat-ts/openai/OpenAiClient") {}

/** Builds the client service. The SDK never reads the environment here: everything comes from `options`. */
export const make = (options: Options = {}): Effect.Effect<Service> =>
  Effect.sync(() => {
    const key = options.apiKey === undefined ? undefined : Redacted.value(options.apiKey)
    const hasKey = key !== undefined && key !== ""
    const baseURL = options.baseURL ?? defaultBaseURL
    const sdk = new OpenAI({
      // The SDK refuses to start without a key; a keyless client sends a
      // placeholder that the `Authorization: null` header below removes
      // (unless the caller's own headers carry an Authorization).
      apiKey: hasKey ? key : "no-key",
      adminAPIKey: null,
      organization: options.organization ?? null,
      project: options.project ?? null,
      webhookSecret: null,
      baseURL,
      maxRetries: 0,
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
      defaultHeaders: {
        ...options.headers,
        ...(hasKey || Object.keys(options.headers ?? {}).some((name) => name.toLowerCase() === "authorization")
          ? {}
          : { Authorization: null })
      }
    })
    const redact = Errors.makeRedactor(hasKey ? [key] : [])
    const toError: ProviderCall.ToError = (error, now) => Errors.fromUnknown(error, { redact, now })

    const client = ProviderCall.makeClient({ sdk, baseURL, redact, toError, server: "The model server" })
    const { request, openStream } = client

    return {
      ...client,
      createChatCompletion: (body) => request((client, signal) => client.chat.completions.create(body, { signal })),
      streamChatCompletion: (body) => openStream((client, signal) => client.chat.completions.create(body, { signal })),
      // A plain POST: `responses.create` post-processes the body (output_text),
      // which throws on a non-JSON page and made it look like a network error.
      createResponse: (body) =>
        request((client, signal) => client.post<Response>("/responses", { body, signal })),
      streamResponse: (body) => openStream((client, signal) => client.responses.create(body, { signal })),
      createEmbedding: (body) => request((client, signal) => client.embeddings.create(body, { signal }))
    }
  })

/** A layer providing the client built from `options`. */
export const layer = (options: Options = {}): Layer.Layer<OpenAiClient> => Layer.effect(OpenAiClient, make(options))

/**
 * A layer reading its settings from the configuration: `OPENAI_API_KEY`
 * (required, read as a redacted secret), and optionally `OPENAI_BASE_URL`,
 * `OPENAI_ORGANIZATION` and `OPENAI_PROJECT`. `overrides` take precedence.
 */
export const layerConfig = (overrides: Options = {}): Layer.Layer<OpenAiClient, Config.ConfigError> =>
  Layer.effect(
    OpenAiClient,
    Effect.gen(function*() {
      const apiKey = yield* Config.Redacted("OPENAI_API_KEY")
      const baseURL = yield* Config.option(Config.String("OPENAI_BASE_URL"))
      const organization = yield* Config.option(Config.String("OPENAI_ORGANIZATION"))
      const project = yield* Config.option(Config.String("OPENAI_PROJECT"))
      return yield* make({
        apiKey: overrides.apiKey ?? apiKey,
        baseURL: overrides.baseURL ?? Option.getOrUndefined(baseURL),
        organization: overrides.organization ?? Option.getOrUndefined(organization),
        project: overrides.project ?? Option.getOrUndefined(project),
        headers: overrides.headers,
        timeout: overrides.timeout
      })
    })
  )
