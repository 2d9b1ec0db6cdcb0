import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Exit, Layer, Logger, Option, Result, Stream, Tracer } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { Chat, ChatError, LanguageModel, Messages, Router } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { checkProperty, complete, fileHandlers, files, paused, recorder } from "./support/Chat.helpers.js"

const overloaded = () => new ChatError.ServerError({ message: "overloaded", status: 529 })
const rateLimited = () => new ChatError.RateLimited({ message: "slow down" })
const badRequest = () => new ChatError.InvalidRequest({ message: "bad field", status: 400 })
const request = (text = "Hello"): LanguageModel.Request => ({ messages: Messages.fromUser(text), tools: [], options: {} })

/** A model failing every time with `error`. */
const failing = (error: () => ChatError.ModelError) => MockLanguageModel.make(() => Effect.fail(error()))
/** A model always answering `text`. */
const answering = (text: string) => MockLanguageModel.make(() => MockLanguageModel.text(text))

const routed = (response: LanguageModel.Response) => response.providerMetadata?.[Router.metadataKey]
const textOf = (response: LanguageModel.Response) => Messages.textOf({ role: "assistant", parts: response.parts })

/** Builds a router in a scope of its own (the scope of the test). */
const router = <R = never>(options: Router.Options<ReadonlyArray<Router.Candidate>, R>) => Router.make(options)

describe("Router fallback", () => {
  it.effect("tries the models in order and answers with the first that works, recording it", () =>
    Effect.gen(function*() {
      const a = failing(overloaded)
      const b = failing(rateLimited)
      const c = answering("from c")
      const d = answering("from d")
      const model = yield* router({
        models: [{ name: "a", model: a }, { name: "b", model: b }, { name: "c", model: c }, { name: "d", model: d }]
      })
      const response = yield* model.generate(request())
      expect(textOf(response)).toBe("from c")
      expect(routed(response)).toEqual({ model: "c", failed: ["a", "b"] })
      expect([a.requests.length, b.requests.length, c.requests.length, d.requests.length]).toEqual([1, 1, 1, 0])
    }))

  it.effect("falls back on network errors (an idle timeout is one) and surfaces the last error when all fail", () =>
    Effect.gen(function*() {
      const a = failing(() => new ChatError.NetworkError({ message: "idle timeout" }))
      const b = failing(overloaded)
      const model = yield* router({ models: [{ name: "a", model: a }, { name: "b", model: b }] })
      const error = yield* Effect.flip(model.generate(request()))
      expect(error._tag).toBe("ServerError")
      expect([a.requests.length, b.requests.length]).toEqual([1, 1])
    }))

  for (
    const [label, error] of [
      ["an invalid request (400)", badRequest],
      ["an authentication error", () => new ChatError.AuthenticationError({ message: "bad key", status: 401 })],
      ["an exhausted quota", () => new ChatError.RateLimited({ message: "no quota", code: "insufficient_quota" })],
      ["a context length error (not opted in)", () => new ChatError.ContextLengthExceeded({ message: "too long" })]
    ] as const
  ) {
    it.effect(`does not fall back on ${label}: the error surfaces and the next model is not called`, () =>
      Effect.gen(function*() {
        const a = failing(error)
        const b = answering("from b")
        const model = yield* router({
          models: [{ name: "a", model: a, contextWindow: 8_000 }, { name: "b", model: b, contextWindow: 200_000 }]
        })
        const failure = yield* Effect.flip(model.generate(request()))
        expect(failure._tag).toBe(error()._tag)
        expect(b.requests.length).toBe(0)
      }))
  }

  it.effect("on a context length error, when opted in, goes on to the next model with a larger window only", () =>
    Effect.gen(function*() {
      const small = failing(() => new ChatError.ContextLengthExceeded({ message: "too long" }))
      const same = answering("same window")
      const unknown = answering("no window declared")
      const large = answering("large window")
      const model = yield* router({
        fallbackOnContextLength: true,
        models: [
          { name: "small", model: small, contextWindow: 8_000 },
          { name: "same", model: same, contextWindow: 8_000 },
          { name: "unknown", model: unknown },
          { name: "large", model: large, contextWindow: 200_000 }
        ]
      })
      const response = yield* model.generate(request())
      expect(textOf(response)).toBe("large window")
      expect(routed(response)).toEqual({ model: "large", failed: ["small"] })
      expect([same.requests.length, unknown.requests.length]).toEqual([0, 0])
    }))

  it.effect("surfaces the context length error when no larger model is left", () =>
    Effect.gen(function*() {
      const large = failing(() => new ChatError.ContextLengthExceeded({ message: "too long" }))
      const small = answering("small")
      const model = yield* router({
        fallbackOnContextLength: true,
        models: [{ name: "large", model: large, contextWindow: 200_000 }, { name: "small", model: small, contextWindow: 8_000 }]
      })
      expect((yield* Effect.flip(model.generate(request())))._tag).toBe("ContextLengthExceeded")
      expect(small.requests.length).toBe(0)
    }))
})

describe("Router strategy", () => {
  /** Long conversations go to "long", requests with tools to a model tagged "tools", the rest to "cheap" first. */
  const strategy: Router.Strategy = (request, models) =>
    Effect.sync(() => {
      const size = request.messages.reduce((n, message) => n + Messages.textOf(message).length, 0)
      if (size > 1_000) return ["long"]
      if (request.tools.length > 0) return models.filter((m) => m.tags?.includes("tools")).map((m) => m.name)
      return ["cheap", "long"]
    })

  it.effect("ranks the models per request from its messages and tools", () =>
    Effect.gen(function*() {
      const cheap = answering("cheap")
      const long = answering("long")
      const tools = answering("tools")
      const model = yield* router({
        strategy,
        models: [
          { name: "long", model: long, contextWindow: 1_000_000 },
          { name: "tools", model: tools, tags: ["tools"] },
          { name: "cheap", model: cheap }
        ]
      })
      expect(textOf(yield* model.generate(request("short")))).toBe("cheap")
      expect(textOf(yield* model.generate(request("x".repeat(2_000))))).toBe("long")
      const withTools: LanguageModel.Request = {
        ...request("short"),
        tools: [{ name: "t", description: "", parameters: { type: "object" }, strict: false }]
      }
      expect(textOf(yield* model.generate(withTools))).toBe("tools")
      expect([cheap.requests.length, long.requests.length, tools.requests.length]).toEqual([1, 1, 1])
    }))

  it.effect("only tries the models the strategy named, and fails typed when it named none", () =>
    Effect.gen(function*() {
      const a = failing(overloaded)
      const b = answering("b")
      const model = yield* router({
        strategy: (req) => Effect.succeed(Messages.textOf(req.messages[0]!) === "none" ? [] : ["a"]),
        models: [{ name: "a", model: a }, { name: "b", model: b }]
      })
      expect((yield* Effect.flip(model.generate(request())))._tag).toBe("ServerError")
      expect((yield* Effect.flip(model.generate(request("none"))))._tag).toBe("InvalidRequest")
      expect(b.requests.length).toBe(0)
    }))

  it.effect("a strategy naming an unknown model is a defect naming it", () =>
    Effect.gen(function*() {
      const model = yield* router({
        strategy: () => Effect.succeed(["nope"]),
        models: [{ name: "a", model: answering("a") }]
      })
      const exit = yield* Effect.exit(model.generate(request()))
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("unknown model 'nope'")
    }))

  it("rejects duplicate model names", () => {
    const exit = Effect.runSyncExit(Effect.scoped(Router.make({
      models: [{ name: "a", model: answering("1") }, { name: "a", model: answering("2") }]
    })))
    expect(Exit.isFailure(exit) && String(exit.cause)).toContain("unique")
  })
})

describe("Router circuit breaker", () => {
  it.effect("opens after N failures in a row, leaving the model out, and probes it once after the recovery time", () =>
    Effect.gen(function*() {
      let healthy = false
      const a = MockLanguageModel.make(() => (healthy ? MockLanguageModel.text("a again") : Effect.fail(overloaded())))
      const b = answering("b")
      const model = yield* router({
        breaker: { failureThreshold: 3, recoveryTime: "30 seconds" },
        models: [{ name: "a", model: a }, { name: "b", model: b }]
      })
      for (let i = 0; i < 3; i++) yield* model.generate(request())
      expect(a.requests.length).toBe(3)
      expect((yield* model.breakers).get("a")?._tag).toBe("Open")

      // Open: "a" is not called at all, "b" answers.
      const skipped = yield* model.generate(request())
      expect(routed(skipped)).toEqual({ model: "b", failed: [] })
      expect(a.requests.length).toBe(3)

      yield* TestClock.adjust("29999 millis")
      yield* model.generate(request())
      expect(a.requests.length).toBe(3)

      // After the recovery time one probe goes to "a"; it fails: open again for another recovery time.
      yield* TestClock.adjust("1 millis")
      yield* model.generate(request())
      expect(a.requests.length).toBe(4)
      expect((yield* model.breakers).get("a")?._tag).toBe("Open")
      yield* model.generate(request())
      expect(a.requests.length).toBe(4)

      // The next probe succeeds: closed again, "a" answers first.
      healthy = true
      yield* TestClock.adjust("30 seconds")
      expect(textOf(yield* model.generate(request()))).toBe("a again")
      expect((yield* model.breakers).get("a")).toEqual({ _tag: "Closed", failures: 0 })
      expect(textOf(yield* model.generate(request()))).toBe("a again")
    }))

  it.effect("counts failures in a row only: a success resets the count, a caller's mistake does not count", () =>
    Effect.gen(function*() {
      const outcomes = [overloaded, overloaded, "ok", overloaded, badRequest, overloaded] as const
      const a = MockLanguageModel.make((_req, i) => {
        const outcome = outcomes[i]!
        return outcome === "ok" ? MockLanguageModel.text("ok") : Effect.fail(outcome())
      })
      const model = yield* router({
        breaker: { failureThreshold: 3 },
        models: [{ name: "a", model: a }, { name: "b", model: answering("b") }]
      })
      for (let i = 0; i < outcomes.length; i++) yield* Effect.result(model.generate(request()))
      expect((yield* model.breakers).get("a")).toEqual({ _tag: "Closed", failures: 1 })
    }))

  it.effect("with every breaker open, fails with a retryable ServerError naming the models, calling none", () =>
    Effect.gen(function*() {
      const a = failing(overloaded)
      const b = failing(rateLimited)
      const model = yield* router({
        breaker: { failureThreshold: 1 },
        models: [{ name: "a", model: a }, { name: "b", model: b }]
      })
      yield* Effect.flip(model.generate(request()))
      const error = yield* Effect.flip(model.generate(request()))
      expect(error._tag).toBe("ServerError")
      expect(error.message).toContain("a, b")
      expect(ChatError.isRetryable(error)).toBe(true)
      expect([a.requests.length, b.requests.length]).toEqual([1, 1])
    }))

  it.effect("logs breaker state changes and adds them as span events", () =>
    Effect.gen(function*() {
      const events: Array<{ name: string; attributes: Record<string, unknown> }> = []
      const attributes = new Map<string, unknown>()
      const logs: Array<string> = []
      const tracer = Tracer.make({
        span: ({ annotations, kind, links, name, parent, startTime }) => ({
          _tag: "Span",
          name,
          spanId: name,
          traceId: "trace",
          parent,
          annotations,
          status: { _tag: "Started", startTime },
          attributes: new Map(),
          links,
          sampled: true,
          kind,
          end: () => {},
          attribute: (key, value) => {
            attributes.set(key, value)
          },
          event: (event, _time, eventAttributes) => {
            events.push({ name: event, attributes: eventAttributes ?? {} })
          },
          addLinks: () => {}
        })
      })
      const logger = Logger.make(({ message }) => {
        logs.push(String(message))
      })
      const model = yield* router({
        breaker: { failureThreshold: 1, recoveryTime: "1 second" },
        models: [{ name: "a", model: failing(overloaded) }, { name: "b", model: answering("b") }]
      })
      const run = model.generate(request()).pipe(
        Effect.withTracer(tracer),
        Effect.provide(Logger.layer([logger]))
      )
      yield* run
      yield* TestClock.adjust("1 second")
      yield* run
      const breaker = events.filter((e) => e.name === "chat-ts.router.breaker").map((e) => e.attributes)
      expect(breaker).toEqual([
        { "chat-ts.router.model": "a", "chat-ts.router.from": "Closed", "chat-ts.router.to": "Open" },
        { "chat-ts.router.model": "a", "chat-ts.router.from": "Open", "chat-ts.router.to": "HalfOpen" },
        { "chat-ts.router.model": "a", "chat-ts.router.from": "HalfOpen", "chat-ts.router.to": "Open" }
      ])
      expect(events.filter((e) => e.name === "chat-ts.router.fallback")).toHaveLength(2)
      expect(logs).toContain("circuit breaker of model 'a': Closed -> Open")
      expect(attributes.get("chat-ts.router.model")).toBe("b")
    }))
})

describe("Router streaming", () => {
  it.effect("falls back when a stream fails before its first part", () =>
    Effect.gen(function*() {
      const a = failing(overloaded)
      const b = answering("streamed b")
      const model = yield* router({ models: [{ name: "a", model: a }, { name: "b", model: b }] })
      const response = yield* LanguageModel.collect(model.stream(request()))
      expect(textOf(response)).toBe("streamed b")
      expect(routed(response)).toEqual({ model: "b", failed: ["a"] })
    }))

  it.effect("never falls back once a stream emitted a part: the typed error surfaces after the first token", () =>
    Effect.gen(function*() {
      let calls = 0
      const a = LanguageModel.make({
        stream: () =>
          Stream.suspend(() => {
            calls++
            return Stream.concat(
              Stream.make<Array<LanguageModel.StreamPart>>({ _tag: "TextDelta", text: "Hel" }),
              Stream.fail(new ChatError.NetworkError({ message: "connection reset" }))
            )
          })
      })
      const b = answering("b")
      const model = yield* router({ models: [{ name: "a", model: a }, { name: "b", model: b }] })
      const seen: Array<LanguageModel.StreamPart> = []
      const result = yield* model.stream(request()).pipe(
        Stream.tap((part) => Effect.sync(() => seen.push(part))),
        Stream.runDrain,
        Effect.result
      )
      expect(seen).toEqual([{ _tag: "TextDelta", text: "Hel" }])
      expect(Result.isFailure(result) && result.failure._tag).toBe("NetworkError")
      expect(calls).toBe(1)
      expect(b.requests.length).toBe(0)
      expect((yield* model.breakers).get("a")).toEqual({ _tag: "Closed", failures: 1 })
    }))

  it.effect("records the answering model on the stream's Finish part and counts a cut stream against the breaker", () =>
    Effect.gen(function*() {
      const a = MockLanguageModel.make([
        MockLanguageModel.text("cut short", { cutAfterChunks: 1 }),
        MockLanguageModel.text("whole")
      ])
      const model = yield* router({ breaker: { failureThreshold: 1 }, models: [{ name: "a", model: a }] })
      const cut = yield* Stream.runCollect(model.stream(request()))
      expect(cut.some((part) => part._tag === "Finish")).toBe(false)
      expect((yield* model.breakers).get("a")?._tag).toBe("Open")
      yield* TestClock.adjust("30 seconds")
      const parts = yield* Stream.runCollect(model.stream(request()))
      const finish = parts[parts.length - 1]
      expect(finish?._tag === "Finish" && finish.providerMetadata?.[Router.metadataKey]).toEqual({ model: "a", failed: [] })
    }))

  it.effect("a probe stream left early releases the half-open breaker for the next probe", () =>
    Effect.gen(function*() {
      let healthy = false
      const a = MockLanguageModel.make(() => (healthy ? MockLanguageModel.text("long answer here") : Effect.fail(overloaded())))
      const model = yield* router({ breaker: { failureThreshold: 1, recoveryTime: "1 second" }, models: [{ name: "a", model: a }] })
      yield* Effect.flip(model.generate(request()))
      yield* TestClock.adjust("1 second")
      healthy = true
      yield* Stream.runDrain(Stream.take(model.stream(request()), 1))
      expect((yield* model.breakers).get("a")).toEqual({ _tag: "HalfOpen", probing: false })
      expect(textOf(yield* model.generate(request()))).toBe("long answer here")
      expect((yield* model.breakers).get("a")?._tag).toBe("Closed")
    }))
})

describe("Router in a chat", () => {
  it.effect("records the answering model in the assistant message; a resumed turn stays on it with `sticky`", () =>
    Effect.gen(function*() {
      let primaryUp = true
      const primary = MockLanguageModel.make((_req, i) =>
        !primaryUp ? Effect.fail(overloaded()) : i === 0
          ? MockLanguageModel.toolCalls([{ id: "c1", name: "delete_files", arguments: { paths: ["a.log"] } }])
          : MockLanguageModel.text("primary done")
      )
      const secondary = MockLanguageModel.make(() => MockLanguageModel.text("secondary answer"))
      const routerLayer = Router.layer({
        strategy: Router.sticky(),
        models: [{ name: "secondary", model: secondary }, { name: "primary", model: primary }].reverse()
      })
      const chat = yield* Chat.make({ tools: files }).pipe(
        Effect.provide(Layer.merge(routerLayer, fileHandlers(recorder())))
      )
      const first = yield* chat.complete(Messages.fromUser("Delete a.log"))
      paused(first)
      expect(Router.answeredBy(first.messages)).toBe("primary")

      // The primary is down when the person approves: the resumed turn falls back instead of failing.
      primaryUp = false
      const approved = yield* chat.approve(first.messages, "c1")
      const resumed = yield* chat.resume(approved)
      expect(complete(resumed).response).toBeDefined()
      expect(Messages.textOf(Messages.lastResponse(resumed.messages)!)).toBe("secondary answer")
      expect(Router.answeredBy(resumed.messages)).toBe("secondary")
      expect(Option.isSome(Option.fromNullishOr(Messages.lastResponse(resumed.messages)?.providerMetadata))).toBe(true)
    }))

  it.effect("sticky puts the model of the current turn's last response first, and re-routes a new user message", () =>
    Effect.gen(function*() {
      const strategy = Router.sticky()
      const models = [{ name: "a" }, { name: "b" }]
      const withAnswer = (model: string): Messages.Messages => [
        Messages.user("hi"),
        { ...Messages.assistant("x"), providerMetadata: { [Router.metadataKey]: { model, failed: [] } } }
      ]
      expect(yield* strategy({ messages: withAnswer("b"), tools: [], options: {} }, models)).toEqual(["b", "a"])
      expect(yield* strategy({ messages: [...withAnswer("b"), Messages.user("again")], tools: [], options: {} }, models))
        .toEqual(["a", "b"])
      expect(yield* strategy({ messages: withAnswer("gone"), tools: [], options: {} }, models)).toEqual(["a", "b"])
    }))
})

describe("Router properties", () => {
  type Outcome = "ok" | "overloaded" | "bad"
  const arbitraries = fc.tuple(
    fc.integer({ min: 1, max: 4 }),
    fc.array(
      fc.record({
        outcomes: fc.array(fc.constantFrom<Outcome>("ok", "overloaded", "overloaded", "bad"), { minLength: 4, maxLength: 4 }),
        advanceMillis: fc.constantFrom(0, 0, 0, 1_000, 2_500)
      }),
      { maxLength: 12 }
    ),
    fc.integer({ min: 1, max: 3 })
  )

  it.effect(
    "never calls a model whose breaker is open, never a model twice per request, never more calls than models",
    () =>
      checkProperty(arbitraries, ([count, rounds, threshold]) =>
        Effect.gen(function*() {
          const names = Array.from({ length: count }, (_, i) => `m${i}`)
          let round = 0
          const calls: Array<string> = []
          const models = names.map((name, i) => ({
            name,
            model: LanguageModel.make({
              generate: () =>
                Effect.suspend(() => {
                  calls.push(name)
                  const outcome = rounds[round]!.outcomes[i]!
                  return outcome === "ok"
                    ? Effect.succeed({ parts: [Messages.text(name)], usage: LanguageModel.noUsage, finishReason: "stop" as const })
                    : Effect.fail(outcome === "bad" ? badRequest() : overloaded())
                })
            })
          }))
          yield* Effect.scoped(Effect.gen(function*() {
            const model = yield* Router.make({ models, breaker: { failureThreshold: threshold, recoveryTime: "2 seconds" } })
            for (round = 0; round < rounds.length; round++) {
              if (rounds[round]!.advanceMillis > 0) yield* TestClock.adjust(rounds[round]!.advanceMillis)
              const now = yield* Clock.currentTimeMillis
              const before = yield* model.breakers
              calls.length = 0
              const result = yield* Effect.result(model.generate(request()))
              for (const name of calls) {
                const state = before.get(name)!
                expect(state._tag === "Open" && state.until > now, `${name} was called while open`).toBe(false)
              }
              expect(new Set(calls).size).toBe(calls.length)
              expect(calls.length).toBeLessThanOrEqual(count)
              if (Result.isSuccess(result)) expect(textOf(result.success)).toBe(calls[calls.length - 1])
              // A caller's mistake stops the request at once.
              const outcomes = calls.map((name) => rounds[round]!.outcomes[names.indexOf(name)]!)
              expect(outcomes.slice(0, -1).every((outcome) => outcome === "overloaded")).toBe(true)
            }
          }))
        }), { numRuns: 25 }),
    30_000
  )
})
