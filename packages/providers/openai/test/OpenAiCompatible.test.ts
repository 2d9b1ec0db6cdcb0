import { LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import * as OpenAiClient from "../src/OpenAiClient.js"
import * as OpenAiCompatible from "../src/OpenAiCompatible.js"
import { request } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("Hi")])

const generateWith = (client: Layer.Layer<OpenAiClient.OpenAiClient, unknown>) =>
  Effect.flatMap(LanguageModel.LanguageModel, (model) => model.generate(ask)).pipe(
    Effect.provide(OpenAiChatCompletions.layer({ model: "some-model", retry: false }).pipe(Layer.provide(client)))
  )

const withEnv = (env: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

describe("OpenAiCompatible", () => {
  it("documents every preset: a base URL, the key's variable (none for Ollama), notes", () => {
    const names = Object.keys(OpenAiCompatible.presets)
    expect(names).toEqual([
      "openai",
      "ollama",
      "openrouter",
      "deepseek",
      "groq",
      "together",
      "cerebras",
      "gemini",
      "vllm",
      "llamacpp"
    ])
    expect(OpenAiCompatible.ollama.baseURL).toBe("http://localhost:11434/v1")
    expect(OpenAiCompatible.ollama.apiKeyEnv).toBeUndefined()
    expect(OpenAiCompatible.gemini.baseURL).toBe("https://generativelanguage.googleapis.com/v1beta/openai/")
    for (const preset of Object.values(OpenAiCompatible.presets)) {
      expect(preset.notes.length).toBeGreaterThan(0)
      expect(preset.endpoints).toContain("chat-completions")
      if (preset.baseURL.startsWith("http://localhost:")) expect(preset.apiKeyEnv).toBeUndefined()
      else {
        expect(preset.baseURL.startsWith("https://")).toBe(true)
        expect(preset.apiKeyEnv).toMatch(/^[A-Z_]+_API_KEY$/)
      }
    }
  })

  it.effect("a keyless preset (Ollama) sends no Authorization header", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      yield* generateWith(OpenAiCompatible.layerConfig("ollama", { baseURL: server.baseURL })).pipe(withEnv({}))
      expect(server.requests[0]!.headers["authorization"]).toBeUndefined()
      expect(server.requests[0]!.path).toBe("/v1/chat/completions")
    }))

  it.effect("a keyless client keeps an Authorization header given in headers", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      yield* generateWith(OpenAiClient.layer({ baseURL: server.baseURL, headers: { Authorization: "Basic dXNlcjpwYXNz" } }))
      expect(server.requests[0]!.headers["authorization"]).toBe("Basic dXNlcjpwYXNz")
    }))

  it.effect("a preset reads its key from its environment variable", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      yield* generateWith(
        OpenAiCompatible.layerConfig("groq", { baseURL: server.baseURL, headers: { "X-Title": "chat-ts" } })
      ).pipe(withEnv({ GROQ_API_KEY: "gsk_test_key" }))
      expect(server.requests[0]!.headers["authorization"]).toBe("Bearer gsk_test_key")
      expect(server.requests[0]!.headers["x-title"]).toBe("chat-ts")
    }))

  it.effect("a missing key is a configuration error, before any request", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const exit = yield* Effect.exit(
        generateWith(OpenAiCompatible.layerConfig("deepseek", { baseURL: server.baseURL })).pipe(withEnv({}))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(server.requests).toHaveLength(0)
    }))

  it.effect("another server is a Preset value of your own", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const vllm: OpenAiCompatible.Preset = {
        name: "vLLM",
        baseURL: server.baseURL,
        apiKeyEnv: "VLLM_API_KEY",
        endpoints: ["chat-completions"],
        notes: "A self-hosted vLLM server."
      }
      yield* generateWith(OpenAiCompatible.layerConfig(vllm)).pipe(withEnv({ VLLM_API_KEY: "token-abc" }))
      expect(server.requests[0]!.headers["authorization"]).toBe("Bearer token-abc")
    }))

  it.effect("OpenAiClient.layerConfig reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORGANIZATION and OPENAI_PROJECT", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      yield* generateWith(OpenAiClient.layerConfig()).pipe(withEnv({
        OPENAI_API_KEY: "sk-from-env",
        OPENAI_BASE_URL: server.baseURL,
        OPENAI_ORGANIZATION: "org-1",
        OPENAI_PROJECT: "proj-1"
      }))
      const headers = server.requests[0]!.headers
      expect(headers["authorization"]).toBe("Bearer sk-from-env")
      expect(headers["openai-organization"]).toBe("org-1")
      expect(headers["openai-project"]).toBe("proj-1")
    }))

  it.effect("OpenAiClient.layerConfig fails without OPENAI_API_KEY", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.provide(OpenAiClient.OpenAiClient, OpenAiClient.layerConfig()).pipe(withEnv({})))
      expect(Exit.isFailure(exit)).toBe(true)
    }))
})
