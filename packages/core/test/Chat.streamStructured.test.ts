/**
 * `chat.streamStructured`: partial values while the answer's JSON arrives,
 * then the value decoded like `completeStructured` decodes it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result, Schema, Stream } from "effect"
import { Chat, ChatError, ChatEvent, Messages } from "../src/index.js"
import { eagerChars } from "../src/chat/internal/partialOutput.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { fileHandlers, files, recorder } from "./support/Chat.helpers.js"

const Person = Schema.Struct({
  name: Schema.String,
  languages: Schema.Array(Schema.String),
  born: Schema.NumberFromString
})

const answer = JSON.stringify({ name: "Ada Lovelace", languages: ["en", "fr"], born: "1815" })
const ask = Messages.fromUser("Who wrote the first program?")

const chatWith = (model: MockLanguageModel.MockLanguageModel) =>
  Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(recorder()))))

type Event<A> = ChatEvent.StructuredEvent<A>

const collect = <A, E, R>(stream: Stream.Stream<Event<A>, E, R>): Effect.Effect<ReadonlyArray<Event<A>>, E, R> => Stream.runCollect(stream)

const partials = <A>(events: ReadonlyArray<Event<A>>): ReadonlyArray<unknown> =>
  events.flatMap((event) => (event._tag === "Partial" ? [event.value] : []))

/** What a partial value knew is still true of a later one (strings grow at their end, containers gain entries). */
const grows = (before: unknown, after: unknown): boolean => {
  if (typeof before === "string") return typeof after === "string" && after.startsWith(before)
  if (Array.isArray(before)) return Array.isArray(after) && before.every((item, i) => grows(item, after[i]))
  if (typeof before === "object" && before !== null) {
    return typeof after === "object" && after !== null &&
      Object.entries(before).every(([key, value]) => grows(value, (after as Record<string, unknown>)[key]))
  }
  return Object.is(before, after)
}

describe("Chat.streamStructured", () => {
  it.effect("partial values as the JSON arrives, each growing the one before, then the decoded value", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text(answer, { usage: { inputTokens: 7, outputTokens: 3 } })])
      const chat = yield* chatWith(model)
      const events = yield* collect(chat.streamStructured(ask, Person))
      const values = partials(events)
      // The mock streams text in 4-character deltas: many partial values, never the same twice in a row.
      expect(values.length).toBeGreaterThan(5)
      expect(values[0]).toEqual({})
      expect(values).toContainEqual({ name: "Ada Lovelace", languages: ["en"] })
      values.slice(1).forEach((value, i) => {
        expect(grows(values[i], value)).toBe(true)
        expect(value).not.toEqual(values[i])
      })
      // Partial values are the encoded form (`born` still a string); the last one is the whole answer.
      expect(values[values.length - 1]).toEqual(JSON.parse(answer))
      const last = events[events.length - 1]!
      expect(last._tag).toBe("Completed")
      if (last._tag !== "Completed") return
      expect(last.value).toEqual({ name: "Ada Lovelace", languages: ["en", "fr"], born: 1815 })
      expect(last.usage).toEqual({ inputTokens: 7, outputTokens: 3 })
      expect(Messages.textOf(last.response)).toBe(answer)
      expect(events.filter((event) => event._tag !== "Partial")).toHaveLength(1)
      // The model was asked for the schema's response format, as completeStructured asks.
      expect(model.requests[0]!.options.responseFormat).toEqual(Chat.responseFormat(Person))
    }))

  it.effect("gives the same value and messages as completeStructured for the same script", () =>
    Effect.gen(function*() {
      const streamed = yield* collect((yield* chatWith(MockLanguageModel.make([MockLanguageModel.text(answer)]))).streamStructured(ask, Person))
      const completed = yield* (yield* chatWith(MockLanguageModel.make([MockLanguageModel.text(answer)]))).completeStructured(ask, Person)
      const last = streamed[streamed.length - 1]!
      if (last._tag !== "Completed" || completed.outcome._tag !== "Complete") throw new Error("expected both to complete")
      expect(last.value).toEqual(completed.outcome.value)
      expect(last.messages).toEqual(completed.messages)
    }))

  it.effect("a root that is not an object: partial values are of the value itself, never of its { value } wrapper", () =>
    Effect.gen(function*() {
      const Tags = Schema.Array(Schema.String)
      const model = MockLanguageModel.make([MockLanguageModel.text(JSON.stringify({ value: ["alpha", "beta"] }))])
      const events = yield* collect((yield* chatWith(model)).streamStructured(ask, Tags))
      const values = partials(events)
      expect(values.every(Array.isArray)).toBe(true)
      // 4-character deltas: `{"va`, `lue"`, `:["a`… the first value known is the array with "a" begun.
      expect(values[0]).toEqual(["a"])
      expect(values).toContainEqual(["alpha", "b"])
      const last = events[events.length - 1]!
      expect(last._tag === "Completed" && last.value).toEqual(["alpha", "beta"])
    }))

  it.effect("an answer that does not match the schema fails with the StructuredOutputError completeStructured gives", () =>
    Effect.gen(function*() {
      const bad = JSON.stringify({ name: "Ada", languages: "en", born: "1815" })
      const streamed = yield* Effect.result(
        collect((yield* chatWith(MockLanguageModel.make([MockLanguageModel.text(bad)]))).streamStructured(ask, Person))
      )
      const completed = yield* Effect.result(
        (yield* chatWith(MockLanguageModel.make([MockLanguageModel.text(bad)]))).completeStructured(ask, Person)
      )
      expect(Result.isFailure(streamed) && streamed.failure).toBeInstanceOf(ChatError.StructuredOutputError)
      if (Result.isSuccess(streamed) || Result.isSuccess(completed)) throw new Error("expected failures")
      const [s, c] = [streamed.failure as ChatError.StructuredOutputError, completed.failure as ChatError.StructuredOutputError]
      expect(s.detail).toBe(c.detail)
      expect(s.text).toBe(bad)
      expect(s.messages).toEqual(c.messages)
    }))

  it.effect("an answer that is not JSON fails with a StructuredOutputError; partial values of it are never emitted", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("Sorry, I cannot answer that.")])
      const exit = yield* Effect.result(
        Stream.runCollect((yield* chatWith(model)).streamStructured(ask, Person)).pipe(
          Effect.tap((events) => Effect.sync(() => expect(partials(events)).toEqual([])))
        )
      )
      expect(Result.isFailure(exit) && exit.failure._tag).toBe("StructuredOutputError")
    }))

  it.effect("a schema that cannot be sent fails before any request", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([])
      const result = yield* Effect.result(collect((yield* chatWith(model)).streamStructured(ask, Schema.Date)))
      expect(Result.isFailure(result) && result.failure._tag).toBe("StructuredOutputError")
      expect(model.requests).toHaveLength(0)
    }))

  it.effect("a \"__proto__\" key is never in a partial value, and the answer fails as completeStructured's does", () =>
    Effect.gen(function*() {
      const hostile = "{\"__proto__\": {\"admin\": true}, \"name\": \"x\", \"languages\": [], \"born\": \"1\"}"
      const events: Array<Event<unknown>> = []
      const result = yield* Effect.result(
        Stream.runForEach(
          (yield* chatWith(MockLanguageModel.make([MockLanguageModel.text(hostile)]))).streamStructured(ask, Person),
          (event) => Effect.sync(() => void events.push(event))
        )
      )
      expect(Result.isFailure(result) && result.failure._tag).toBe("StructuredOutputError")
      for (const value of partials(events)) expect(Object.hasOwn(value as object, "__proto__")).toBe(false)
      expect(({} as Record<string, unknown>)["admin"]).toBeUndefined()
    }))

  it.effect("a turn that waits for approval ends with Paused; streaming the approved messages completes it", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "d1", name: "delete_files", arguments: { paths: ["a.log"] } }]),
        MockLanguageModel.text(answer)
      ])
      const chat = yield* chatWith(model)
      const first = yield* collect(chat.streamStructured(ask, Person))
      expect(first.map((event) => event._tag)).toEqual(["Paused"])
      const pause = first[0]!
      if (pause._tag !== "Paused") return
      expect(pause.reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["d1"] })
      const second = yield* collect(chat.streamStructured(yield* Effect.fromResult(Messages.approve(pause.messages, "d1")), Person))
      const last = second[second.length - 1]!
      expect(last._tag === "Completed" && last.value).toEqual({ name: "Ada Lovelace", languages: ["en", "fr"], born: 1815 })
      expect(partials(second).length).toBeGreaterThan(0)
      expect(model.requests[1]!.options.responseFormat).toEqual(Chat.responseFormat(Person))
    }))

  it.effect("each model call starts a new answer: text of a step that asked for tools does not leak into the next", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "l1", name: "list_files", arguments: { folder: "logs" } }], { text: "{\"name\": \"Draft\"}" }),
        MockLanguageModel.text(answer)
      ])
      const events = yield* collect((yield* chatWith(model)).streamStructured(ask, Person))
      const values = partials(events)
      const restart = values.findIndex((value, i) => i > 0 && !grows(values[i - 1], value))
      // The first step's text showed as it came; the second answer starts again from {}.
      expect(values.slice(0, restart)).toContainEqual({ name: "Draft" })
      expect(values[restart]).toEqual({})
      values.slice(restart + 1).forEach((value, i) => expect(grows(values[restart + i], value)).toBe(true))
      const last = events[events.length - 1]!
      expect(last._tag === "Completed" && last.value).toEqual({ name: "Ada Lovelace", languages: ["en", "fr"], born: 1815 })
    }))

  it.effect("a long answer is parsed less often past the eager size: fewer partial values than deltas, the same final value", () =>
    Effect.gen(function*() {
      const name = "x".repeat(eagerChars * 2)
      const long = JSON.stringify({ name, languages: [], born: "1" })
      const events = yield* collect((yield* chatWith(MockLanguageModel.make([MockLanguageModel.text(long)]))).streamStructured(ask, Person))
      const values = partials(events)
      const deltas = Math.ceil(long.length / 4)
      // Every delta up to the eager size, then one per eighth of growth: far fewer than the deltas.
      expect(values.length).toBeLessThan(eagerChars / 4 + 20)
      expect(values.length).toBeGreaterThan(eagerChars / 4 - 10)
      expect(values.length).toBeLessThan(deltas)
      const last = events[events.length - 1]!
      expect(last._tag === "Completed" && last.value).toEqual({ name, languages: [], born: 1 })
    }))
})
