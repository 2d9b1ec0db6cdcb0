/**
 * The `@google/genai` SDK client (Gemini API) as an Effect service.
 *
 * Every call runs through `Effect.tryPromise` with the fiber's `AbortSignal`,
 * so interrupting the fiber aborts the HTTP request; streams abort their
 * request when their scope closes. Failures are mapped to the core's typed
 * `ChatError.ModelError`s, with the API key redacted from every message. The
 * SDK's own retries are off (no `retryOptions`, no automatic function calling,
 * no automatic continuation): the model layers retry with an Effect `Schedule`.
 *
 * @since 0.1.0
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as ProviderCall from "@chat-ts/core/ProviderCall"
import {
  type EmbedContentParameters,
  type EmbedContentResponse,
  type GenerateContentParameters,
  type GenerateContentResponse,
  GoogleGenAI
} from "@google/genai"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Errors from "./internal/errors.js"

/** The default base URL: the Gemini API. */
export const defaultBaseURL = "https://generativelanguage.googleapis.com"

/** Settings of the client. */
export interface Options {
  /** The Gemini API key (sent as `x-goog-api-key`). */
  readonly apiKey: Redacted.Redacted<string>
  /** The API's base URL (default `https://generativelanguage.googleapis.com`). */
  readonly baseURL?: string | undefined
  /** The API version in the path (default `v1beta`, the SDK's). */
  readonly apiVersion?: string | undefined
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * The most milliseconds one HTTP request may take, its body included, streams
   * too (the SDK's own timer; default none). The model layers bound their calls
   * with `totalTimeout` and `idleTimeout` instead (see `GoogleDefaults`).
   */
  readonly timeout?: number | undefined
}

/** The client service: the SDK client and Effect-shaped calls (`request`, `openStream`: core's `ProviderCall.Client`). */
export interface Service extends ProviderCall.Client<GoogleGenAI> {
  /** POST models/{model}:generateContent. */
  readonly generateContent: (params: GenerateContentParameters) => Effect.Effect<GenerateContentResponse, ChatError.ModelError>
  /**
   * POST models/{model}:streamGenerateContent?alt=sse. Opening (until the HTTP
   * response starts) fails the returned effect, so it can be retried; a failure
   * mid-way fails the stream. The request is aborted when the scope closes.
   */
  readonly streamGenerateContent: (
    params: GenerateContentParameters
  ) => Effect.Effect<Stream.Stream<GenerateContentResponse, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>
  /** POST models/{model}:batchEmbedContents (one input: embedContent). */
  readonly embedContent: (params: EmbedContentParameters) => Effect.Effect<EmbedContentResponse, ChatError.ModelError>
}

/** The Gemini API client in use. */
export class GoogleClient extends Context.Service<GoogleClient, Service>()("@chat-ts/google/GoogleClient") {}

/**
 * A `fetch` that throws `HttpFailure` for a non-2xx answer, with its headers
 * and body, before the SDK reads it (the SDK's own error drops the headers).
 */
const failingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await fetch(input, init)
  if (response.ok && (response.headers.get("content-type") ?? "").toLowerCase().includes("text/html")) {
    // A page (a proxy's or gateway's) instead of JSON or events: not a network failure, not worth a retry.
    await response.body?.cancel().catch(() => undefined)
    throw new ChatError.MalformedResponse({
      message: `The model server answered with an HTML page (HTTP ${response.status}), not Gemini's JSON.`
    })
  }
  if (response.ok) return response
  const body = await response.text().catch(() => "")
  throw new Errors.HttpFailure(response.status, response.headers, body)
}

/** The SDK's per-call settings that keep it from calling twice on its own. */
export const noAutomation = { automaticFunctionCalling: { disable: true }, automaticContinuation: false } as const

/** Builds the client service. The SDK never reads the key from the environment here: everything comes from `options`. */
export const make = (options: Options): Effect.Effect<Service> =>
  Effect.sync(() => {
    const key = Redacted.value(options.apiKey)
    const baseURL = options.baseURL ?? defaultBaseURL
    const sdk = new GoogleGenAI({
      apiKey: key,
      vertexai: false,
      ...(options.apiVersion === undefined ? {} : { apiVersion: options.apiVersion }),
      httpOptions: {
        baseUrl: baseURL,
        fetch: failingFetch,
        ...(options.headers === undefined ? {} : { headers: { ...options.headers } }),
        ...(options.timeout === undefined ? {} : { timeout: options.timeout })
      }
    })
    const redact = Errors.makeRedactor([key])
    const toError: ProviderCall.ToError = (error, now) => Errors.fromUnknown(error, { redact, now })

    // The server name is for an HTML page instead of events, which `failingFetch` already turns into its own error.
    const client = ProviderCall.makeClient({ sdk, baseURL, redact, toError, server: "The model server" })
    const { request, openStream } = client

    return {
      ...client,
      generateContent: (params) =>
        request((client, signal) =>
          client.models.generateContent({ ...params, config: { ...params.config, ...noAutomation, abortSignal: signal } })
        ),
      streamGenerateContent: (params) =>
        openStream((client, signal) =>
          client.models.generateContentStream({ ...params, config: { ...params.config, ...noAutomation, abortSignal: signal } })
        ),
      embedContent: (params) =>
        request((client, signal) => client.models.embedContent({ ...params, config: { ...params.config, abortSignal: signal } }))
    }
  })

/** A layer providing the client built from `options`. */
export const layer = (options: Options): Layer.Layer<GoogleClient> => Layer.effect(GoogleClient, make(options))

/** The issue of a config failure, when it is about the data (not a source that could not be read). */
const issueOf = (error: Config.ConfigError): SchemaIssue.Issue | undefined =>
  Schema.isSchemaError(error.cause) ? error.cause.issue : undefined

/**
 * The API key: `GEMINI_API_KEY`, else `GOOGLE_API_KEY`, as a redacted secret.
 * When neither is set, the error names both.
 */
const apiKeyConfig: Config.Config<Redacted.Redacted<string>> = Config.Redacted("GEMINI_API_KEY").pipe(
  Config.orElse((gemini) =>
    Config.Redacted("GOOGLE_API_KEY").pipe(Config.orElse((google) => {
      const first = issueOf(gemini)
      const second = issueOf(google)
      return first === undefined || second === undefined
        ? Config.fail(google.cause)
        : Config.fail(new Schema.SchemaError(new SchemaIssue.Composite(Schema.Redacted(Schema.String).ast, [first, second])))
    }))
  )
)

/**
 * A layer reading its settings from the configuration: the key from
 * `GEMINI_API_KEY`, else `GOOGLE_API_KEY` (read as a redacted secret), and
 * optionally `GEMINI_BASE_URL`. `overrides` take precedence.
 */
export const layerConfig = (overrides: Partial<Options> = {}): Layer.Layer<GoogleClient, Config.ConfigError> =>
  Layer.effect(
    GoogleClient,
    Effect.gen(function*() {
      const apiKey = overrides.apiKey ?? (yield* apiKeyConfig)
      const baseURL = yield* Config.option(Config.String("GEMINI_BASE_URL"))
      return yield* make({
        apiKey,
        baseURL: overrides.baseURL ?? Option.getOrUndefined(baseURL),
        apiVersion: overrides.apiVersion,
        headers: overrides.headers,
        timeout: overrides.timeout
      })
    })
  )
