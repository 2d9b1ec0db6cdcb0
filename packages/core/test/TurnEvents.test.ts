import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Result, Schema, Stream } from "effect"
import { Action, Chat, ChatError, ChatEvent, LanguageModel, Messages, ProviderCall, ProviderStream, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { DeleteFiles, fileHandlers, files, ListFiles, recorder } from "./support/Chat.helpers.js"

class CurrentUser extends Context.Service<CurrentUser, { readonly admin: boolean }>()("TurnEvents.test/CurrentUser") {}

/** Every event of an iteration, read with `for await`. */
const drain = async (events: AsyncIterable<ChatEvent.ChatEvent>): Promise<Array<ChatEvent.ChatEvent>> => {
  const out: Array<ChatEvent.ChatEvent> = []
  for await (const event of events) out.push(event)
  return out
}

const ask = Messages.fromUser("Delete the old logs.")

const script = (final: string) => [
  MockLanguageModel.toolCalls([
    { id: "c1", name: "list_files", arguments: { folder: "logs" } },
    { id: "c2", name: "delete_files", arguments: { paths: ["a.log", "b.log"] } }
  ], { reasoning: "Look first.", text: "Let me check.", usage: { inputTokens: 100, outputTokens: 10 } }),
  MockLanguageModel.text(final, { usage: { inputTokens: 50, outputTokens: 5 } })
]

/** A chat on `responses` with the file tools, its model, and the services of the calling test. */
const chatOn = (responses: MockLanguageModel.Script) =>
  Effect.gen(function*() {
    const model = MockLanguageModel.make(responses)
    const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(recorder()))))
    return { chat, model }
  })

/** The messages of a pause with every pending call approved. */
const approveAll = (messages: Messages.Messages): Messages.Messages =>
  Messages.toolCalls(messages).filter((call) => call.status._tag === "AwaitingApproval").reduce((acc, call) => {
    const next = Messages.approve(acc, call.id)
    if (next._tag === "Failure") throw next.failure
    return next.success
  }, messages)

describe("chat.events: the events of chat.stream", () => {
  const turns: ReadonlyArray<{ readonly name: string; readonly script: () => MockLanguageModel.Script }> = [
    { name: "text only", script: () => [MockLanguageModel.text("Hello there, how can I help?")] },
    { name: "calls that run, one awaiting approval, then the answer", script: () => script("Deleted both.") },
    {
      name: "a failing call, then the answer",
      script: () => [MockLanguageModel.toolCalls([{ id: "r1", name: "read_file", arguments: { path: "missing" } }]), MockLanguageModel.text("Not found.")]
    },
    { name: "reasoning and text", script: () => [MockLanguageModel.text("Fine.", { reasoning: "Think about it first." })] }
  ]
  for (const turn of turns) {
    it.effect(`${turn.name}: the same events, the pause resumed the same way`, () =>
      Effect.gen(function*() {
        const streamed = yield* chatOn(turn.script())
        const iterated = yield* chatOn(turn.script())
        let messages = ask
        for (let round = 0; round < 3; round++) {
          const expected = yield* Stream.runCollect(streamed.chat.stream(messages))
          const got = yield* Effect.promise(() => drain(iterated.chat.events(messages)))
          expect(got).toEqual(expected)
          const last = got[got.length - 1]!
          if (last._tag !== "Paused") break
          messages = approveAll(last.messages)
        }
      }))
  }

  it.effect("a pause ends the iteration with Paused; final holds it with the turn's messages", () =>
    Effect.gen(function*() {
      const { chat } = yield* chatOn(script("Deleted both."))
      const events = chat.events(ask)
      const got = yield* Effect.promise(() => drain(events))
      expect(got.at(-1)?._tag).toBe("Paused")
      expect(events.final).toBe(got.at(-1))
      const final = events.final!
      expect(Messages.toolCalls(final.messages).map((call) => [call.id, call.status._tag])).toEqual([
        ["c1", "Completed"],
        ["c2", "AwaitingApproval"]
      ])
      // The loop is over: another read is done at once.
      expect(yield* Effect.promise(() => events.next())).toEqual({ done: true, value: undefined })
    }))

  it.effect("the strategies' services come from the context given (typed: required when a strategy needs one)", () =>
    Effect.gen(function*() {
      const kit = Toolkit.withStrategy(Toolkit.make(ListFiles, DeleteFiles), (call) =>
        Effect.map(CurrentUser, (user) => (call.name === "list_files" || user.admin ? Action.Execute() : Action.RequireApproval())))
      const handlers = kit.toLayer({
        list_files: () => Effect.succeed([]),
        delete_files: () => Effect.succeed({ deleted: 1 })
      })
      const outcome = (admin: boolean) =>
        Effect.gen(function*() {
          const model = MockLanguageModel.make(script("Deleted both."))
          const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
          const context = Context.make(CurrentUser, { admin })
          const got = yield* Effect.promise(() => drain(chat.events(ask, { context })))
          return got.at(-1)?._tag
        })
      expect(yield* outcome(false)).toBe("Paused")
      expect(yield* outcome(true)).toBe("Completed")
    }))
})

describe("chat.events: backpressure", () => {
  it.effect("on a provider of ProviderStream.decodeEvents, the SDK's iterator is read only as the loop consumes", () =>
    Effect.gen(function*() {
      let reads = 0
      // An endless SDK-like iterable: event n is the text "n ".
      const iterable: AsyncIterable<string> = {
        [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: false, value: `${++reads} ` }) })
      }
      const decoder = (): ProviderStream.EventDecoder<string> => ({
        push: (text) => [{ _tag: "TextDelta", text }],
        end: () => Result.succeed([])
      })
      const model = LanguageModel.make({
        stream: () =>
          ProviderStream.decodeEvents(
            Effect.sync(() => ProviderCall.iterate(iterable, (error) => new ChatError.NetworkError({ message: String(error) }))),
            false,
            decoder
          )
      })
      const chat = yield* Chat.make().pipe(Effect.provide(LanguageModel.layer(model)))
      const got = yield* Effect.promise(async () => {
        const out: Array<string> = []
        for await (const event of chat.events(Messages.fromUser("Count."))) {
          if (event._tag === "TextDelta") out.push(event.text)
          expect(reads).toBe(out.length)
          if (out.length === 5) break
        }
        return out
      })
      expect(got).toEqual(["1 ", "2 ", "3 ", "4 ", "5 "])
      expect(reads).toBe(5)
    }))

  it.effect("a consumer that stops after three deltas has read three parts of an endless model stream", () =>
    Effect.gen(function*() {
      let read = 0
      const model = LanguageModel.make({
        stream: () => Stream.fromEffectRepeat(Effect.sync((): LanguageModel.StreamPart => ({ _tag: "TextDelta", text: `${++read} ` })))
      })
      const chat = yield* Chat.make().pipe(Effect.provide(LanguageModel.layer(model)))
      const got = yield* Effect.promise(async () => {
        const out: Array<string> = []
        for await (const event of chat.events(Messages.fromUser("Count."))) {
          if (event._tag === "TextDelta") out.push(event.text)
          // What was read from the model never runs ahead of what was consumed.
          expect(read).toBe(out.length)
          if (out.length === 3) break
        }
        return out
      })
      expect(got).toEqual(["1 ", "2 ", "3 "])
      expect(read).toBe(3)
    }))
})

const Slow = Tool.make("slow", { description: "Takes forever.", parameters: {}, success: Schema.String })
const slowKit = Toolkit.make(Slow).pipe(Toolkit.withStrategy(() => Action.Execute()))

/** A chat whose one tool never finishes; `started` resolves when it runs. */
const slowChat = Effect.gen(function*() {
  let started: () => void = () => {}
  const running = new Promise<void>((resolve) => (started = resolve))
  const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "s1", name: "slow", arguments: {} }])])
  const chat = yield* Chat.make({ tools: slowKit }).pipe(
    Effect.provide(Layer.merge(model.layer, slowKit.toLayer({ slow: () => Effect.andThen(Effect.sync(() => started()), Effect.never) })))
  )
  return { chat, running }
})

describe("chat.events: interruption", () => {
  it.effect("leaving the loop interrupts the turn; the running call is recorded as interrupted before the loop ends", () =>
    Effect.gen(function*() {
      const { chat, running } = yield* slowChat
      const saved: Array<Messages.Messages> = []
      const checkpoint = (messages: Messages.Messages) => Effect.sync(() => void saved.push(messages))
      const events = chat.events(Messages.fromUser("Go."), { checkpoint })
      const seen = yield* Effect.promise(async () => {
        const tags: Array<string> = []
        for await (const event of events) {
          tags.push(event._tag)
          if (event._tag === "StepFinished") {
            await running
            break
          }
        }
        return tags
      })
      expect(seen).toContain("ToolCall")
      // Left, the loop is over: what the turn queued before it stopped is not read.
      expect(yield* Effect.promise(() => events.next())).toEqual({ done: true, value: undefined })
      expect(events.final).toBeUndefined()
      const call = Messages.findTool(saved.at(-1)!, "s1")
      expect(call?.status).toMatchObject({ _tag: "Failed" })
      expect(JSON.stringify(call?.status)).toContain("interrupted")
    }))

  it.effect("aborting the signal interrupts the turn the same way and the loop throws the signal's reason", () =>
    Effect.gen(function*() {
      const { chat, running } = yield* slowChat
      const saved: Array<Messages.Messages> = []
      const checkpoint = (messages: Messages.Messages) => Effect.sync(() => void saved.push(messages))
      const controller = new AbortController()
      void running.then(() => controller.abort(new Error("stop")))
      const error = yield* Effect.promise(() =>
        drain(chat.events(Messages.fromUser("Go."), { checkpoint, signal: controller.signal })).then(
          () => undefined,
          (error: unknown) => error
        )
      )
      expect(error).toMatchObject({ message: "stop" })
      expect(JSON.stringify(Messages.findTool(saved.at(-1)!, "s1")?.status)).toContain("interrupted")
    }))

  it.effect("a signal aborted before the first read starts no turn", () =>
    Effect.gen(function*() {
      const { chat, model } = yield* chatOn([MockLanguageModel.text("Hi.")])
      const error = yield* Effect.promise(() =>
        drain(chat.events(Messages.fromUser("Hi."), { signal: AbortSignal.abort(new Error("never")) })).then(() => undefined, (e: unknown) => e)
      )
      expect(error).toMatchObject({ message: "never" })
      expect(model.requests).toHaveLength(0)
    }))
})

describe("chat.events: errors", () => {
  it.effect("a model stream that fails mid-way throws its typed error, after the deltas before it", () =>
    Effect.gen(function*() {
      const model = LanguageModel.make({
        stream: () =>
          Stream.concat(
            Stream.make<Array<LanguageModel.StreamPart>>({ _tag: "TextDelta", text: "Hel" }),
            Stream.fail(new ChatError.NetworkError({ message: "cut" }))
          )
      })
      const chat = yield* Chat.make().pipe(Effect.provide(LanguageModel.layer(model)))
      const events: Array<ChatEvent.ChatEvent> = []
      const error = yield* Effect.promise(async () => {
        try {
          for await (const event of chat.events(Messages.fromUser("Hi."))) events.push(event)
          return undefined
        } catch (error) {
          return error
        }
      })
      expect(events.map((event) => event._tag)).toEqual(["TextDelta"])
      expect(error).toBeInstanceOf(ChatError.NetworkError)
      expect(error).toMatchObject({ _tag: "NetworkError", message: "cut" })
    }))

  it.effect("a failing turn throws the same error as chat.stream, with the latest messages", () =>
    Effect.gen(function*() {
      const turn = () => [MockLanguageModel.toolCalls([{ id: "c1", name: "list_files", arguments: { folder: "logs" } }]), MockLanguageModel.toolCalls([{ id: "c2", name: "list_files", arguments: { folder: "x" } }])]
      const streamed = yield* chatOn(turn())
      const iterated = yield* chatOn(turn())
      const expected = yield* Effect.flip(Stream.runDrain(streamed.chat.stream(ask, { maxSteps: 1 })))
      const got = yield* Effect.promise(() => drain(iterated.chat.events(ask, { maxSteps: 1 })).then(() => undefined, (e: unknown) => e))
      expect(expected._tag).toBe("StepLimitReached")
      expect(got).toEqual(expected)
    }))
})

describe("chat.events: the iterator protocol", () => {
  it.effect("reads asked for before the last one answered get the events in order", () =>
    Effect.gen(function*() {
      const { chat } = yield* chatOn([MockLanguageModel.text("Hello there.")])
      const expected = yield* Effect.promise(() => drain(chat.events(Messages.fromUser("Hi."))))
      const { chat: again } = yield* chatOn([MockLanguageModel.text("Hello there.")])
      const events = again.events(Messages.fromUser("Hi."))
      const results = yield* Effect.promise(() => Promise.all(Array.from({ length: expected.length + 2 }, () => events.next())))
      expect(results.map((result) => result.value)).toEqual([...expected, undefined, undefined])
      expect(results.slice(-2).every((result) => result.done === true)).toBe(true)
    }))

  it.effect("return() before the first read starts no turn and ends the iteration", () =>
    Effect.gen(function*() {
      const { chat, model } = yield* chatOn([MockLanguageModel.text("Hi.")])
      const events = chat.events(Messages.fromUser("Hi."))
      expect(yield* Effect.promise(() => events.return())).toEqual({ done: true, value: undefined })
      expect(yield* Effect.promise(() => events.next())).toEqual({ done: true, value: undefined })
      expect(model.requests).toHaveLength(0)
    }))
})
