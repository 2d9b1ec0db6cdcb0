/**
 * Which model the examples and the demo use: OpenAI (or an OpenAI-compatible
 * server) through `@chat-ts/openai` when `OPENAI_API_KEY` is set, else
 * Claude through `@chat-ts/anthropic` when `ANTHROPIC_API_KEY` is set,
 * otherwise an offline scripted model, clearly labelled as such.
 *
 * Settings (environment): `OPENAI_API_KEY`, and optionally `OPENAI_BASE_URL`
 * (e.g. `http://localhost:11434/v1` for Ollama), `OPENAI_MODEL` and
 * `OPENAI_EMBEDDING_MODEL`; for Anthropic `ANTHROPIC_API_KEY`, and optionally
 * `ANTHROPIC_BASE_URL` and `ANTHROPIC_MODEL`. Anthropic has no embeddings: the
 * embeddings example stays offline with it.
 *
 * Without `OPENAI_API_KEY` and `ANTHROPIC_API_KEY`, Gemini through
 * `@chat-ts/google` when `GEMINI_API_KEY` or `GOOGLE_API_KEY` is set, with
 * optionally `GEMINI_BASE_URL`, `GEMINI_MODEL` and `GEMINI_EMBEDDING_MODEL`.
 *
 * The default model ids are the providers' own, kept in one place each:
 * `OpenAiDefaults`, `AnthropicDefaults` and `GoogleDefaults` (`defaults`
 * lists them). The Anthropic and Google packages (and their SDKs) are loaded
 * only when their key is set.
 */
import { EmbeddingModel, LanguageModel } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { OpenAiChatCompletions, OpenAiClient, OpenAiDefaults, OpenAiEmbeddings } from "@chat-ts/openai"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** The model in use, as told to the person. */
export type Choice =
  | { readonly _tag: "OpenAi"; readonly model: string; readonly embeddingModel: string; readonly baseURL: string }
  | { readonly _tag: "Anthropic"; readonly model: string; readonly baseURL: string }
  | { readonly _tag: "Gemini"; readonly model: string; readonly embeddingModel: string; readonly baseURL: string }
  | { readonly _tag: "Offline" }

/** The default model ids of the three providers (the Anthropic and Google packages are loaded for it). */
export const defaults: Effect.Effect<{ readonly openai: string; readonly anthropic: string; readonly gemini: string }> = Effect.promise(
  async () => {
    const [{ AnthropicDefaults }, { GoogleDefaults }] = await Promise.all([import("@chat-ts/anthropic"), import("@chat-ts/google")])
    return { openai: OpenAiDefaults.chatModel, anthropic: AnthropicDefaults.model, gemini: GoogleDefaults.model }
  }
)

/** Gemini when `GEMINI_API_KEY` or `GOOGLE_API_KEY` is set. */
const chooseGemini: Effect.Effect<Choice, Config.ConfigError> = Effect.gen(function*() {
  const key = yield* Config.option(
    Config.NonEmptyString("GEMINI_API_KEY").pipe(Config.orElse(() => Config.NonEmptyString("GOOGLE_API_KEY")))
  )
  if (Option.isNone(key)) return { _tag: "Offline" } as const
  // Loaded only now: the key is set.
  const { GoogleClient, GoogleDefaults } = yield* Effect.promise(() => import("@chat-ts/google"))
  const model = yield* Config.withDefault(Config.NonEmptyString("GEMINI_MODEL"), GoogleDefaults.model)
  const embeddingModel = yield* Config.withDefault(Config.NonEmptyString("GEMINI_EMBEDDING_MODEL"), GoogleDefaults.embeddingModel)
  const baseURL = yield* Config.withDefault(Config.NonEmptyString("GEMINI_BASE_URL"), GoogleClient.defaultBaseURL)
  return { _tag: "Gemini", model, embeddingModel, baseURL } as const
})

/** Reads the configuration: OpenAI when `OPENAI_API_KEY` is set, else Anthropic when `ANTHROPIC_API_KEY` is, else Gemini (and `offline` is not forced). */
export const choose = (options: { readonly offline?: boolean } = {}): Effect.Effect<Choice> =>
  Effect.gen(function*() {
    if (options.offline === true) return { _tag: "Offline" } as const
    const key = yield* Config.option(Config.NonEmptyString("OPENAI_API_KEY"))
    if (Option.isNone(key)) return yield* chooseAnthropic
    const model = yield* Config.withDefault(Config.NonEmptyString("OPENAI_MODEL"), OpenAiDefaults.chatModel)
    const embeddingModel = yield* Config.withDefault(Config.NonEmptyString("OPENAI_EMBEDDING_MODEL"), OpenAiDefaults.embeddingModel)
    const baseURL = yield* Config.withDefault(Config.NonEmptyString("OPENAI_BASE_URL"), OpenAiClient.defaultBaseURL)
    return { _tag: "OpenAi", model, embeddingModel, baseURL } as const
  }).pipe(Effect.orElseSucceed((): Choice => ({ _tag: "Offline" })))

/** Anthropic when `ANTHROPIC_API_KEY` is set, else Gemini or offline. */
const chooseAnthropic: Effect.Effect<Choice, Config.ConfigError> = Effect.gen(function*() {
  const key = yield* Config.option(Config.NonEmptyString("ANTHROPIC_API_KEY"))
  if (Option.isNone(key)) return yield* chooseGemini
  // Loaded only now: the key is set.
  const { AnthropicClient, AnthropicDefaults } = yield* Effect.promise(() => import("@chat-ts/anthropic"))
  const model = yield* Config.withDefault(Config.NonEmptyString("ANTHROPIC_MODEL"), AnthropicDefaults.model)
  const baseURL = yield* Config.withDefault(Config.NonEmptyString("ANTHROPIC_BASE_URL"), AnthropicClient.defaultBaseURL)
  return { _tag: "Anthropic", model, baseURL } as const
})

/** Names the model in use. */
export const label = (
  choice: Choice,
  offlineName = "scripted offline model",
  what: "chat" | "embeddings" = "chat"
): string =>
  choice._tag === "OpenAi" || choice._tag === "Gemini"
    ? `${what === "chat" ? choice.model : choice.embeddingModel} via ${choice.baseURL}`
    : choice._tag === "Anthropic" && what === "chat"
    ? `${choice.model} via ${choice.baseURL}`
    : choice._tag === "Anthropic"
    ? `${offlineName} (Anthropic has no embeddings: these are not generated)`
    : `${offlineName} (no OPENAI_API_KEY is set: answers are scripted, not generated)`

const client: Layer.Layer<OpenAiClient.OpenAiClient, Config.ConfigError> = OpenAiClient.layerConfig()

/** A Gemini layer on the configured key and base URL; the Google SDK is loaded only now. */
const gemini = <A>(
  make: (google: typeof import("@chat-ts/google")) => Layer.Layer<A, never, import("@chat-ts/google").GoogleClient.GoogleClient>
): Layer.Layer<A, Config.ConfigError> =>
  Layer.unwrap(Effect.map(
    Effect.promise(() => import("@chat-ts/google")),
    (google) => make(google).pipe(Layer.provide(google.GoogleClient.layerConfig()))
  ))

/** The chat model of a choice; `offline` gives the scripted one. */
export const languageModel = (
  choice: Choice,
  offline: MockLanguageModel.Script | Layer.Layer<LanguageModel.LanguageModel>
): Layer.Layer<LanguageModel.LanguageModel, Config.ConfigError> =>
  choice._tag === "OpenAi"
    ? OpenAiChatCompletions.layer({ model: choice.model }).pipe(Layer.provide(client))
    : choice._tag === "Anthropic"
    ? claude(choice.model)
    : choice._tag === "Gemini"
    ? gemini((google) => google.GoogleLanguageModel.layer({ model: choice.model }))
    : typeof offline === "function" || Array.isArray(offline)
    ? MockLanguageModel.make(offline as MockLanguageModel.Script).layer
    : (offline as Layer.Layer<LanguageModel.LanguageModel>)

/** Claude on the configured key and base URL; the Anthropic SDK is loaded only now. */
const claude = (model: string): Layer.Layer<LanguageModel.LanguageModel, Config.ConfigError> =>
  Layer.unwrap(Effect.map(
    Effect.promise(() => import("@chat-ts/anthropic")),
    ({ AnthropicClient, AnthropicLanguageModel }) =>
      AnthropicLanguageModel.layer({ model }).pipe(Layer.provide(AnthropicClient.layerConfig()))
  ))

/** The embedding model of a choice; `offline` gives the fake one. */
export const embeddingModel = (
  choice: Choice,
  offline: EmbeddingModel.Service
): Layer.Layer<EmbeddingModel.EmbeddingModel, Config.ConfigError> =>
  choice._tag === "OpenAi"
    ? OpenAiEmbeddings.layer({ model: choice.embeddingModel }).pipe(Layer.provide(client))
    : choice._tag === "Gemini"
    ? gemini((google) => google.GoogleEmbeddings.layer({ model: choice.embeddingModel }))
    : EmbeddingModel.layer(offline)
