/**
 * Any AI SDK language model as the chat-ts `LanguageModel`: a model of any
 * `@ai-sdk/provider` package (Amazon Bedrock, Azure OpenAI, Mistral, Groq,
 * xAI, Vertex… and community providers) implementing specification `v4`
 * (AI SDK 7) or `v3` (AI SDK 6), told apart by its `specificationVersion`.
 *
 * `generate` is the model's `doGenerate`, `stream` its `doStream`; the
 * conversation reaches the model through the shared projection
 * `Messages.projectToolCall` (edited arguments, a rejection's reason, a
 * result's files), reasoning goes back with its provider metadata unchanged,
 * and failures are core's typed `ChatError.ModelError`s. Retries, the total
 * and the idle timeout are core's (`ProviderRetry`, `ProviderStream`), as on
 * the native layers: the AI SDK model itself never retries, and
 * interrupting the call aborts its request through `abortSignal`.
 *
 * @since 0.2.0
 */
import type { LanguageModelV3, LanguageModelV4, LanguageModelV4StreamPart, SharedV4ProviderOptions } from "@ai-sdk/provider"
import type * as ChatError from "@chat-ts/core/ChatError"
import { MalformedResponse, NetworkError } from "@chat-ts/core/ChatError"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderCall from "@chat-ts/core/ProviderCall"
import * as ProviderRetry from "@chat-ts/core/ProviderRetry"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { UnsupportedModel } from "./AiSdkModelError.js"
import * as Errors from "./internal/errors.js"
import * as Prompt from "./internal/prompt.js"
import * as Response from "./internal/response.js"
import * as V3 from "./internal/v3.js"

/** An AI SDK language model of any specification: `v4` and `v3` are spoken, any other is refused at build. */
export type AnyModel = LanguageModelV4 | LanguageModelV3 | { readonly specificationVersion: string }

/** The longest a non-streamed call may take by default, retries included. */
export const defaultTotalTimeout: Duration.Input = "10 minutes"

/** Settings of the layer; a request's own options take precedence over these. */
export interface Options {
  /** The AI SDK model, e.g. `mistral("mistral-large-latest")` or `bedrock("anthropic.claude-…")`. */
  readonly model: AnyModel
  /** The retry policy (default `ProviderRetry.defaultPolicy`; `false`: no retries). */
  readonly retry?: ProviderRetry.Policy | undefined
  /** The longest wait between two stream parts, and for the first (default 5 minutes; `false`: none). */
  readonly idleTimeout?: Duration.Input | false | undefined
  /** The longest a whole call may take, retries included (default 10 minutes for `generate`, none for `stream`; `false`: none). */
  readonly totalTimeout?: Duration.Input | false | undefined
  /**
   * The AI SDK `providerOptions` of every call, keyed by provider (`{ mistral: { safePrompt: true } }`);
   * a request's `options.providerOptions` (the same shape) is merged over them, provider by provider.
   */
  readonly providerOptions?: SharedV4ProviderOptions | undefined
  /** Extra HTTP headers of every call. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * How a tool result's files (a screenshot…) reach the model: `"files"` (default) as files, for
   * providers that take them in tool results (Bedrock, Anthropic, Google, OpenAI Responses);
   * `"placeholders"`: one short text each (`Messages.filePlaceholder`), for providers whose tool
   * messages are text only and would show the model the file's base64 as text (Mistral, Groq, Azure
   * and OpenAI Chat Completions, the OpenAI-compatible ones).
   */
  readonly toolResultFiles?: "files" | "placeholders" | undefined
  /** Secrets (the provider's API key…) that must never show in an error's message, even echoed back by a server. */
  readonly secrets?: ReadonlyArray<string> | undefined
}

const describe = (model: unknown): string => {
  if (typeof model !== "object" || model === null) return `not a model (${model === null ? "null" : typeof model})`
  const provider: unknown = Reflect.get(model, "provider")
  const modelId: unknown = Reflect.get(model, "modelId")
  return typeof provider === "string" || typeof modelId === "string" ? `${String(provider)} ${String(modelId)}` : "a value"
}

/** The calls of the model as V4 ones, or why the value is not a model this package speaks. */
const callsOf = (model: unknown): Effect.Effect<V3.Calls & { readonly provider: string }, UnsupportedModel> => {
  const version: unknown = typeof model === "object" && model !== null ? Reflect.get(model, "specificationVersion") : undefined
  const hasMethods = typeof model === "object" && model !== null &&
    typeof Reflect.get(model, "doGenerate") === "function" && typeof Reflect.get(model, "doStream") === "function"
  const provider = typeof model === "object" && model !== null && typeof Reflect.get(model, "provider") === "string"
    ? (Reflect.get(model, "provider") as string)
    : "The AI SDK model"
  if (hasMethods && version === "v4") {
    const v4 = model as LanguageModelV4
    return Effect.succeed({ provider, doGenerate: (o) => v4.doGenerate(o), doStream: (o) => v4.doStream(o) })
  }
  if (hasMethods && version === "v3") return Effect.succeed({ provider, ...V3.fromV3(model as LanguageModelV3) })
  return Effect.fail(
    new UnsupportedModel({
      message: typeof version === "string" && hasMethods
        ? `${describe(model)} implements AI SDK language model specification ${version}; @chat-ts/ai-sdk-provider speaks v4 (AI SDK 7) and v3 (AI SDK 6): upgrade the provider package.`
        : `${describe(model)} is not an AI SDK language model (no specificationVersion "v4" or "v3" with doGenerate and doStream).`,
      ...(typeof version === "string" ? { specificationVersion: version } : {}),
      expected: "language model"
    })
  )
}

/** Reads an AI SDK stream one part per pull; closing it cancels the stream. */
const iterableOf = <A>(stream: ReadableStream<A>): AsyncIterable<A> => ({
  [Symbol.asyncIterator]: () => {
    const reader = stream.getReader()
    return {
      next: () => reader.read().then((r): IteratorResult<A> => r.done ? { done: true, value: undefined } : { done: false, value: r.value }),
      return: () => reader.cancel().then((): IteratorResult<A> => ({ done: true, value: undefined }), (): IteratorResult<A> => ({ done: true, value: undefined }))
    }
  }
})

const idleError = (idle: Duration.Input) =>
  new NetworkError({
    message: `The model's stream sent nothing for ${Duration.format(Duration.fromInputUnsafe(idle))} (idleTimeout) and was stopped.`
  })

const contentType = (headers: Readonly<Record<string, string>> | undefined): string => {
  if (headers === undefined) return ""
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === "content-type") return value.toLowerCase()
  return ""
}

/**
 * `ProviderRetry.withRetry`, entered only once an attempt failed: the first failure is replayed to
 * the policy's schedule (so its delays are the same), and a call that succeeds at once pays for no
 * retry machinery (it is a tenth of what the bridge adds per call).
 */
const retried = <A>(
  attempt: Effect.Effect<A, ChatError.ModelError>,
  policy: ProviderRetry.Policy | undefined
): Effect.Effect<A, ChatError.ModelError> =>
  policy === false
    ? attempt
    : Effect.catch(attempt, (first) => {
      let replayed = false
      const again = Effect.suspend(() => replayed ? attempt : (replayed = true, Effect.fail(first)))
      return ProviderRetry.withRetry(again, policy)
    })

/** Builds the model on an AI SDK model; fails with `UnsupportedModel` when it is not one of specification v4 or v3. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, UnsupportedModel> =>
  Effect.map(callsOf(options.model), (calls) => {
    const redact = Errors.makeRedactor(options.secrets ?? [])
    const toError = Errors.toModelError(redact)
    const defaults: Prompt.Defaults = {
      providerOptions: options.providerOptions,
      headers: options.headers,
      toolResultFiles: options.toolResultFiles
    }
    const callTimeouts: ProviderStream.Timeouts = {
      totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout ?? defaultTotalTimeout
    }
    const streamTimeouts: ProviderStream.Timeouts = {
      idleTimeout: options.idleTimeout ?? ProviderStream.defaultIdleTimeout,
      totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout
    }

    const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
      Effect.suspend(() => {
        const callOptions = Prompt.toCallOptions(request, defaults)
        const attempt = ProviderCall.request((signal) => calls.doGenerate({ ...callOptions, abortSignal: signal }), toError)
        return retried(attempt, options.retry).pipe(
          (attempts) => ProviderStream.withTotalTimeout(attempts, callTimeouts),
          Effect.flatMap((result) => Effect.fromResult(Response.fromGenerate(result, request.options.responseFormat !== undefined)))
        )
      })

    const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
      const callOptions = Prompt.toCallOptions(request, defaults)
      const open = ProviderCall.openStream<LanguageModelV4StreamPart>(async (signal) => {
        const result = await calls.doStream({ ...callOptions, abortSignal: signal })
        // A page instead of events (a proxy's or gateway's): not a network failure, not worth a retry.
        if (contentType(result.response?.headers).includes("text/html")) {
          // Not awaited: a tee'd stream's branch settles its cancel only once the other branch is cancelled too.
          result.stream.cancel().catch(() => undefined)
          throw new MalformedResponse({ message: `${calls.provider} answered a stream with an HTML page, not events.` })
        }
        return iterableOf(result.stream)
      }, toError, calls.provider)
      // Some models read their stream up to the first output before `doStream` resolves (OpenAI's, Azure's):
      // waiting for it is waiting for the first event, under the idle timeout as on the native layers.
      const idle = streamTimeouts.idleTimeout
      const bounded = idle === false || idle === undefined
        ? open
        : Effect.timeoutOrElse(open, { duration: idle, orElse: () => Effect.fail(idleError(idle)) })
      return ProviderStream.decodeEvents(bounded, options.retry, () => new Response.StreamState((error) => toError(error, Date.now())), streamTimeouts)
    }

    return LanguageModel.make({ generate, stream })
  })

/** A layer providing `LanguageModel.LanguageModel` on the AI SDK model; fails to build with `UnsupportedModel`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, UnsupportedModel> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
