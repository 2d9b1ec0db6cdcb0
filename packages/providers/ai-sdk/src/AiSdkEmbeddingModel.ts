/**
 * Any AI SDK embedding model as the chat-ts `EmbeddingModel`: a model of any
 * `@ai-sdk/provider` package implementing embedding specification `v4`
 * (AI SDK 7) or `v3` (AI SDK 6). Inputs beyond the model's
 * `maxEmbeddingsPerCall` are sent in several calls, in order; failures are
 * core's typed `ChatError.ModelError`s, retried as `retry` says.
 *
 * @since 0.2.0
 */
import type { EmbeddingModelV3, EmbeddingModelV4, SharedV4ProviderOptions } from "@ai-sdk/provider"
import { MalformedResponse } from "@chat-ts/core/ChatError"
import * as EmbeddingModel from "@chat-ts/core/EmbeddingModel"
import * as ProviderCall from "@chat-ts/core/ProviderCall"
import * as ProviderRetry from "@chat-ts/core/ProviderRetry"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { UnsupportedModel } from "./AiSdkModelError.js"
import * as Errors from "./internal/errors.js"

/** An AI SDK embedding model of any specification: `v4` and `v3` are spoken, any other is refused at build. */
export type AnyModel = EmbeddingModelV4 | EmbeddingModelV3 | { readonly specificationVersion: string }

/** Settings of the layer. */
export interface Options {
  /** The AI SDK embedding model, e.g. `mistral.embedding("mistral-embed")`. */
  readonly model: AnyModel
  /** The retry policy (default `ProviderRetry.defaultPolicy`; `false`: no retries). */
  readonly retry?: ProviderRetry.Policy | undefined
  /** The longest a whole request may take, retries included (default 10 minutes; `false`: none). */
  readonly totalTimeout?: Duration.Input | false | undefined
  /** The AI SDK `providerOptions` of every call, keyed by provider. */
  readonly providerOptions?: SharedV4ProviderOptions | undefined
  /** Extra HTTP headers of every call. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Secrets that must never show in an error's message. */
  readonly secrets?: ReadonlyArray<string> | undefined
}

type Embedder = EmbeddingModelV4 | EmbeddingModelV3

const embedderOf = (model: unknown): Effect.Effect<Embedder, UnsupportedModel> => {
  const version: unknown = typeof model === "object" && model !== null ? Reflect.get(model, "specificationVersion") : undefined
  const hasEmbed = typeof model === "object" && model !== null && typeof Reflect.get(model, "doEmbed") === "function"
  if (hasEmbed && (version === "v4" || version === "v3")) return Effect.succeed(model as Embedder)
  return Effect.fail(
    new UnsupportedModel({
      message: typeof version === "string" && hasEmbed
        ? `The embedding model implements AI SDK embedding specification ${version}; @chat-ts/ai-sdk-provider speaks v4 (AI SDK 7) and v3 (AI SDK 6): upgrade the provider package.`
        : "The value is not an AI SDK embedding model (no specificationVersion \"v4\" or \"v3\" with doEmbed).",
      ...(typeof version === "string" ? { specificationVersion: version } : {}),
      expected: "embedding model"
    })
  )
}

/** Builds the embedding model; fails with `UnsupportedModel` when it is not one of specification v4 or v3. */
export const make = (options: Options): Effect.Effect<EmbeddingModel.Service, UnsupportedModel> =>
  Effect.map(embedderOf(options.model), (model) => {
    const toError = Errors.toModelError(Errors.makeRedactor(options.secrets ?? []))
    const timeouts: ProviderStream.Timeouts = {
      totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout ?? "10 minutes"
    }
    const batch = (values: ReadonlyArray<string>, dimensions: number | undefined) =>
      ProviderCall.request(
        (signal) =>
          (model as EmbeddingModelV4).doEmbed({
            values: [...values],
            abortSignal: signal,
            ...(options.providerOptions === undefined ? {} : { providerOptions: options.providerOptions }),
            ...(options.headers === undefined ? {} : { headers: { ...options.headers } }),
            ...(dimensions === undefined ? {} : { dimensions })
          }),
        toError
      ).pipe(
        Effect.flatMap((result) =>
          Array.isArray(result?.embeddings) && result.embeddings.length === values.length &&
            result.embeddings.every((vector) => Array.isArray(vector) && vector.every((x) => typeof x === "number" && Number.isFinite(x)))
            ? Effect.succeed({ vectors: result.embeddings, tokens: result.usage?.tokens ?? 0 })
            : Effect.fail(new MalformedResponse({ message: `The embedding model answered ${values.length} input(s) with something other than as many vectors of numbers.` }))
        ),
        (attempt) => ProviderRetry.withRetry(attempt, options.retry)
      )
    const embed: EmbeddingModel.Service["embed"] = (inputs, embedOptions) =>
      Effect.gen(function*() {
        const max = yield* Effect.promise(async () => await model.maxEmbeddingsPerCall)
        const size = max === undefined || !Number.isFinite(max) || max < 1 ? Math.max(1, inputs.length) : Math.floor(max)
        const vectors: Array<ReadonlyArray<number>> = []
        let tokens = 0
        for (let i = 0; i < inputs.length; i += size) {
          const done = yield* batch(inputs.slice(i, i + size), embedOptions?.dimensions)
          vectors.push(...done.vectors)
          tokens += done.tokens
        }
        return { vectors, usage: { inputTokens: tokens }, model: model.modelId }
      }).pipe((call) => ProviderStream.withTotalTimeout(call, timeouts))
    return { embed }
  })

/** A layer providing `EmbeddingModel.EmbeddingModel` on the AI SDK model; fails to build with `UnsupportedModel`. */
export const layer = (options: Options): Layer.Layer<EmbeddingModel.EmbeddingModel, UnsupportedModel> =>
  Layer.effect(EmbeddingModel.EmbeddingModel, make(options))
