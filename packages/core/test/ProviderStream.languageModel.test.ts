/**
 * The provider kit's model scaffold: `ProviderStream.timeouts` (a layer's timeout options against a
 * provider's defaults) and `ProviderStream.languageModel` (a whole `LanguageModel` from wire calls),
 * on scripted wire calls and the `TestClock`.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Fiber, Logger, Result, Schedule, Stream } from "effect"
import { TestClock } from "effect/testing"
import { ChatError, type LanguageModel, Messages, ProviderStream, Usage } from "../src/index.js"

type Part = LanguageModel.StreamPart

describe("ProviderStream.timeouts", () => {
  const resolve = ProviderStream.timeouts({ totalTimeout: "10 minutes", idleTimeout: "5 minutes" })

  it("a non-streamed call is always bounded in all, by the default unless told otherwise; false: no bound", () => {
    expect(resolve.call({})).toEqual({ totalTimeout: "10 minutes" })
    expect(resolve.call({ totalTimeout: "1 second", idleTimeout: "2 seconds" })).toEqual({ totalTimeout: "1 second" })
    expect(resolve.call({ totalTimeout: false })).toEqual({ totalTimeout: undefined })
  })

  it("a stream is bounded between events by the default unless told otherwise, and in all only when asked", () => {
    expect(resolve.stream({})).toEqual({ idleTimeout: "5 minutes", totalTimeout: undefined })
    expect(resolve.stream({ idleTimeout: false, totalTimeout: "1 minute" })).toEqual({ idleTimeout: false, totalTimeout: "1 minute" })
    expect(resolve.stream({ idleTimeout: "3 seconds", totalTimeout: false })).toEqual({ idleTimeout: "3 seconds", totalTimeout: undefined })
  })
})

/** A request whose first user text is the "body"; "refuse" cannot be sent. */
const request = (text: string): LanguageModel.Request => ({ messages: Messages.fromUser(text), tools: [], options: {} })

/** The body of `request`: its text, and a warning when it says "warn". */
interface Prepared {
  readonly text: string
  readonly notSent: string | undefined
}

const toBody = (request: LanguageModel.Request): Result.Result<Prepared, ChatError.ModelError> => {
  const text = request.messages.flatMap((message) => message.parts).map((part) => (part._tag === "Text" ? part.text : "")).join("")
  return text === "refuse"
    ? Result.fail(new ChatError.InvalidRequest({ message: "cannot be sent" }))
    : Result.succeed({ text, notSent: text.startsWith("warn") ? `not sent: ${text}` : undefined })
}

/** A decoder that turns each event into a text delta and ends with the body it was made for. */
class Echo implements ProviderStream.EventDecoder<string> {
  constructor(readonly prepared: Prepared) {}
  push(event: string): ReadonlyArray<Part> {
    return [{ _tag: "TextDelta", text: event }]
  }
  end() {
    return Result.succeed<ReadonlyArray<Part>>([{ _tag: "TextDelta", text: `end of ${this.prepared.text}` }])
  }
}

/** Scripted wire calls: each call and opening answers the next entry of `failures` (then succeeds), and counts itself. */
const scripted = (options: {
  readonly failures?: ReadonlyArray<ChatError.ModelError>
  readonly callTakes?: Duration.Input
  readonly options?: ProviderStream.Wire<Prepared, string, string>["options"]
}) => {
  const state = { calls: 0, opens: 0, decoders: 0 }
  const failures = [...(options.failures ?? [])]
  const attempt = <A>(answer: A) =>
    Effect.suspend(() => {
      const failure = failures.shift()
      return failure === undefined ? Effect.succeed(answer) : Effect.fail(failure)
    })
  const model = ProviderStream.languageModel<Prepared, string, string>({
    toBody,
    warning: ({ notSent }) => notSent,
    call: ({ text }) =>
      Effect.andThen(
        Effect.sync(() => state.calls++),
        options.callTakes === undefined ? attempt(`answer to ${text}`) : Effect.as(Effect.sleep(options.callTakes), "late")
      ),
    decode: (answer, prepared) =>
      Result.succeed({ parts: [{ _tag: "Text", text: `${answer} (${prepared.text})` }], finishReason: "stop", usage: Usage.empty }),
    open: ({ text }) => Effect.andThen(Effect.sync(() => state.opens++), attempt(Stream.make(`${text}.1`, `${text}.2`))),
    decoder: (prepared) => (state.decoders++, new Echo(prepared)),
    options: { retry: false, ...options.options },
    defaults
  })
  return { model, state }
}

const texts = (parts: ReadonlyArray<Part>) => parts.map((p) => (p._tag === "TextDelta" ? p.text : p._tag))

const logged = (logs: Array<string>) =>
  Logger.layer([Logger.make(({ logLevel, message }) => void logs.push(`${logLevel} ${Array.isArray(message) ? message.join(" ") : String(message)}`))])

/** A provider's defaults: a day for a call, an hour between two events. */
const defaults: ProviderStream.TimeoutDefaults = { totalTimeout: "1 day", idleTimeout: "1 hour" }

const overloaded = () => new ChatError.ServerError({ message: "overloaded", status: 529 })

describe("ProviderStream.languageModel: generate", () => {
  it.effect("builds the body, calls once and decodes the answer with the body it was made from", () =>
    Effect.gen(function*() {
      const { model, state } = scripted({})
      const response = yield* model.generate(request("hi"))
      expect(response.parts).toEqual([{ _tag: "Text", text: "answer to hi (hi)" }])
      expect(state).toEqual({ calls: 1, opens: 0, decoders: 0 })
    }))

  it.effect("a body that cannot be built fails the call before anything is sent", () =>
    Effect.gen(function*() {
      const { model, state } = scripted({})
      const error = yield* Effect.flip(model.generate(request("refuse")))
      expect(error).toMatchObject({ _tag: "InvalidRequest", message: "cannot be sent" })
      expect(state.calls).toBe(0)
    }))

  it.effect("retries a retryable failure under the policy, and warns once per call, not once per attempt", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const { model, state } = scripted({ failures: [overloaded(), overloaded()], options: { retry: Schedule.recurs(2) } })
      const response = yield* model.generate(request("warn me")).pipe(Effect.provide(logged(logs)))
      expect(response.parts).toEqual([{ _tag: "Text", text: "answer to warn me (warn me)" }])
      expect(state.calls).toBe(3)
      expect(logs).toEqual(["Warn not sent: warn me"])
    }))

  it.effect("fails with a NetworkError once the call runs past its totalTimeout, else past the provider's default", () =>
    Effect.gen(function*() {
      const { model } = scripted({ callTakes: "2 days", options: { totalTimeout: "1 minute" } })
      const fiber = yield* Effect.forkChild(Effect.flip(model.generate(request("hi"))))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "NetworkError" })
      expect(error.message).toContain("totalTimeout")
      expect(error.message).toContain("1m")

      const byDefault = yield* Effect.forkChild(Effect.flip(scripted({ callTakes: "2 days" }).model.generate(request("hi"))))
      yield* TestClock.adjust("1 day")
      expect((yield* Fiber.join(byDefault)).message).toContain("1d")
    }))
})

describe("ProviderStream.languageModel: stream", () => {
  it.effect("opens, decodes every event with a decoder made per stream for the body, and ends as the decoder says", () =>
    Effect.gen(function*() {
      const { model, state } = scripted({})
      const stream = model.stream(request("hi"))
      expect(texts(yield* Stream.runCollect(stream))).toEqual(["hi.1", "hi.2", "end of hi"])
      expect(texts(yield* Stream.runCollect(stream))).toEqual(["hi.1", "hi.2", "end of hi"])
      expect(state).toEqual({ calls: 0, opens: 2, decoders: 2 })
    }))

  it.effect("a body that cannot be built fails the stream before anything is opened", () =>
    Effect.gen(function*() {
      const { model, state } = scripted({})
      const error = yield* Effect.flip(Stream.runDrain(model.stream(request("refuse"))))
      expect(error).toMatchObject({ _tag: "InvalidRequest", message: "cannot be sent" })
      expect(state.opens).toBe(0)
    }))

  it.effect("retries the opening under the policy, and warns once per call, not once per attempt", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const { model, state } = scripted({ failures: [overloaded()], options: { retry: Schedule.recurs(1) } })
      const parts = yield* Stream.runCollect(model.stream(request("warn me"))).pipe(Effect.provide(logged(logs)))
      expect(texts(parts)).toEqual(["warn me.1", "warn me.2", "end of warn me"])
      expect(state.opens).toBe(2)
      expect(logs).toEqual(["Warn not sent: warn me"])
    }))

  it.effect("a stream that sends nothing for its idleTimeout fails with a NetworkError", () =>
    Effect.gen(function*() {
      const model = ProviderStream.languageModel<Prepared, string, string>({
        toBody,
        call: () => Effect.succeed(""),
        decode: () => Result.fail(new ChatError.MalformedResponse({ message: "unused" })),
        open: () => Effect.succeed(Stream.concat(Stream.make("a"), Stream.never)),
        decoder: (prepared) => new Echo(prepared),
        options: { idleTimeout: "30 seconds", retry: false },
        defaults
      })
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runDrain(model.stream(request("hi")))))
      yield* TestClock.adjust("30 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "NetworkError" })
      expect(error.message).toContain("idleTimeout")
    }))
})
