import { ChatError, LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import * as OpenAiClient from "../src/OpenAiClient.js"
import { Retry } from "../src/index.js"
import { apiKey, chatModel, clientLayer, request, responsesModel } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"
import { realSleep, withSleepProbe } from "./support/SleepProbe.js"

const ask = request([Messages.user("Hello")])

const quota = () => ReplayServer.fixture("errors/insufficient-quota.json")
/** Synthetic: the body of a passing rate limit (the shape of the recorded quota error, another code). */
const rateLimitBody = {
  error: { message: "Rate limit reached for requests per min. Please try again in 3s.", type: "requests", param: null, code: "rate_limit_exceeded" }
}
const rateLimit = () => ReplayServer.json(rateLimitBody, { status: 429, headers: { "retry-after": "3" } })
const serverError = (status = 500) =>
  ReplayServer.json({ error: { message: "The server had an error while processing your request.", type: "server_error", param: null, code: null } }, { status })

/** Synthetic: the API echoes the key it was given, as its 401 message does. */
const unauthorized = (status: number) =>
  ReplayServer.json({
    error: {
      message: `Incorrect API key provided: ${apiKey}. Masked: sk-proj-************************CRET. You can find your API key at https://platform.openai.com/account/api-keys.`,
      type: "invalid_request_error",
      param: null,
      code: "invalid_api_key"
    }
  }, { status })

const noKeyIn = (error: unknown) => {
  const texts = [
    error instanceof Error ? error.message : "",
    String(error),
    JSON.stringify(error)
  ]
  for (const text of texts) {
    expect(text).not.toContain(apiKey)
    expect(text).not.toContain("sk-proj-")
  }
}

describe("errors", () => {
  it.effect("maps a 400 to InvalidRequest with the API's message, code and param (invalid-request-400-chat.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("errors/invalid-request-400-chat.json"), { status: 400 }))
      const model = yield* chatModel(server, { retry: Schedule.recurs(3) })
      const error = yield* Effect.flip(model.generate(ask))
      expect(error).toBeInstanceOf(ChatError.InvalidRequest)
      expect(error).toMatchObject({
        _tag: "InvalidRequest",
        status: 400,
        code: "unsupported_value",
        param: "messages[0].role",
        message: "Unsupported value: 'messages[0].role' does not support 'system' with this model."
      })
      expect(server.requests).toHaveLength(1)
      noKeyIn(error)
    }))

  it.effect("maps a 400 answered to a stream request (invalid-request-400-responses.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("errors/invalid-request-400-responses.json"), { status: 400 }))
      const model = yield* responsesModel(server)
      const error = yield* Effect.flip(LanguageModel.collect(model.stream(request([Messages.user("Hi")], [], { temperature: -1 }))))
      expect(error).toMatchObject({ _tag: "InvalidRequest", status: 400, code: "decimal_below_min_value", param: "temperature" })
      expect((server.requests[0]!.body as Record<string, unknown>)["temperature"]).toBe(-1)
    }))

  it.effect("maps context_length_exceeded to ContextLengthExceeded (synthetic body)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json({
        error: {
          message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded"
        }
      }, { status: 400 }))
      const model = yield* chatModel(server)
      const error = yield* Effect.flip(model.generate(ask))
      expect(error._tag).toBe("ContextLengthExceeded")
      expect(error.message).toContain("maximum context length is 128000 tokens")
    }))

  it.effect("maps a 429 to RateLimited with retry-after; an exhausted quota is not retried (insufficient-quota.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(rateLimit())
      const model = yield* chatModel(server, { retry: false })
      const error = yield* Effect.flip(model.generate(ask))
      expect(error).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 3000, code: "rate_limit_exceeded" })
      expect(ChatError.isRetryable(error)).toBe(true)

      server.enqueue(ReplayServer.json(quota(), { status: 429, headers: { "retry-after": "3" } }))
      const quotaModel = yield* chatModel(server, { retry: Schedule.recurs(5) })
      const exhausted = yield* Effect.flip(quotaModel.generate(ask))
      expect(exhausted).toMatchObject({ _tag: "RateLimited", code: "insufficient_quota" })
      expect(exhausted.message).toContain("You exceeded your current quota")
      expect(ChatError.isRetryable(exhausted)).toBe(false)
      // Waiting does not refill a quota: the request was sent once.
      expect(server.requests.length).toBe(2)
    }))

  it.effect("maps a 401 and a 403 to AuthenticationError without retrying, and never shows the key", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(unauthorized(401), unauthorized(403))
      const model = yield* chatModel(server, { retry: Schedule.recurs(5) })
      const first = yield* Effect.flip(model.generate(ask))
      expect(first).toMatchObject({ _tag: "AuthenticationError", status: 401 })
      expect(server.requests).toHaveLength(1)
      expect(server.requests[0]!.headers["authorization"]).toBe(`Bearer ${apiKey}`)
      expect(first.message).toContain("Incorrect API key provided")
      noKeyIn(first)
      const second = yield* Effect.flip(model.generate(ask))
      expect(second).toMatchObject({ _tag: "AuthenticationError", status: 403 })
      expect(server.requests).toHaveLength(2)
      noKeyIn(second)
    }))

  it.effect("maps a body that is not JSON, and a completion without choices, to MalformedResponse", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json("<html>oops</html>"), ReplayServer.json({ id: "chatcmpl-1", object: "chat.completion" }))
      const model = yield* chatModel(server)
      expect((yield* Effect.flip(model.generate(ask)))._tag).toBe("MalformedResponse")
      expect((yield* Effect.flip(model.generate(ask)))._tag).toBe("MalformedResponse")
    }))

  it.effect("maps an unreachable server to NetworkError", () =>
    Effect.gen(function*() {
      const model = yield* OpenAiChatCompletions.make({ model: "m", retry: false }).pipe(
        Effect.provide(OpenAiClient.layer({ apiKey: Redacted.make(apiKey), baseURL: "http://127.0.0.1:1/v1" }))
      )
      const error = yield* Effect.flip(model.generate(ask))
      expect(error._tag).toBe("NetworkError")
      noKeyIn(error)
    }))

  it.effect("fails a Responses stream that reports an error event, with the mapped error (stream-error-insufficient-quota.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("responses/stream-error-insufficient-quota.sse")))
      const model = yield* responsesModel(server, { retry: Schedule.recurs(3) })
      const error = yield* Effect.flip(Stream.runCollect(model.stream(ask)))
      expect(error._tag).toBe("RateLimited")
      expect(error.message).toContain("You exceeded your current quota")
      expect(server.requests).toHaveLength(1)
      noKeyIn(error)
    }))

  it.effect("fails a Responses stream that ends with response.failed (synthetic event)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const failed = {
        type: "response.failed",
        sequence_number: 1,
        response: { id: "resp_1", object: "response", status: "failed", model: "gpt-4o", output: [], error: { code: "server_error", message: "The model crashed." } }
      }
      server.enqueue(ReplayServer.sse(`event: response.failed\ndata: ${JSON.stringify(failed)}\n\n`))
      const model = yield* responsesModel(server)
      const error = yield* Effect.flip(LanguageModel.collect(model.stream(ask)))
      expect(error._tag).toBe("ServerError")
      expect(error.message).toContain("The model crashed.")
    }))
})

describe("retries", () => {
  it.effect("retries a 429 after the retry-after it asked for, then succeeds (default policy on the TestClock)", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(rateLimitBody, { status: 429, headers: { "retry-after": "7" } }),
        ReplayServer.json(ReplayServer.fixture("chat-completions/text.json"))
      )
      const model = yield* OpenAiChatCompletions.make({ model: "gpt-4.1-nano" }).pipe(Effect.provide(clientLayer(server)))
      const fiber = yield* Effect.forkChild(model.generate(ask))
      yield* server.waitForRequests(1)
      yield* probe.untilSomeoneSleeps
      yield* TestClock.adjust("6999 millis")
      yield* realSleep(30)
      expect(server.requests).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      const response = yield* Fiber.join(fiber)
      expect(response.finishReason).toBe("stop")
      expect(server.requests).toHaveLength(2)
    })))

  it.effect("gives up after the default policy's 3 retries of a 500, with a typed ServerError", () =>
    withSleepProbe((probe) => Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(serverError(), serverError(), serverError(), serverError(), ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const model = yield* OpenAiChatCompletions.make({ model: "gpt-4.1-nano" }).pipe(Effect.provide(clientLayer(server)))
      const fiber = yield* Effect.forkChild(Effect.flip(model.generate(ask)))
      // Move the TestClock on whenever the retry sleeps, until the call gives up.
      while (fiber.pollUnsafe() === undefined) {
        if (probe.pending() > 0) yield* TestClock.adjust("30 seconds")
        else yield* realSleep(2)
      }
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "ServerError", status: 500 })
      expect(server.requests).toHaveLength(4)
    })))

  it.live("retries with a custom Schedule (tiny delays), then surfaces the last error", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(serverError(502), serverError(503), serverError(500))
      const model = yield* chatModel(server, { retry: Retry.schedule({ retries: 2, base: "1 millis", maxDelay: "2 millis" }) })
      const error = yield* Effect.flip(model.generate(ask))
      expect(error).toMatchObject({ _tag: "ServerError", status: 500 })
      expect(server.requests).toHaveLength(3)
      noKeyIn(error)
    }).pipe(Effect.scoped))

  it.effect("retries a 500 then succeeds; retries a stream while it opens", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        serverError(),
        ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")),
        ReplayServer.json(rateLimitBody, { status: 429 }),
        ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse"))
      )
      const model = yield* chatModel(server, { retry: Schedule.recurs(2) })
      const response = yield* model.generate(ask)
      expect(response.finishReason).toBe("stop")
      const streamed = yield* LanguageModel.collect(model.stream(ask))
      expect(streamed.finishReason).toBe("stop")
      expect(server.requests).toHaveLength(4)
    }))

  it.effect("does not retry when retry is false", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(serverError())
      const model = yield* chatModel(server, { retry: false })
      expect((yield* Effect.flip(model.generate(ask)))._tag).toBe("ServerError")
      expect(server.requests).toHaveLength(1)
    }))
})

describe("streams that break off", () => {
  const cutChat = ReplayServer.firstEvents(ReplayServer.fixture("chat-completions/stream-tool-call.sse"), 5)
  const cutResponses = ReplayServer.firstEvents(ReplayServer.fixture("responses/stream-function-call.sse"), 5)

  it.effect("a Chat Completions stream cut mid-way fails with NetworkError", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.cut(cutChat), ReplayServer.cut(cutChat))
      const model = yield* chatModel(server, { retry: Schedule.recurs(3) })
      const error = yield* Effect.flip(Stream.runCollect(model.stream(ask)))
      expect(error._tag).toBe("NetworkError")
      noKeyIn(error)
      const collected = yield* Effect.flip(LanguageModel.collect(model.stream(ask)))
      expect(collected._tag).toBe("NetworkError")
      expect(server.requests).toHaveLength(2)
    }))

  it.effect("a Responses stream cut mid-way fails with NetworkError", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.cut(cutResponses))
      const model = yield* responsesModel(server)
      const error = yield* Effect.flip(LanguageModel.collect(model.stream(ask)))
      expect(error._tag).toBe("NetworkError")
    }))

  it.effect("a stream that ends cleanly before its finish fails with NetworkError", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(cutChat), ReplayServer.sse(cutResponses))
      const chat = yield* chatModel(server)
      expect((yield* Effect.flip(Stream.runCollect(chat.stream(ask))))._tag).toBe("NetworkError")
      const responses = yield* responsesModel(server)
      expect((yield* Effect.flip(Stream.runCollect(responses.stream(ask))))._tag).toBe("NetworkError")
    }))
})

describe("interruption", () => {
  it.effect("interrupting generate aborts the HTTP request", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.hang())
      const model = yield* chatModel(server)
      const fiber = yield* Effect.forkChild(model.generate(ask))
      yield* server.waitForRequests(1)
      yield* Fiber.interrupt(fiber)
      yield* server.waitForClientCloses(1)
      expect(server.clientCloses()).toBe(1)
    }))

  it.effect("interrupting a stream mid-way aborts the HTTP request", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const partial = ReplayServer.firstEvents(ReplayServer.fixture("responses/stream-text.sse"), 5)
      server.enqueue(ReplayServer.hang({ sse: true, body: partial }))
      const model = yield* responsesModel(server)
      let seen = 0
      const fiber = yield* Effect.forkChild(Stream.runForEach(model.stream(ask), () => Effect.sync(() => seen++)))
      yield* server.waitForRequests(1)
      while (seen < 1) yield* realSleep(2)
      yield* Fiber.interrupt(fiber)
      yield* server.waitForClientCloses(1)
      expect(seen).toBeGreaterThan(0)
    }))

  it.effect("a consumer that stops early aborts the HTTP request", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const partial = ReplayServer.firstEvents(ReplayServer.fixture("chat-completions/stream-text.sse"), 4)
      server.enqueue(ReplayServer.hang({ sse: true, body: partial }))
      const model = yield* chatModel(server)
      const parts = yield* Stream.runCollect(Stream.take(model.stream(ask), 2))
      expect(parts).toHaveLength(2)
      yield* server.waitForClientCloses(1)
    }))
})

describe("the API key", () => {
  it.effect("is absent from every error message, even when the server echoes it (synthetic echoing bodies)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const echo = (status: number, code: string | null, type = "invalid_request_error") =>
        ReplayServer.json({ error: { message: `Bad key ${apiKey} (or sk-proj-****CRET)`, type, param: null, code } }, { status })
      const echoingEvent = (type: string) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: 1, code: "server_error", message: `boom ${apiKey}`, param: null, response: { id: "r", object: "response", status: "failed", model: "m", output: [], error: { code: "server_error", message: `boom ${apiKey}` } } })}\n\n`
      server.enqueue(
        echo(400, "invalid_value"),
        echo(400, "context_length_exceeded"),
        echo(401, "invalid_api_key"),
        echo(403, null),
        echo(404, "model_not_found"),
        echo(429, "rate_limit_exceeded", "requests"),
        echo(500, null, "server_error"),
        ReplayServer.json(`not json ${apiKey}`),
        ReplayServer.sse(echoingEvent("error")),
        ReplayServer.sse(echoingEvent("response.failed")),
        ReplayServer.cut(`event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\n`)
      )
      const chat = yield* chatModel(server)
      const responses = yield* responsesModel(server)
      const errors: Array<ChatError.ModelError> = []
      for (let i = 0; i < 8; i++) errors.push(yield* Effect.flip(chat.generate(ask)))
      for (let i = 0; i < 3; i++) errors.push(yield* Effect.flip(LanguageModel.collect(responses.stream(ask))))
      expect(errors.map((error) => error._tag)).toEqual([
        "InvalidRequest",
        "ContextLengthExceeded",
        "AuthenticationError",
        "AuthenticationError",
        "InvalidRequest",
        "RateLimited",
        "ServerError",
        "MalformedResponse",
        "ServerError",
        "ServerError",
        "NetworkError"
      ])
      for (const error of errors) noKeyIn(error)
      expect(server.requests.every((r) => r.headers["authorization"] === `Bearer ${apiKey}`)).toBe(true)
    }))
})
