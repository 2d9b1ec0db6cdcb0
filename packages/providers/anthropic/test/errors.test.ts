/**
 * Failures on the real SDK against the replay server: HTTP errors mapped to
 * typed `ChatError`s (bodies in Anthropic's documented error shape), retries
 * on an Effect `Schedule` (the SDK's own are off) honouring `retry-after`
 * on the `TestClock`, and the key never shown.
 */
import { ChatError, LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { TestClock } from "effect/testing"
import { realSleep, withSleepProbe } from "../../openai/test/support/SleepProbe.js"
import * as AnthropicClient from "../src/AnthropicClient.js"
import * as AnthropicLanguageModel from "../src/AnthropicLanguageModel.js"
import { makeRedactor } from "../src/internal/errors.js"
import { Retry } from "../src/index.js"
import { apiKey, model, request } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("Hello")])
const text = () => ReplayServer.json(ReplayServer.fixture("messages/text-after-tool.json"))
const error = (name: string, status: number, headers: Record<string, string> = {}) =>
  ReplayServer.json(ReplayServer.fixture(`errors/${name}`), { status, headers })

const noKeyIn = (e: unknown) => {
  for (const text of [e instanceof Error ? e.message : "", String(e), JSON.stringify(e)]) {
    expect(text).not.toContain(apiKey)
    expect(text).not.toContain("TESTKEY")
  }
}

describe("errors", () => {
  it.effect("maps 401 and 403 to AuthenticationError, without retrying", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(error("authentication-401.json", 401), error("permission-403.json", 403))
      const m = yield* model(server, { retry: Schedule.recurs(3) })
      const e401 = yield* Effect.flip(m.generate(ask))
      expect(e401).toBeInstanceOf(ChatError.AuthenticationError)
      expect(e401).toMatchObject({ status: 401, message: "Anthropic refused the credentials (HTTP 401): invalid x-api-key" })
      const e403 = yield* Effect.flip(m.generate(ask))
      expect(e403).toMatchObject({ _tag: "AuthenticationError", status: 403 })
      expect(server.requests).toHaveLength(2)
      noKeyIn(e401)
    }))

  it.effect("maps a 400 to InvalidRequest with the API's message and type; a too-long prompt to ContextLengthExceeded", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(error("invalid-request-400.json", 400), error("prompt-too-long-400.json", 400))
      const m = yield* model(server, { retry: Schedule.recurs(3) })
      const invalid = yield* Effect.flip(m.generate(ask))
      expect(invalid).toBeInstanceOf(ChatError.InvalidRequest)
      expect(invalid).toMatchObject({ status: 400, code: "invalid_request_error" })
      expect(invalid.message).toContain("Expected `thinking` or `redacted_thinking`")
      const tooLong = yield* Effect.flip(m.generate(ask))
      expect(tooLong).toBeInstanceOf(ChatError.ContextLengthExceeded)
      expect(tooLong.message).toContain("prompt is too long: 208576 tokens > 200000 maximum")
      expect(server.requests).toHaveLength(2)
    }))

  it.effect("maps a 413 to InvalidRequest (request_too_large), also when answered to a stream request", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(error("request-too-large-413.json", 413), error("request-too-large-413.json", 413))
      const m = yield* model(server, { retry: Schedule.recurs(3) })
      expect(yield* Effect.flip(m.generate(ask))).toMatchObject({ _tag: "InvalidRequest", status: 413, code: "request_too_large" })
      expect(yield* Effect.flip(LanguageModel.collect(m.stream(ask)))).toMatchObject({ _tag: "InvalidRequest", status: 413 })
      expect(server.requests).toHaveLength(2)
    }))

  it.effect("maps a 429 to RateLimited and a 529 to RateLimited overloaded_error, both with retry-after", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(error("rate-limit-429.json", 429, { "retry-after": "3" }), error("overloaded-529.json", 529, { "retry-after": "2" }))
      const m = yield* model(server)
      const limited = yield* Effect.flip(m.generate(ask))
      expect(limited).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 3000, code: "rate_limit_error" })
      const overloaded = yield* Effect.flip(m.generate(ask))
      expect(overloaded).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 2000, code: "overloaded_error" })
      expect(overloaded.message).toBe("Anthropic is overloaded (HTTP 529): Overloaded")
      expect(ChatError.isRetryable(limited) && ChatError.isRetryable(overloaded)).toBe(true)
    }))

  it.effect("maps a 500 to ServerError and a body that is not JSON to a typed error", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json({ type: "error", error: { type: "api_error", message: "Internal server error" } }, { status: 500 }),
        ReplayServer.json("{not json", { status: 200 })
      )
      const m = yield* model(server)
      expect(yield* Effect.flip(m.generate(ask))).toMatchObject({ _tag: "ServerError", status: 500 })
      expect((yield* Effect.flip(m.generate(ask)))._tag).toBe("MalformedResponse")
    }))

  it.effect("maps a 408 and a timeout_error to NetworkError, a 409 and a 503 to ServerError (all retryable)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const body = (type: string, message: string) => ({ type: "error", error: { type, message } })
      server.enqueue(
        ReplayServer.json(body("timeout_error", "Request timeout"), { status: 408 }),
        ReplayServer.json(body("timeout_error", "Stream timeout"), { status: 504 }),
        ReplayServer.json(body("conflict_error", "Conflict"), { status: 409 }),
        ReplayServer.json(body("api_error", "Service unavailable"), { status: 503 })
      )
      const m = yield* model(server)
      const errors = [
        yield* Effect.flip(m.generate(ask)),
        yield* Effect.flip(m.generate(ask)),
        yield* Effect.flip(m.generate(ask)),
        yield* Effect.flip(m.generate(ask))
      ]
      expect(errors.map((e) => e._tag)).toEqual(["NetworkError", "NetworkError", "ServerError", "ServerError"])
      expect(errors.every(ChatError.isRetryable)).toBe(true)
    }))

  it.effect("maps an unreachable server to NetworkError", () =>
    Effect.gen(function*() {
      const m = yield* AnthropicLanguageModel.make({ model: "claude-opus-4-8", retry: false }).pipe(
        Effect.provide(AnthropicClient.layer({ apiKey: Redacted.make(apiKey), baseURL: "http://127.0.0.1:1" }))
      )
      const e = yield* Effect.flip(m.generate(ask))
      expect(e).toBeInstanceOf(ChatError.NetworkError)
      noKeyIn(e)
    }))

  it.effect("never shows the key, even when the server echoes it", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json({ type: "error", error: { type: "authentication_error", message: `invalid key ${apiKey}` } }, { status: 401 }))
      const e = yield* Effect.flip((yield* model(server)).generate(ask))
      expect(e.message).toContain("[redacted]")
      noKeyIn(e)
      expect(makeRedactor([])("key sk-ant-api03-abcdefgh here")).toBe("key [redacted] here")
    }))
})

describe("retries", () => {
  it.effect("retries a 529 after the retry-after it asked for, then succeeds (default policy on the TestClock)", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(error("overloaded-529.json", 529, { "retry-after": "7" }), text())
      const m = yield* AnthropicLanguageModel.make({ model: "claude-opus-4-8" }).pipe(
        Effect.provide(AnthropicClient.layer({ apiKey: Redacted.make(apiKey), baseURL: server.baseURL }))
      )
      const fiber = yield* Effect.forkChild(m.generate(ask))
      yield* server.waitForRequests(1)
      yield* probe.untilSomeoneSleeps
      yield* TestClock.adjust("6999 millis")
      yield* realSleep(30)
      expect(server.requests).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      const response = yield* Fiber.join(fiber)
      expect(response.finishReason).toBe("stop")
      expect(server.requests).toHaveLength(2)
      // The SDK did not retry on its own: each attempt is ours.
      expect(server.requests.map((r) => r.headers["x-stainless-retry-count"])).toEqual(["0", "0"])
    })))

  it.effect("retries a 429 stream while it opens, honouring retry-after, then streams", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(error("rate-limit-429.json", 429, { "retry-after": "5" }), ReplayServer.sse(ReplayServer.fixture("stream/text.sse")))
      const m = yield* model(server, { retry: Retry.defaultPolicy })
      const fiber = yield* Effect.forkChild(LanguageModel.collect(m.stream(ask)))
      yield* server.waitForRequests(1)
      yield* probe.untilSomeoneSleeps
      yield* TestClock.adjust("5 seconds")
      const response = yield* Fiber.join(fiber)
      expect(Messages.textOf({ role: "assistant", parts: response.parts })).toBe("Hello there!")
      expect(server.requests).toHaveLength(2)
    })))

  it.effect("gives up after the default policy's 3 retries of a 529, with the typed error", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const overloaded = () => error("overloaded-529.json", 529)
      server.enqueue(overloaded(), overloaded(), overloaded(), overloaded(), text())
      const m = yield* model(server, { retry: Retry.defaultPolicy })
      const fiber = yield* Effect.forkChild(Effect.flip(m.generate(ask)))
      while (fiber.pollUnsafe() === undefined) {
        if (probe.pending() > 0) yield* TestClock.adjust("30 seconds")
        else yield* realSleep(2)
      }
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "RateLimited", code: "overloaded_error" })
      expect(server.requests).toHaveLength(4)
    })))

  it.effect("a retry-after longer than maxRetryAfter is surfaced at once; retry false never retries", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(error("rate-limit-429.json", 429, { "retry-after": "3600" }), error("overloaded-529.json", 529))
      const patient = yield* model(server, { retry: Retry.schedule({ maxRetryAfter: "1 minute" }) })
      expect(yield* Effect.flip(patient.generate(ask))).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 3_600_000 })
      expect(server.requests).toHaveLength(1)
      const never = yield* model(server, { retry: false })
      expect((yield* Effect.flip(never.generate(ask)))._tag).toBe("RateLimited")
      expect(server.requests).toHaveLength(2)
    }))
})

describe("client configuration", () => {
  it.effect("layerConfig reads ANTHROPIC_API_KEY as a redacted secret and ANTHROPIC_BASE_URL", () =>
    Effect.gen(function*() {
      const provider = ConfigProvider.fromEnv({ env: { ANTHROPIC_API_KEY: apiKey, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" } })
      const client = yield* AnthropicClient.AnthropicClient.pipe(
        Effect.provide(AnthropicClient.layerConfig().pipe(Layer.provide(ConfigProvider.layer(provider))))
      )
      expect(client.baseURL).toBe("http://127.0.0.1:9")
      expect(client.redact(`x ${apiKey} y`)).toBe("x [redacted] y")
      const missing = yield* Effect.flip(AnthropicClient.AnthropicClient.pipe(
        Effect.provide(AnthropicClient.layerConfig().pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: {} })))))
      ))
      // Effect 4 has no `isMissingDataOnly`: the key is absent (no value at its path), not unreadable (a SourceError).
      expect(missing).toBeInstanceOf(Config.ConfigError)
      expect(missing.cause).toBeInstanceOf(Schema.SchemaError)
      expect(missing.cause).toMatchObject({ issue: { _tag: "Pointer", path: ["ANTHROPIC_API_KEY"] } })
    }))
})
