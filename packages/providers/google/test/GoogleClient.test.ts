/**
 * GoogleClient's settings: the key from GEMINI_API_KEY or else GOOGLE_API_KEY
 * (a redacted secret), the base URL from GEMINI_BASE_URL, extra headers, and
 * a missing key as a ConfigError.
 */
import { Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as GoogleClient from "../src/GoogleClient.js"
import * as GoogleLanguageModel from "../src/GoogleLanguageModel.js"
import { apiKey, request } from "./support/helpers.js"
import { ReplayServer } from "@chat-ts/core/testing"
import { fixture } from "./support/fixtures.js"

const withEnv = (env: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromEnv({ env }))

const sendOne = (env: Record<string, string>, overrides: Partial<GoogleClient.Options> = {}) =>
  GoogleLanguageModel.make({ model: "gemini-2.5-flash", retry: false }).pipe(
    Effect.flatMap((model) => model.generate(request([Messages.user("Hi")]))),
    Effect.provide(GoogleClient.layerConfig(overrides).pipe(Layer.provide(withEnv(env))))
  )

describe("GoogleClient.layerConfig", () => {
  it.effect("reads GEMINI_API_KEY first, GOOGLE_API_KEY otherwise, and GEMINI_BASE_URL; sends extra headers", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.json(fixture("generate/text.json")),
        ReplayServer.json(fixture("generate/text.json"))
      )
      yield* sendOne({ GEMINI_API_KEY: "AIzaGeminiKey0123456789", GOOGLE_API_KEY: "AIzaGoogleKey0123456789", GEMINI_BASE_URL: server.baseURL })
      yield* sendOne({ GOOGLE_API_KEY: "AIzaGoogleKey0123456789", GEMINI_BASE_URL: server.baseURL }, { headers: { "x-tenant": "acme" } })
      expect(server.requests.map((r) => r.headers["x-goog-api-key"])).toEqual(["AIzaGeminiKey0123456789", "AIzaGoogleKey0123456789"])
      expect(server.requests[1]!.headers["x-tenant"]).toBe("acme")
    }))

  it.effect("without a key the layer fails with a ConfigError naming the variable", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Layer.build(GoogleClient.layerConfig().pipe(Layer.provide(withEnv({})))).pipe(Effect.scoped))
      expect(failure._tag).toBe("ConfigError")
      expect(String(failure)).toContain("GEMINI_API_KEY")
      expect(String(failure)).toContain("GOOGLE_API_KEY")
    }))
})

describe("GoogleClient.openStream", () => {
  it.effect("wraps another SDK stream the same way: its events as a stream; a failure while opening is typed, the key redacted", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.sse(fixture("stream/text.sse")),
        ReplayServer.json(fixture("errors/400-api-key-invalid.json"), { status: 400 })
      )
      const client = yield* GoogleClient.make({ apiKey: Redacted.make(apiKey), baseURL: server.baseURL })
      const open = () =>
        client.openStream((sdk, signal) =>
          sdk.models.generateContentStream({ model: "gemini-2.5-flash", contents: "Hi", config: { abortSignal: signal } })
        )
      const events = yield* Effect.scoped(Effect.flatMap(open(), Stream.runCollect))
      expect(events.length).toBeGreaterThan(0)
      expect(server.requests[0]!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
      const error = yield* Effect.flip(Effect.scoped(open()))
      expect(error._tag).toBe("AuthenticationError")
      expect(error.message).not.toContain(apiKey)
    }))
})
