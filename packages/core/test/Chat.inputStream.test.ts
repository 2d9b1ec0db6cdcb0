/**
 * The input side of `chat.stream` (issue 37): user messages sent while the model streams interrupt
 * it (its stream closed), the model answers again with them; sent while a call runs, they wait for
 * it; `cancel` ends the turn as stopping the stream does; every restart is checkpointed.
 * The model streams slowly on the TestClock (one part a second).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Queue, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Action, Chat, ChatError, ChatEvent, ChatInput, LanguageModel, Messages, Tool, Toolkit, Turn } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"

/** A model that streams each scripted response's parts one a second, and records what became of each stream. */
const slowModel = (script: ReadonlyArray<MockLanguageModel.ScriptedResponse>) => {
  const scripted = MockLanguageModel.make(script)
  const requests: Array<LanguageModel.Request> = []
  const streams: Array<{ parts: number; closed: boolean }> = []
  const service: LanguageModel.Service = {
    generate: scripted.generate,
    stream: (request) => {
      requests.push(request)
      const record = { parts: 0, closed: false }
      streams.push(record)
      // The mock's parts for this response (it records its own request), paced by the clock.
      return Stream.fromEffect(Stream.runCollect(scripted.stream(request))).pipe(
        Stream.flatMap((parts) => Stream.fromIterable(parts)),
        Stream.tap(() => Effect.andThen(Effect.sleep("1 second"), Effect.sync(() => void record.parts++))),
        Stream.ensuring(Effect.sync(() => void (record.closed = true)))
      )
    }
  }
  return { layer: LanguageModel.layer(service), requests, streams }
}

const textOf = (message: Messages.Message | undefined) => (message === undefined ? undefined : Messages.textOf(message))

const Lookup = Tool.make("lookup", { description: "Look something up.", parameters: { q: Schema.String }, success: Schema.String })
const tools = Toolkit.withStrategy(Toolkit.make(Lookup), () => Action.Execute())

/** A lookup handler that takes 5 seconds and counts its runs. */
const lookups = () => {
  const runs: Array<string> = []
  const layer = tools.toLayer({
    lookup: (params) => Effect.andThen(Effect.sleep("5 seconds"), Effect.sync(() => (runs.push(params.q), `found ${params.q}`)))
  })
  return { runs, layer }
}

const run = <E>(stream: Stream.Stream<ChatEvent.ChatEvent, E>) => Effect.forkChild(Stream.runCollect(stream))

describe("chat.stream with an input side", () => {
  it.effect("input while the answer streams: the stream is closed, the answer so far kept, the model answers the input", () =>
    Effect.gen(function*() {
      const model = slowModel([MockLanguageModel.text("Once upon a time there was"), MockLanguageModel.text("Il était une fois")])
      const saved: Array<Messages.Messages> = []
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      const chat = yield* Chat.make({ tools: [] }).pipe(Effect.provide(model.layer))
      const fiber = yield* run(chat.stream(Messages.fromUser("Tell me a story."), {
        input,
        checkpoint: (messages) => Effect.sync(() => void saved.push(messages))
      }))
      yield* TestClock.adjust("1500 millis")
      yield* Queue.offer(input, Messages.user("In French, please."))
      yield* TestClock.adjust("10 seconds")
      const events = yield* Fiber.join(fiber)

      // The first stream was closed, not read to its end.
      expect(model.streams[0]!.closed).toBe(true)
      expect(model.streams[0]!.parts).toBeLessThan(3)
      expect(model.streams).toHaveLength(2)
      const interrupted = events.find((event) => event._tag === "AnswerInterrupted")
      expect(interrupted).toMatchObject({ step: 1, input: [Messages.user("In French, please.")] })
      const last = events.at(-1)!
      expect(last._tag).toBe("Completed")
      const messages = (last as Extract<ChatEvent.ChatEvent, { _tag: "Completed" }>).messages
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
      expect(textOf(messages[1])).toBe(textOf(interrupted?._tag === "AnswerInterrupted" ? interrupted.answer : undefined))
      expect(messages[1]!.finishReason).toBe("other")
      expect(textOf(messages[3])).toBe("Il était une fois")
      // The second request carries what was said and the input.
      expect(model.requests[1]!.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"])
      // The restart was a checkpoint of its own.
      expect(saved.some((state) => state.length === 3 && textOf(state[2]) === "In French, please.")).toBe(true)
      // Each model call finished, the interrupted one with the usage known when it stopped (none).
      expect(events.filter((event) => event._tag === "StepFinished").map((event) => (event as { step: number }).step)).toEqual([1, 1])
    }))

  it.effect("a burst before the restart is one restart, merged in order", () =>
    Effect.gen(function*() {
      const model = slowModel([MockLanguageModel.text("a b c d e f"), MockLanguageModel.text("ok")])
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      const chat = yield* Chat.make({ tools: [] }).pipe(Effect.provide(model.layer))
      const fiber = yield* run(chat.stream(Messages.fromUser("go"), { input }))
      yield* TestClock.adjust("1500 millis")
      yield* Queue.offerAll(input, [Messages.user("one"), Messages.user("two"), Messages.user("three")])
      yield* TestClock.adjust("10 seconds")
      const events = yield* Fiber.join(fiber)
      expect(events.filter((event) => event._tag === "AnswerInterrupted")).toHaveLength(1)
      const messages = (events.at(-1) as Extract<ChatEvent.ChatEvent, { _tag: "Completed" }>).messages
      expect(messages[2]!.parts).toEqual([Messages.text("one"), Messages.text("two"), Messages.text("three")])
      expect(Turn.inputRestarts(messages)).toBe(1)
    }))

  it.effect("a call the cut answer had begun never runs, and the model is told why", () =>
    Effect.gen(function*() {
      const { layer, runs } = lookups()
      const model = slowModel([
        MockLanguageModel.toolCalls([{ id: "l1", name: "lookup", arguments: { q: "weather in Lisbon" } }]),
        MockLanguageModel.text("Sure, Porto then.")
      ])
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      const chat = yield* Chat.make({ tools }).pipe(Effect.provide(Layer.merge(model.layer, layer)))
      const fiber = yield* run(chat.stream(Messages.fromUser("Weather?"), { input }))
      // The call's start and a first piece of its arguments: then the input.
      yield* TestClock.adjust("2500 millis")
      yield* Queue.offer(input, Messages.user("No, Porto."))
      yield* TestClock.adjust("30 seconds")
      const events = yield* Fiber.join(fiber)
      expect(runs).toEqual([])
      const messages = (events.at(-1) as Extract<ChatEvent.ChatEvent, { _tag: "Completed" }>).messages
      const cut = Messages.toolCallsOf(messages[1]!)
      expect(cut).toHaveLength(1)
      expect(cut[0]!.status).toEqual({ _tag: "Failed", error: Turn.interruptedByInputError })
      expect(events.some((event) => event._tag === "ToolCall")).toBe(false)
    }))

  it.effect("input while a call runs waits for it: nothing is interrupted, the call runs once, then the model answers both", () =>
    Effect.gen(function*() {
      const { layer, runs } = lookups()
      const model = slowModel([
        MockLanguageModel.toolCalls([{ id: "l1", name: "lookup", arguments: { q: "Lisbon" } }]),
        MockLanguageModel.text("Lisbon is sunny; Porto too.")
      ])
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      const chat = yield* Chat.make({ tools }).pipe(Effect.provide(Layer.merge(model.layer, layer)))
      const fiber = yield* run(chat.stream(Messages.fromUser("Weather in Lisbon?"), { input }))
      // The response streams in 3 s, then the call runs for 5 s: the input comes while it runs.
      yield* TestClock.adjust("5 seconds")
      yield* Queue.offer(input, Messages.user("And Porto?"))
      yield* TestClock.adjust("30 seconds")
      const events = yield* Fiber.join(fiber)
      expect(runs).toEqual(["Lisbon"])
      expect(events.some((event) => event._tag === "AnswerInterrupted")).toBe(false)
      const messages = (events.at(-1) as Extract<ChatEvent.ChatEvent, { _tag: "Completed" }>).messages
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
      expect(Messages.toolCallsOf(messages[1]!)[0]!.status._tag).toBe("Completed")
      expect(textOf(messages[2])).toBe("And Porto?")
    }))

  it.effect("cancel while a call runs ends the turn as an abort does: the call is recorded as interrupted, never run again", () =>
    Effect.gen(function*() {
      const { layer, runs } = lookups()
      const model = slowModel([MockLanguageModel.toolCalls([{ id: "l1", name: "lookup", arguments: { q: "Lisbon" } }])])
      const saved: Array<Messages.Messages> = []
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      const chat = yield* Chat.make({ tools }).pipe(Effect.provide(Layer.merge(model.layer, layer)))
      const fiber = yield* run(chat.stream(Messages.fromUser("Weather?"), {
        input,
        checkpoint: (messages) => Effect.sync(() => void saved.push(messages))
      }))
      // The response streams in 5 s (a start, 3 pieces, the finish), then the call runs for 5 s.
      yield* TestClock.adjust("7 seconds")
      expect(Messages.findTool(saved.at(-1)!, "l1")!.status._tag).toBe("Running")
      yield* Queue.offer(input, ChatInput.cancel)
      yield* TestClock.adjust("30 seconds")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(runs).toEqual([])
      const last = saved.at(-1)!
      expect(Messages.findTool(last, "l1")!.status).toMatchObject({ _tag: "Failed", error: Turn.interruptedError })
    }))

  it.effect("restarts are bounded: one past maxInputRestarts fails with InputRestartLimitReached, the input in its messages", () =>
    Effect.gen(function*() {
      const model = slowModel([MockLanguageModel.text("a b c d"), MockLanguageModel.text("e f g h")])
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      const chat = yield* Chat.make({ tools: [] }).pipe(Effect.provide(model.layer))
      const fiber = yield* run(chat.stream(Messages.fromUser("go"), { input, maxInputRestarts: 1 }))
      yield* TestClock.adjust("1500 millis")
      yield* Queue.offer(input, Messages.user("first"))
      yield* TestClock.adjust("1500 millis")
      yield* Queue.offer(input, Messages.user("second"))
      yield* TestClock.adjust("10 seconds")
      const exit = yield* Fiber.await(fiber)
      expect(model.streams).toHaveLength(2)
      expect(model.streams.every((stream) => stream.closed)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
      expect(error?._tag === "Fail" ? error.error : undefined).toBeInstanceOf(ChatError.InputRestartLimitReached)
      const failure = (error as { error: ChatError.InputRestartLimitReached }).error
      expect(failure.maxInputRestarts).toBe(1)
      expect(textOf(failure.messages.at(-1))).toBe("second")
    }))

  it.effect("input that is not a user message of text and files fails the turn with InvalidSteeringMessage", () =>
    Effect.gen(function*() {
      const model = slowModel([MockLanguageModel.text("a b c d")])
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      const chat = yield* Chat.make({ tools: [] }).pipe(Effect.provide(model.layer))
      const fiber = yield* run(chat.stream(Messages.fromUser("go"), { input }))
      yield* TestClock.adjust("1500 millis")
      yield* Queue.offer(input, Messages.assistant("I am the model now"))
      yield* TestClock.adjust("10 seconds")
      const exit = yield* Fiber.await(fiber)
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
      expect(error?._tag === "Fail" ? error.error : undefined).toBeInstanceOf(ChatError.InvalidSteeringMessage)
      expect(model.streams[0]!.closed).toBe(true)
    }))

  it.effect("without input the answer streams to its end, as a plain stream does", () =>
    Effect.gen(function*() {
      const model = slowModel([MockLanguageModel.text("all of it")])
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      const chat = yield* Chat.make({ tools: [] }).pipe(Effect.provide(model.layer))
      const fiber = yield* run(chat.stream(Messages.fromUser("go"), { input }))
      yield* TestClock.adjust("10 seconds")
      const events = yield* Fiber.join(fiber)
      expect(events.at(-1)?._tag).toBe("Completed")
      expect(events.some((event) => event._tag === "AnswerInterrupted")).toBe(false)
    }))
})
