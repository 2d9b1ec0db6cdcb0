/**
 * Failures against the replay server: Google's error bodies mapped to typed
 * errors (the key never in a message), retries on Effect's Schedule and
 * TestClock (`retry-after` and RetryInfo honoured), broken bodies and
 * streams, stalls and timeouts.
 */
import { ChatError, LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { withSleepProbe } from "../../openai/test/support/SleepProbe.js"
import * as GoogleLanguageModel from "../src/GoogleLanguageModel.js"
import { Retry } from "../src/index.js"
import { apiKey, clientLayer, geminiModel, request } from "./support/helpers.js"
import { ReplayServer } from "@chat-ts/core/testing"
import { fixture } from "./support/fixtures.js"

const ask = request([Messages.user("Hello")])

const error = (name: string, status: number, headers: Readonly<Record<string, string>> = {}) =>
  ReplayServer.json(fixture(`errors/${name}.json`), { status, headers })

const text = () => ReplayServer.json(fixture("generate/text.json"))

const noKeyIn = (failure: unknown) => {
  for (const shown of [failure instanceof Error ? failure.message : "", String(failure), JSON.stringify(failure)]) {
    expect(shown).not.toContain(apiKey)
    expect(shown).not.toContain("AIza")
  }
}

/** A few real milliseconds (the HTTP exchange runs in real time; the TestClock only drives Effect's timers). */
const realPause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

/** Waits (in real time) until `check` holds. */
const eventually = (check: Effect.Effect<boolean>): Effect.Effect<void> =>
  Effect.flatMap(check, (ok) => ok ? Effect.void : Effect.andThen(realPause, eventually(check)))

describe("errors", () => {
  it.effect("a wrong key (400 with ErrorInfo API_KEY_INVALID) and a 403 are AuthenticationErrors, never retried", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(error("400-api-key-invalid", 400), error("403-permission-denied", 403))
      const model = yield* geminiModel(server, { retry: Schedule.recurs(3) })
      const invalid = yield* Effect.flip(model.generate(ask))
      expect(invalid).toMatchObject({ _tag: "AuthenticationError", status: 400 })
      expect(invalid.message).toContain("API key not valid")
      const denied = yield* Effect.flip(model.generate(ask))
      expect(denied).toMatchObject({ _tag: "AuthenticationError", status: 403 })
      expect(server.requests).toHaveLength(2)
    }))

  it.effect("a 400 is InvalidRequest with Google's message and status name; a token-limit 400 is ContextLengthExceeded", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(error("400-invalid-argument", 400), error("400-token-limit", 400))
      const model = yield* geminiModel(server, { retry: Schedule.recurs(3) })
      const invalid = yield* Effect.flip(model.generate(ask))
      expect(invalid).toBeInstanceOf(ChatError.InvalidRequest)
      expect(invalid).toMatchObject({ status: 400, code: "INVALID_ARGUMENT" })
      expect(invalid.message).toContain("should be non-empty for OBJECT type")
      const tooLong = yield* Effect.flip(model.generate(ask))
      expect(tooLong._tag).toBe("ContextLengthExceeded")
      expect(server.requests).toHaveLength(2)
    }))

  it.effect("a 429 is RateLimited with RetryInfo's delay; a retry-after header wins", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(error("429-resource-exhausted", 429), error("429-resource-exhausted", 429, { "retry-after": "5" }))
      const model = yield* geminiModel(server)
      const fromDetails = yield* Effect.flip(model.generate(ask))
      expect(fromDetails).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 37_000, code: "RESOURCE_EXHAUSTED" })
      const fromHeader = yield* Effect.flip(model.generate(ask))
      expect(fromHeader).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 5_000 })
    }))

  it.effect("500 and 503 are ServerErrors; a stream request's 503 too", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(error("500-internal", 500), error("503-unavailable", 503))
      const model = yield* geminiModel(server)
      expect(yield* Effect.flip(model.generate(ask))).toMatchObject({ _tag: "ServerError", status: 500 })
      const streamed = yield* Effect.flip(LanguageModel.collect(model.stream(ask)))
      expect(streamed).toMatchObject({ _tag: "ServerError", status: 503 })
      expect(streamed.message).toContain("overloaded")
    }))

  it.effect("the key never shows in an error, even when the server echoes it", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.json({ error: { code: 400, message: `API key not valid: ${apiKey}`, status: "INVALID_ARGUMENT" } }, { status: 400 }),
        ReplayServer.json({ error: { code: 500, message: `failed for key=${apiKey}&x=1` } }, { status: 500 })
      )
      const model = yield* geminiModel(server)
      noKeyIn(yield* Effect.flip(model.generate(ask)))
      noKeyIn(yield* Effect.flip(LanguageModel.collect(model.stream(ask))))
    }))

  it.effect("a body that is not JSON, an HTML page with status 200 and a 200 without candidates are MalformedResponses", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.json("{\"candidates\": [", { status: 200 }),
        { _tag: "Body", status: 200, headers: { "content-type": "text/html" }, body: "<html><body>Gateway</body></html>" },
        ReplayServer.json({ usageMetadata: { promptTokenCount: 1 } })
      )
      const model = yield* geminiModel(server, { retry: Schedule.recurs(3) })
      expect((yield* Effect.flip(model.generate(ask)))._tag).toBe("MalformedResponse")
      expect((yield* Effect.flip(LanguageModel.collect(model.stream(ask))))._tag).toBe("MalformedResponse")
      expect((yield* Effect.flip(model.generate(ask)))._tag).toBe("MalformedResponse")
      expect(server.requests).toHaveLength(3)
    }))

  it.effect("a stream cut mid-way fails with NetworkError after the parts that came; it is not retried", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const sse = fixture("stream/text.sse")
      server.enqueue(ReplayServer.cut(sse.slice(0, sse.indexOf("\r\n\r\n") + 4) + "data: {\"candidates\": [{\"content\""))
      const model = yield* geminiModel(server, { retry: Schedule.recurs(3) })
      const seen: Array<LanguageModel.StreamPart> = []
      const failure = yield* Effect.flip(Stream.runForEach(model.stream(ask), (part) => Effect.sync(() => seen.push(part))))
      expect(failure._tag).toBe("NetworkError")
      expect(seen).toEqual([{ _tag: "TextDelta", text: "The sky is blue because" }])
      expect(server.requests).toHaveLength(1)
    }))

  it.effect("a stream that ends cleanly without a finish reason broke off: NetworkError", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.sse(ReplayServer.firstEvents(fixture("stream/text.sse").replace(/\r\n/g, "\n"), 2)))
      const model = yield* geminiModel(server)
      const failure = yield* Effect.flip(LanguageModel.collect(model.stream(ask)))
      expect(failure._tag).toBe("NetworkError")
      expect(failure.message).toContain("no finish reason")
    }))
})

describe("retries", () => {
  it.effect("retries a 429 after the RetryInfo delay it asked for, then succeeds (default policy on the TestClock)", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(error("429-resource-exhausted", 429), text())
      const model = yield* GoogleLanguageModel.make({ model: "gemini-2.5-flash" }).pipe(Effect.provide(clientLayer(server)))
      const fiber = yield* Effect.forkChild(model.generate(ask))
      yield* server.waitForRequests(1)
      yield* probe.untilSomeoneSleeps
      yield* TestClock.adjust("36999 millis")
      yield* Effect.repeat(realPause, { times: 5 })
      expect(server.requests).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      const response = yield* Fiber.join(fiber)
      expect(response.finishReason).toBe("stop")
      expect(server.requests).toHaveLength(2)
    })))

  it.effect("gives up after the default policy's 3 retries of a 503, with a typed ServerError", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(...Array.from({ length: 4 }, () => error("503-unavailable", 503)), text())
      const model = yield* GoogleLanguageModel.make({ model: "gemini-2.5-flash" }).pipe(Effect.provide(clientLayer(server)))
      const fiber = yield* Effect.forkChild(Effect.flip(model.generate(ask)))
      while (fiber.pollUnsafe() === undefined) {
        if (probe.pending() > 0) yield* TestClock.adjust("30 seconds")
        else yield* realPause
      }
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "ServerError", status: 503 })
      expect(server.requests).toHaveLength(4)
    })))

  it.live("a custom Schedule retries a stream while it opens, then the stream runs", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(error("500-internal", 500), ReplayServer.sse(fixture("stream/text.sse")))
      const model = yield* geminiModel(server, { retry: Retry.schedule({ retries: 2, base: "1 millis", maxDelay: "2 millis" }) })
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.finishReason).toBe("stop")
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))
})

describe("timeouts", () => {
  it.effect("a stream that stalls after one chunk fails after idleTimeout and the request is closed", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const sse = fixture("stream/text.sse").replace(/\r\n/g, "\n")
      server.enqueue(ReplayServer.hang({ sse: true, body: ReplayServer.firstEvents(sse, 1) }))
      const model = yield* geminiModel(server, { idleTimeout: "30 seconds", retry: Schedule.recurs(3) })
      const seen: Array<LanguageModel.StreamPart> = []
      const fiber = yield* Effect.forkChild(Stream.runForEach(model.stream(ask), (part) => Effect.sync(() => seen.push(part))))
      yield* eventually(Effect.sync(() => seen.length > 0))
      yield* probe.untilSomeoneSleeps
      yield* TestClock.adjust("30 seconds")
      const failure = yield* Effect.flip(Fiber.join(fiber))
      expect(failure._tag).toBe("NetworkError")
      expect(failure.message).toContain("idleTimeout")
      yield* server.waitForClientCloses(1)
      expect(server.requests).toHaveLength(1)
    })))

  it.effect("totalTimeout bounds a generate call whose body never ends; interrupting closes the request", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.hang())
      const model = yield* geminiModel(server, { totalTimeout: "2 minutes" })
      const fiber = yield* Effect.forkChild(model.generate(ask))
      yield* server.waitForRequests(1)
      yield* probe.untilSomeoneSleeps
      yield* TestClock.adjust("2 minutes")
      const failure = yield* Effect.flip(Fiber.join(fiber))
      expect(failure._tag).toBe("NetworkError")
      expect(failure.message).toContain("totalTimeout")
      yield* server.waitForClientCloses(1)
    })))
})
