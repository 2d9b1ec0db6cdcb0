/**
 * Presets for OpenAI-compatible servers: each is only configuration (a base
 * URL, the environment variable holding the key, notes) producing an
 * `OpenAiClient` layer. The model layers (`OpenAiChatCompletions`,
 * `OpenAiEmbeddings`, `OpenAiResponses`) are the same for every server.
 *
 * ```ts
 * OpenAiChatCompletions.layer({ model: "llama-3.3-70b-versatile" }).pipe(
 *   Layer.provide(OpenAiCompatible.layerConfig("groq"))
 * )
 * ```
 *
 * Another server is a `Preset` value of your own, passed where a name goes.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as OpenAiClient from "./OpenAiClient.js"

/** An API a server offers. */
export type Endpoint = "chat-completions" | "responses" | "embeddings"

/** How to reach one OpenAI-compatible server. */
export interface Preset {
  /** A short name, for messages and docs. */
  readonly name: string
  /** The base URL the SDK appends `/chat/completions` etc. to. */
  readonly baseURL: string
  /** The environment variable holding the API key; absent when the server takes no key. */
  readonly apiKeyEnv?: string
  /** The APIs of this package the server is known to offer. */
  readonly endpoints: ReadonlyArray<Endpoint>
  /** What to know when using it. */
  readonly notes: string
}

/** OpenAI itself (the same as `OpenAiClient.layerConfig` without the optional variables). */
export const openai: Preset = {
  name: "OpenAI",
  baseURL: "https://api.openai.com/v1",
  apiKeyEnv: "OPENAI_API_KEY",
  endpoints: ["chat-completions", "responses", "embeddings"],
  notes: "The reference API: every layer of this package."
}

/** Ollama, a local server: no key. */
export const ollama: Preset = {
  name: "Ollama",
  baseURL: "http://localhost:11434/v1",
  endpoints: ["chat-completions", "embeddings"],
  notes: "Local, no key. Models by their Ollama tag (e.g. `llama3.2`); tool calling depends on the model. " +
    "Thinking models' `reasoning` arrives as Reasoning parts. Pass `baseURL` to reach another host."
}

/** OpenRouter: one API in front of many vendors' models. */
export const openrouter: Preset = {
  name: "OpenRouter",
  baseURL: "https://openrouter.ai/api/v1",
  apiKeyEnv: "OPENROUTER_API_KEY",
  endpoints: ["chat-completions"],
  notes: "Model ids are `vendor/model` (e.g. `openai/gpt-4o-mini`). Optional attribution headers " +
    "(`HTTP-Referer`, `X-Title`) go in `headers`. Reasoning arrives as `reasoning` and becomes Reasoning parts; " +
    "its `reasoning_details` (signed or encrypted reasoning) are kept on the message and sent back with it."
}

/** DeepSeek. */
export const deepseek: Preset = {
  name: "DeepSeek",
  baseURL: "https://api.deepseek.com",
  apiKeyEnv: "DEEPSEEK_API_KEY",
  endpoints: ["chat-completions"],
  notes: "Models `deepseek-chat` and `deepseek-reasoner`. Thinking mode's `reasoning_content` becomes a Reasoning " +
    "part and is sent back on the assistant messages of the current tool loop (the API answers 400 without it), " +
    "not on earlier turns. Use `maxTokensParameter: \"max_tokens\"`."
}

/** Groq. */
export const groq: Preset = {
  name: "Groq",
  baseURL: "https://api.groq.com/openai/v1",
  apiKeyEnv: "GROQ_API_KEY",
  endpoints: ["chat-completions"],
  notes: "Fast inference of open models (e.g. `llama-3.3-70b-versatile`). Rate limits answer 429 with `retry-after`, " +
    "which the default retry policy honours."
}

/** Together AI. */
export const together: Preset = {
  name: "Together AI",
  baseURL: "https://api.together.xyz/v1",
  apiKeyEnv: "TOGETHER_API_KEY",
  endpoints: ["chat-completions", "embeddings"],
  notes: "Open models by their full id (e.g. `meta-llama/Llama-3.3-70B-Instruct-Turbo`); tool calling on the models " +
    "Together lists as supporting it."
}

/** Cerebras. */
export const cerebras: Preset = {
  name: "Cerebras",
  baseURL: "https://api.cerebras.ai/v1",
  apiKeyEnv: "CEREBRAS_API_KEY",
  endpoints: ["chat-completions"],
  notes: "Fast inference of open models (e.g. `llama-3.3-70b`); tool calling on the models Cerebras lists as supporting it."
}

/** Google Gemini through its OpenAI-compatible endpoint. */
export const gemini: Preset = {
  name: "Gemini",
  baseURL: "https://generativelanguage.googleapis.com/v1beta/openai/",
  apiKeyEnv: "GEMINI_API_KEY",
  endpoints: ["chat-completions", "embeddings"],
  notes: "Gemini models (e.g. `gemini-3.8-flash`, `GoogleDefaults.model` of `@chat-ts/google`) and embeddings through Google's OpenAI-compatible endpoint; " +
    "no Responses API. A key from Google AI Studio. Gemini 3's thought signatures (`extra_content` on tool calls) " +
    "are kept on the message and sent back on each call, as the endpoint requires."
}

/** vLLM, self-hosted: no key unless started with `--api-key` (then give it in `apiKey`). */
export const vllm: Preset = {
  name: "vLLM",
  baseURL: "http://localhost:8000/v1",
  endpoints: ["chat-completions", "embeddings"],
  notes: "Self-hosted; models by their Hugging Face id. Older versions answer 400 to `stream_options` " +
    "(use `streamUsage: false`) and some to `strict` (use `strict: false` on the layer). With a reasoning parser, " +
    "`reasoning_content` arrives as Reasoning parts. A failed generation ends with `finish_reason: \"error\"`, " +
    "read as a `ServerError`."
}

/** The llama.cpp server (`llama-server`), local: no key. */
export const llamacpp: Preset = {
  name: "llama.cpp server",
  baseURL: "http://localhost:8080/v1",
  endpoints: ["chat-completions", "embeddings"],
  notes: "Local, one model per server (start it with `--jinja` for tool calling). Tool calls may come without an " +
    "id or with `arguments` as a JSON object: they get a fresh id and the object's JSON text."
}

/** Every preset, by name. */
export const presets = { openai, ollama, openrouter, deepseek, groq, together, cerebras, gemini, vllm, llamacpp } as const

/** The name of a preset. */
export type PresetName = keyof typeof presets

const resolve = (preset: PresetName | Preset): Preset => (typeof preset === "string" ? presets[preset] : preset)

/** An `OpenAiClient` layer for a preset; `options` (the key, another base URL, headers…) take precedence. */
export const layer = (
  preset: PresetName | Preset,
  options: OpenAiClient.Options = {}
): Layer.Layer<OpenAiClient.OpenAiClient> => {
  const chosen = resolve(preset)
  return OpenAiClient.layer({ ...options, baseURL: options.baseURL ?? chosen.baseURL })
}

/**
 * An `OpenAiClient` layer for a preset, reading the key from the preset's
 * environment variable (as a redacted secret; missing is a `ConfigError`).
 * Presets without a key read nothing. `options` take precedence.
 */
export const layerConfig = (
  preset: PresetName | Preset,
  options: OpenAiClient.Options = {}
): Layer.Layer<OpenAiClient.OpenAiClient, Config.ConfigError> => {
  const chosen = resolve(preset)
  const apiKeyEnv = chosen.apiKeyEnv
  return Layer.effect(
    OpenAiClient.OpenAiClient,
    Effect.gen(function*() {
      const apiKey = options.apiKey ?? (apiKeyEnv === undefined ? undefined : yield* Config.Redacted(apiKeyEnv))
      return yield* OpenAiClient.make({ ...options, apiKey, baseURL: options.baseURL ?? chosen.baseURL })
    })
  )
}
