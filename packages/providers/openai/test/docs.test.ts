/**
 * The code snippets of docs/providers.md, kept here so they type-check with
 * the rest of the package (`npx tsc -b`) and build (nothing is sent: no
 * effect is run). Each region between `// #region` and `// #endregion` is
 * copied into the docs as is.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import { readFileSync } from "node:fs"
// #region imports
import { Chat, EmbeddingModel, Messages } from "@chat-ts/core"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import {
  OpenAiChatCompletions,
  OpenAiClient,
  OpenAiCompatible,
  OpenAiDefaults,
  OpenAiEmbeddings,
  OpenAiResponses,
  Retry
} from "@chat-ts/openai"
// #endregion imports

// #region config
// Reads OPENAI_API_KEY (required, as a redacted secret) and the optional
// OPENAI_BASE_URL, OPENAI_ORGANIZATION and OPENAI_PROJECT.
const OpenAi = OpenAiClient.layerConfig()

// Or give everything in code; the key stays a Redacted value.
const OpenAiExplicit = Layer.unwrap(
  Effect.map(Config.Redacted("MY_OPENAI_KEY"), (apiKey) =>
    OpenAiClient.layer({ apiKey, project: "proj_123", timeout: 60_000, headers: { "X-Team": "search" } }))
)
// #endregion config

// #region chat-completions
const ChatCompletionsModel = OpenAiChatCompletions.layer({
  model: OpenAiDefaults.chatModel,
  reasoningEffort: "low",
  maxTokens: 1024
}).pipe(Layer.provide(OpenAi))

const program = Effect.gen(function*() {
  const chat = yield* Chat.make()
  const result = yield* chat.complete(Messages.fromUser("Say hello in French."))
  return result.outcome
}).pipe(Effect.provide(ChatCompletionsModel))
// #endregion chat-completions

// #region responses
// Stateless (the default): the whole conversation is sent with store: false;
// reasoning comes back encrypted so it can be sent back next time.
const ResponsesModel = OpenAiResponses.layer({
  model: OpenAiDefaults.chatModel,
  reasoningEffort: "low",
  reasoningSummary: "auto"
}).pipe(Layer.provide(OpenAi))

// Chained: responses are stored and only what follows the last one is sent.
const ChainedResponsesModel = OpenAiResponses.layer({
  model: OpenAiDefaults.chatModel,
  previousResponseId: true
}).pipe(Layer.provide(OpenAi))
// #endregion responses

// #region embeddings
const Embeddings = OpenAiEmbeddings.layer({ model: OpenAiDefaults.embeddingModel, dimensions: 512 }).pipe(
  Layer.provide(OpenAi)
)

const similarity = Effect.gen(function*() {
  const model = yield* EmbeddingModel.EmbeddingModel
  const { vectors } = yield* model.embed(["a cat", "a kitten"])
  return EmbeddingModel.cosineSimilarity(vectors[0]!, vectors[1]!)
}).pipe(Effect.provide(Embeddings))
// #endregion embeddings

// #region retry
// The default: 3 retries, exponential from 500 ms (doubling, jittered),
// honouring retry-after, only for rate limits, server and network errors.
const Default = OpenAiChatCompletions.layer({ model: OpenAiDefaults.chatModel })

// Tune the default policy...
const Patient = OpenAiChatCompletions.layer({
  model: OpenAiDefaults.chatModel,
  retry: Retry.schedule({ retries: 6, base: "1 second", maxDelay: "30 seconds", maxRetryAfter: "2 minutes" })
})

// ...or give any Schedule fed with the ChatError.ModelError (only retryable
// errors are ever retried, whatever the schedule).
const Fixed = OpenAiChatCompletions.layer({
  model: OpenAiDefaults.chatModel,
  retry: Retry.honourRetryAfter(Schedule.max([Schedule.spaced("2 seconds"), Schedule.recurs(4)]))
})

// ...or no retries at all.
const NoRetry = OpenAiChatCompletions.layer({ model: OpenAiDefaults.chatModel, retry: false })
// #endregion retry

// #region timeouts
// The defaults: a non-streamed call may take 10 minutes in all (retries included),
// a stream may wait 5 minutes for each event; past them a NetworkError.
const Bounded = OpenAiChatCompletions.layer({ model: OpenAiDefaults.chatModel })

// A slow self-hosted server: more time for a whole answer (streamed or not,
// once given) and between two events.
const Slow = OpenAiChatCompletions.layer({
  model: "Qwen/Qwen2.5-72B-Instruct",
  totalTimeout: "30 minutes",
  idleTimeout: "10 minutes"
}).pipe(Layer.provide(OpenAiCompatible.layer("vllm")))

// A stream bounded in all too: it ends within the hour, however fast its events come.
const HourLong = OpenAiResponses.layer({ model: OpenAiDefaults.chatModel, totalTimeout: "1 hour" })

// No bound at all: a call may then wait forever on a stalled server.
const Unbounded = OpenAiEmbeddings.layer({ model: OpenAiDefaults.embeddingModel, totalTimeout: false })
// #endregion timeouts

// #region errors
const answer = Effect.gen(function*() {
  const chat = yield* Chat.make()
  return yield* chat.complete(Messages.fromUser("Hi"))
}).pipe(
  Effect.catchTags({
    RateLimited: (error) => Effect.succeed(`busy, retry in ${error.retryAfterMillis ?? "?"} ms`),
    AuthenticationError: () => Effect.succeed("check OPENAI_API_KEY"),
    ContextLengthExceeded: () => Effect.succeed("the conversation is too long")
  }),
  Effect.provide(ChatCompletionsModel)
)
// #endregion errors

// #region compatible
// Groq: reads GROQ_API_KEY.
const Groq = OpenAiChatCompletions.layer({ model: "llama-3.3-70b-versatile" }).pipe(
  Layer.provide(OpenAiCompatible.layerConfig("groq"))
)

// Ollama: no key; another host with `baseURL`.
const Ollama = OpenAiChatCompletions.layer({ model: "llama3.2" }).pipe(
  Layer.provide(OpenAiCompatible.layer("ollama", { baseURL: "http://gpu-box:11434/v1" }))
)

// DeepSeek only knows `max_tokens`.
const DeepSeek = OpenAiChatCompletions.layer({
  model: "deepseek-chat",
  maxTokens: 2048,
  maxTokensParameter: "max_tokens"
}).pipe(Layer.provide(OpenAiCompatible.layerConfig("deepseek")))

// Gemini embeddings through Google's OpenAI-compatible endpoint (reads GEMINI_API_KEY).
const GeminiEmbeddings = OpenAiEmbeddings.layer({ model: "gemini-embedding-001" }).pipe(
  Layer.provide(OpenAiCompatible.layerConfig("gemini"))
)
// #endregion compatible

// #region custom-server
// Another OpenAI-compatible server: a Preset of your own...
const vllm: OpenAiCompatible.Preset = {
  name: "vLLM",
  baseURL: "http://localhost:8000/v1",
  apiKeyEnv: "VLLM_API_KEY",
  endpoints: ["chat-completions", "embeddings"],
  notes: "Self-hosted vLLM started with --api-key."
}
const Vllm = OpenAiChatCompletions.layer({ model: "Qwen/Qwen2.5-7B-Instruct" }).pipe(
  Layer.provide(OpenAiCompatible.layerConfig(vllm))
)

// ...or the client layer directly.
const LmStudio = OpenAiChatCompletions.layer({ model: "qwen2.5-7b-instruct" }).pipe(
  Layer.provide(OpenAiClient.layer({ baseURL: "http://localhost:1234/v1" }))
)

// A key held elsewhere: pass it as a Redacted value.
const WithKey = OpenAiCompatible.layer("together", { apiKey: Redacted.make("from-your-vault") })
// #endregion custom-server

describe("docs/providers.md snippets", () => {
  it("build their layers and programs", () => {
    for (const layer of [OpenAi, OpenAiExplicit, ChatCompletionsModel, ResponsesModel, ChainedResponsesModel, Embeddings]) {
      expect(Layer.isLayer(layer)).toBe(true)
    }
    for (const layer of [Default, Patient, Fixed, NoRetry, Groq, Ollama, DeepSeek, GeminiEmbeddings, Vllm, LmStudio, WithKey]) {
      expect(Layer.isLayer(layer)).toBe(true)
    }
    for (const layer of [Bounded, Slow, HourLong, Unbounded]) {
      expect(Layer.isLayer(layer)).toBe(true)
    }
    for (const effect of [program, similarity, answer]) expect(Effect.isEffect(effect)).toBe(true)
  })

  it("show the values of OpenAiDefaults in the defaults table", () => {
    const docs = readFileSync(new URL("../../../../docs/providers.md", import.meta.url), "utf8")
    expect(docs).toContain(`| \`chatModel\` | \`${OpenAiDefaults.chatModel}\` |`)
    expect(docs).toContain(`| \`embeddingModel\` | \`${OpenAiDefaults.embeddingModel}\` |`)
    expect(docs).toContain(`| \`totalTimeout\` | ${Duration.format(Duration.fromInputUnsafe(OpenAiDefaults.totalTimeout))} |`)
    expect(docs).toContain(`| \`idleTimeout\` | ${Duration.format(Duration.fromInputUnsafe(OpenAiDefaults.idleTimeout))} |`)
  })

  it("appear verbatim in docs/providers.md", () => {
    const source = readFileSync(new URL(import.meta.url), "utf8")
    const docs = readFileSync(new URL("../../../../docs/providers.md", import.meta.url), "utf8")
    const regions = [...source.matchAll(/\/\/ #region (\S+)\n([\s\S]*?)\n\/\/ #endregion \1/g)]
    expect(regions.length).toBeGreaterThan(5)
    for (const [, name, body] of regions) expect(docs, `region ${name}`).toContain(body)
  })
})
