import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { ChatError, ProviderCall } from "../src/index.js"

/** Maps anything to a NetworkError naming it and the time it was mapped at. */
const toError: ProviderCall.ToError = (error, now) =>
  new ChatError.NetworkError({ message: `${error instanceof Error ? error.message : String(error)} at ${now}` })

describe("ProviderCall.request", () => {
  it.effect("answers with the promise's value and maps a rejection, reading now from the Clock", () =>
    Effect.gen(function*() {
      expect(yield* ProviderCall.request(() => Promise.resolve(42), toError)).toBe(42)
      yield* TestClock.adjust("5 seconds")
      const error = yield* Effect.flip(ProviderCall.request(() => Promise.reject(new Error("refused")), toError))
      expect(error).toMatchObject({ _tag: "NetworkError", message: "refused at 5000" })
    }))

  it.effect("aborts the call's signal when the fiber is interrupted", () =>
    Effect.gen(function*() {
      let seen: AbortSignal | undefined
      const fiber = yield* Effect.forkChild(ProviderCall.request((signal) => {
        seen = signal
        return new Promise<never>(() => undefined)
      }, toError))
      yield* Effect.yieldNow
      expect(seen?.aborted).toBe(false)
      yield* Fiber.interrupt(fiber)
      expect(seen?.aborted).toBe(true)
    }))
})

describe("ProviderCall.scopedAbortController", () => {
  it.effect("aborts when its scope closes", () =>
    Effect.gen(function*() {
      const controller = yield* Effect.scoped(ProviderCall.scopedAbortController)
      expect(controller.signal.aborted).toBe(true)
    }))
})

describe("ProviderCall.iterate", () => {
  it.effect("streams every event in order, then ends", () =>
    Effect.gen(function*() {
      async function* events() {
        yield "a"
        yield "b"
      }
      expect(yield* Stream.runCollect(ProviderCall.iterate(events(), toError))).toEqual(["a", "b"])
    }))

  it.effect("keeps the events before a failure and fails the stream with the mapped error", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      async function* events() {
        yield "a"
        throw new Error("cut")
      }
      const error = yield* Effect.flip(Stream.runForEach(ProviderCall.iterate(events(), toError), (e) => Effect.sync(() => seen.push(e))))
      expect(seen).toEqual(["a"])
      expect(error).toMatchObject({ _tag: "NetworkError", message: "cut at 0" })
    }))
})

describe("ProviderCall.idleTimeout", () => {
  const idle = () => new ChatError.NetworkError({ message: "idle" })

  /** An iterable whose events the test releases one by one. */
  const gated = () => {
    const waiting: Array<(result: IteratorResult<string>) => void> = []
    let n = 0
    const iterable: AsyncIterable<string> = {
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<string>>((resolve) => waiting.push(resolve)) })
    }
    const release = () => waiting.shift()!({ done: false, value: `e${++n}` })
    return { iterable, release, pending: () => waiting.length }
  }

  /** Lets the fibers and the promises run until `ready` holds (bounded). */
  const until = (ready: () => boolean) =>
    Effect.gen(function*() {
      for (let i = 0; i < 1000 && !ready(); i++) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect(ready()).toBe(true)
    })

  it.effect("an iterate stream fails when one wait passes the limit, not when events keep coming within it", () =>
    Effect.gen(function*() {
      const source = gated()
      const seen: Array<string> = []
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runForEach(
        ProviderCall.idleTimeout(ProviderCall.iterate(source.iterable, toError), "10 seconds", idle),
        (e) => Effect.sync(() => seen.push(e))
      )))
      for (let i = 1; i <= 3; i++) {
        yield* until(() => source.pending() === 1)
        yield* TestClock.adjust("9 seconds")
        source.release()
        yield* until(() => seen.length === i)
      }
      yield* until(() => source.pending() === 1)
      expect(seen).toEqual(["e1", "e2", "e3"])
      yield* TestClock.adjust("9 seconds")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "NetworkError", message: "idle" })
      expect(seen).toEqual(["e1", "e2", "e3"])
    }))

  it.effect("time the consumer spends on an event does not count as waiting", () =>
    Effect.gen(function*() {
      async function* events() {
        yield "a"
        yield "b"
      }
      const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.mapEffect(
        ProviderCall.idleTimeout(ProviderCall.iterate(events(), toError), "10 seconds", idle),
        (e) => Effect.as(Effect.sleep("25 seconds"), e)
      )))
      for (let i = 0; i < 6; i++) {
        yield* Effect.yieldNow
        yield* TestClock.adjust("10 seconds")
      }
      expect(yield* Fiber.join(fiber)).toEqual(["a", "b"])
    }))

  it.effect("any other stream gets a timeout per pull", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runDrain(
        ProviderCall.idleTimeout(Stream.concat(Stream.make(1), Stream.never), "10 seconds", idle)
      )))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(fiber)).toMatchObject({ message: "idle" })
    }))
})

/** An SDK-like promise of an iterable that also gives the HTTP response. */
const withResponse = <A>(data: AsyncIterable<A>, contentType: string, status = 200) =>
  Object.assign(Promise.resolve(data), {
    withResponse: () => Promise.resolve({ data, response: new Response("", { status, headers: { "content-type": contentType } }) })
  })

describe("ProviderCall.openStream", () => {
  async function* events() {
    yield "a"
    yield "b"
  }

  it.effect("opens the stream and gives its events; the request's signal is aborted when the scope closes", () =>
    Effect.gen(function*() {
      let seen: AbortSignal | undefined
      const parts = yield* Effect.scoped(
        Effect.flatMap(
          ProviderCall.openStream((signal) => {
            seen = signal
            return withResponse(events(), "text/event-stream")
          }, toError, "The server"),
          Stream.runCollect
        )
      )
      expect(parts).toEqual(["a", "b"])
      expect(seen?.aborted).toBe(true)
    }))

  it.effect("fails the opening with a MalformedResponse naming the server when an HTML page comes instead of events", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(ProviderCall.openStream(() => withResponse(events(), "text/html; charset=utf-8", 200), toError, "Acme's server"))
      )
      // The error goes through the mapping (a provider's `fromUnknown` passes a typed error through as is).
      expect(error.message).toContain("Acme's server answered a stream with an HTML page (HTTP 200)")
    }))
})

describe("ProviderCall.makeClient", () => {
  /** A stand-in SDK: one call and one stream, each recording the signal it got. */
  const sdk = {
    signals: [] as Array<AbortSignal>,
    get(signal: AbortSignal, fail: boolean): Promise<string> {
      this.signals.push(signal)
      return fail ? Promise.reject(new Error("refused")) : Promise.resolve("got")
    },
    events(signal: AbortSignal, contentType: string) {
      this.signals.push(signal)
      async function* events() {
        yield 1
        yield 2
      }
      return withResponse(events(), contentType)
    }
  }
  const client = ProviderCall.makeClient({
    sdk,
    baseURL: "http://127.0.0.1:1",
    redact: (text) => text.replaceAll("sk-secret", "[key]"),
    toError,
    server: "Acme's server"
  })

  it("carries the SDK, the base URL and the redactor it was given", () => {
    expect(client.sdk).toBe(sdk)
    expect(client.baseURL).toBe("http://127.0.0.1:1")
    expect(client.redact("key sk-secret")).toBe("key [key]")
  })

  it.effect("request calls the SDK with the fiber's signal and maps a rejection with toError", () =>
    Effect.gen(function*() {
      expect(yield* client.request((s, signal) => s.get(signal, false))).toBe("got")
      const error = yield* Effect.flip(client.request((s, signal) => s.get(signal, true)))
      expect(error).toMatchObject({ _tag: "NetworkError", message: "refused at 0" })
    }))

  it.effect("openStream opens on the SDK, aborts the request when its scope closes, and names the server for an HTML page", () =>
    Effect.gen(function*() {
      const events = yield* Effect.scoped(Effect.flatMap(client.openStream((s, signal) => s.events(signal, "text/event-stream")), Stream.runCollect))
      expect(events).toEqual([1, 2])
      expect(sdk.signals.at(-1)?.aborted).toBe(true)
      const error = yield* Effect.flip(Effect.scoped(client.openStream((s, signal) => s.events(signal, "text/html"))))
      expect(error.message).toContain("Acme's server answered a stream with an HTML page")
    }))
})
