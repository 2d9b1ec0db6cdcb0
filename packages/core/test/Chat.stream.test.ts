import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Action, Chat, ChatError, ChatEvent, LanguageModel, Messages, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { fileHandlers, files, ran, recorder, seen, until } from "./support/Chat.helpers.js"

const ask = Messages.fromUser("Delete the old logs.")

const script = (final: string) => [
  MockLanguageModel.toolCalls([
    { id: "c1", name: "list_files", arguments: { folder: "logs" } },
    { id: "c2", name: "delete_files", arguments: { paths: ["a.log", "b.log"] } }
  ], { reasoning: "Look first.", text: "Let me check.", usage: { inputTokens: 100, outputTokens: 10 } }),
  MockLanguageModel.text(final, { usage: { inputTokens: 50, outputTokens: 5 } })
]

const collect = <E, R>(stream: Stream.Stream<ChatEvent.ChatEvent, E, R>): Effect.Effect<ReadonlyArray<ChatEvent.ChatEvent>, E, R> =>
  Stream.runCollect(stream)

/** A compact, comparable view of an event. */
const describeEvent = (event: ChatEvent.ChatEvent): string => {
  switch (event._tag) {
    case "TextDelta":
    case "ReasoningDelta":
      return `${event._tag} ${JSON.stringify(event.text)}`
    case "ToolCallDelta":
      return `ToolCallDelta ${event.id} ${event.name} ${JSON.stringify(event.argumentsDelta)}`
    case "ToolCall":
      return `ToolCall ${event.call.id} ${event.call.name}`
    case "ToolResult":
      return `ToolResult ${event.call.id} ${event.call.status._tag}`
    case "InputRequested":
      return `InputRequested ${event.call.id} ${event.request.id}`
    case "InputSettled":
      return `InputSettled ${event.call.id} ${event.requestId}`
    case "Waiting":
      return `Waiting ${event.until} ${event.toolIds.join(",")}`
    case "StepFinished":
      return `StepFinished ${event.step} ${event.usage.inputTokens}/${event.usage.outputTokens} ${event.finishReason}`
    case "Paused":
      return `Paused ${event.reason._tag}`
    case "Completed":
      return `Completed ${JSON.stringify(Messages.textOf(event.response))}`
    case "AnswerInterrupted":
      return `AnswerInterrupted ${event.step}`
  }
}

/** The events but the tool-call argument deltas (tested on their own in Chat.streamDeltas.test.ts). */
const withoutArgumentDeltas = (events: ReadonlyArray<ChatEvent.ChatEvent>) =>
  events.filter((event) => event._tag !== "ToolCallDelta")

const lastEvent = (events: ReadonlyArray<ChatEvent.ChatEvent>) => {
  const last = events[events.length - 1]
  if (last === undefined) throw new Error("no events")
  return last
}

describe("Chat.stream: the seed flow", () => {
  it.effect("events in order; the pause is the last event; streaming the approved messages continues the turn", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const model = MockLanguageModel.make(script("Deleted both."))
      const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))

      const first = yield* collect(chat.stream(ask))
      expect(first.map(describeEvent)).toEqual([
        "ReasoningDelta \"Look\"",
        "ReasoningDelta \" fir\"",
        "ReasoningDelta \"st.\"",
        "TextDelta \"Let \"",
        "TextDelta \"me c\"",
        "TextDelta \"heck\"",
        "TextDelta \".\"",
        "ToolCallDelta c1 list_files \"\"",
        "ToolCallDelta c1 list_files \"{\\\"fol\"",
        "ToolCallDelta c1 list_files \"der\\\":\"",
        "ToolCallDelta c1 list_files \"\\\"logs\"",
        "ToolCallDelta c1 list_files \"\\\"}\"",
        "ToolCallDelta c2 delete_files \"\"",
        "ToolCallDelta c2 delete_files \"{\\\"pat\"",
        "ToolCallDelta c2 delete_files \"hs\\\":[\"",
        "ToolCallDelta c2 delete_files \"\\\"a.lo\"",
        "ToolCallDelta c2 delete_files \"g\\\",\\\"b\"",
        "ToolCallDelta c2 delete_files \".log\\\"\"",
        "ToolCallDelta c2 delete_files \"]}\"",
        "ToolCall c1 list_files",
        "ToolCall c2 delete_files",
        "StepFinished 1 100/10 tool-calls",
        "ToolResult c1 Completed",
        "Paused AwaitingApproval"
      ])
      const pause = lastEvent(first)
      if (pause._tag !== "Paused") throw new Error("expected a pause")
      expect(pause.reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["c2"] })
      expect(pause.usage).toEqual({ inputTokens: 100, outputTokens: 10 })
      const toolResult = first.find((event) => event._tag === "ToolResult")
      expect(toolResult?._tag === "ToolResult" && toolResult.call.status).toEqual({ _tag: "Completed", result: ["a.log", "b.log"] })
      expect(ran(rec)).toEqual(["list_files"])

      const second = yield* collect(chat.stream(yield* Effect.fromResult(Messages.approve(pause.messages, "c2"))))
      expect(second.map(describeEvent)).toEqual([
        "ToolResult c2 Completed",
        "TextDelta \"Dele\"",
        "TextDelta \"ted \"",
        "TextDelta \"both\"",
        "TextDelta \".\"",
        "StepFinished 2 50/5 stop",
        "Completed \"Deleted both.\""
      ])
      const done = lastEvent(second)
      if (done._tag !== "Completed") throw new Error("expected a completion")
      expect(done.usage).toEqual({ inputTokens: 150, outputTokens: 15 })
      expect(done.response).toEqual(done.messages[done.messages.length - 1])
      expect(ran(rec)).toEqual(["list_files", "delete_files"])
    }))

  it.effect("streams the same messages as complete/resume for the same script", () =>
    Effect.gen(function*() {
      const run = (streamed: boolean) =>
        Effect.gen(function*() {
          const model = MockLanguageModel.make(script("Deleted both."))
          const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(recorder()))))
          if (!streamed) {
            const first = yield* chat.complete(ask)
            return (yield* chat.resume(yield* Effect.fromResult(Messages.approve(first.messages, "c2")))).messages
          }
          const pause = lastEvent(yield* collect(chat.stream(ask)))
          if (pause._tag !== "Paused") throw new Error("expected a pause")
          const done = lastEvent(yield* collect(chat.stream(yield* Effect.fromResult(Messages.approve(pause.messages, "c2")))))
          if (done._tag !== "Completed") throw new Error("expected a completion")
          return done.messages
        })
      expect(yield* run(true)).toEqual(yield* run(false))
    }))

  it.effect("a call the person rejected is announced as a ToolResult when the stream resumes; the model sees the reason", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const model = MockLanguageModel.make(script("I left them."))
      const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))
      const pause = lastEvent(yield* collect(chat.stream(ask)))
      if (pause._tag !== "Paused") throw new Error("expected a pause")
      const resumed = yield* collect(chat.stream(yield* Effect.fromResult(Messages.reject(pause.messages, "c2", "keep them"))))
      expect(resumed.map(describeEvent)).toEqual([
        "ToolResult c2 Rejected",
        "TextDelta \"I le\"",
        "TextDelta \"ft t\"",
        "TextDelta \"hem.\"",
        "StepFinished 2 50/5 stop",
        "Completed \"I left them.\""
      ])
      const rejected = resumed[0]
      expect(rejected?._tag === "ToolResult" && rejected.call.status).toEqual({ _tag: "Rejected", by: "user", reason: "keep them" })
      expect(ran(rec)).toEqual(["list_files"])
      expect(seen(model.requests[1], "c2").result?.text).toContain("keep them")
    }))
  it.effect("a rejection made in a partial resume is announced once, when the turn moves past the response", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "d1", name: "delete_files", arguments: { paths: ["a.log"] } },
          { id: "d2", name: "delete_files", arguments: { paths: ["b.log"] } }
        ]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(recorder()))))
      const first = lastEvent(yield* collect(chat.stream(ask)))
      if (first._tag !== "Paused") throw new Error("expected a pause")
      const partial = yield* collect(chat.stream(yield* Effect.fromResult(Messages.reject(first.messages, "d1"))))
      expect(partial.map(describeEvent)).toEqual(["Paused AwaitingApproval"])
      const second = lastEvent(partial)
      if (second._tag !== "Paused") throw new Error("expected a pause")
      const rest = yield* collect(chat.stream(yield* Effect.fromResult(Messages.approve(second.messages, "d2"))))
      expect(rest.map(describeEvent)).toEqual([
        "ToolResult d2 Completed",
        "ToolResult d1 Rejected",
        "TextDelta \"ok\"",
        "StepFinished 2 10/5 stop",
        "Completed \"ok\""
      ])
    }))
})

describe("Chat.stream: rejected and failed calls", () => {
  it.effect("policy rejections, unknown tools, invalid arguments and handler failures all get a ToolResult", () =>
    Effect.gen(function*() {
      const Wipe = Tool.make("wipe", { description: "Wipe the disk.", parameters: {} })
      const guarded = Toolkit.withStrategy(Toolkit.make(Wipe), () => Action.Reject({ reason: "never" }))
      const handlers = Layer.merge(fileHandlers(recorder()), guarded.toLayer({ wipe: () => Effect.void }))
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "w", name: "wipe" },
          { id: "u", name: "format_disk" },
          { id: "j", name: "read_file", arguments: "{oops" },
          { id: "m", name: "read_file", arguments: { path: "missing" } },
          { id: "ok", name: "read_file", arguments: { path: "notes.txt" } }
        ]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* Chat.make({ tools: [files, guarded] }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      const events = yield* collect(chat.stream(Messages.fromUser("Go.")))
      const described = withoutArgumentDeltas(events).map(describeEvent)
      expect(described.slice(0, 6)).toEqual([
        "ToolCall w wipe",
        "ToolCall u format_disk",
        "ToolCall j read_file",
        "ToolCall m read_file",
        "ToolCall ok read_file",
        "StepFinished 1 10/5 tool-calls"
      ])
      // Decisions come first (in call order), then the calls that ran, as they finish.
      expect(described.slice(6, 9)).toEqual(["ToolResult w Rejected", "ToolResult u Failed", "ToolResult j Failed"])
      expect([...described.slice(9, 11)].sort()).toEqual(["ToolResult m Failed", "ToolResult ok Completed"])
      expect(described.slice(11)).toEqual(["TextDelta \"ok\"", "StepFinished 2 10/5 stop", "Completed \"ok\""])
      const results = new Map(
        events.flatMap((event) => (event._tag === "ToolResult" ? [[event.call.id, event.call.status] as const] : []))
      )
      expect(results.get("w")).toEqual({ _tag: "Rejected", by: "policy", reason: "never" })
      expect(results.get("m")).toEqual({ _tag: "Failed", error: { _tag: "FileNotFound", path: "missing" } })
    }))
})

describe("Chat.stream: scheduled calls and options", () => {
  it.effect("with waitForScheduled the stream sleeps on the Clock and goes on when the call is due", () =>
    Effect.gen(function*() {
      const Remind = Tool.make("remind", { description: "Remind.", parameters: { text: Schema.String }, success: Schema.String })
      const kit = Toolkit.withStrategy(Toolkit.make(Remind), () => Action.Defer({ after: "1 hour" }))
      const reminded: Array<string> = []
      const handlers = kit.toLayer({ remind: ({ text }) => Effect.sync(() => (reminded.push(text), "sent")) })
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "r", name: "remind", arguments: { text: "stand up" } }]),
        MockLanguageModel.text("Reminded.")
      ])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      const events: Array<ChatEvent.ChatEvent> = []
      const fiber = yield* Stream.runForEach(
        chat.stream(Messages.fromUser("Remind me in an hour."), { waitForScheduled: true }),
        (event) => Effect.sync(() => events.push(event))
      ).pipe(Effect.forkChild)
      // The turn runs on its own fiber: let it reach its wait before moving the clock.
      yield* until(() => events.some((event) => event._tag === "Waiting"), "the stream announced its wait")
      yield* TestClock.adjust("59 minutes")
      expect(withoutArgumentDeltas(events).map(describeEvent)).toEqual([
        "ToolCall r remind",
        "StepFinished 1 10/5 tool-calls",
        `Waiting ${60 * 60 * 1000} r`
      ])
      expect(reminded).toEqual([])
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      expect(reminded).toEqual(["stand up"])
      expect(withoutArgumentDeltas(events).map(describeEvent).slice(3)).toEqual([
        "ToolResult r Completed",
        "TextDelta \"Remi\"",
        "TextDelta \"nded\"",
        "TextDelta \".\"",
        "StepFinished 2 10/5 stop",
        "Completed \"Reminded.\""
      ])
    }))

  it.effect("without waitForScheduled a scheduled call pauses the stream", () =>
    Effect.gen(function*() {
      const Remind = Tool.make("remind", { description: "Remind.", parameters: {} })
      const kit = Toolkit.withStrategy(Toolkit.make(Remind), () => Action.Defer({ at: 5_000 }))
      const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "r", name: "remind" }])])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.toLayer({ remind: () => Effect.void }))))
      const last = lastEvent(yield* collect(chat.stream(Messages.fromUser("Later."))))
      expect(last._tag === "Paused" && last.reason).toEqual({ _tag: "Scheduled", toolIds: ["r"], earliest: 5_000 })
    }))

  it.effect("the chat's model options and the call's options reach the model", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("hi")])
      const chat = yield* Chat.make({ modelOptions: { temperature: 0.2, maxTokens: 100 } }).pipe(Effect.provide(model.layer))
      yield* Stream.runDrain(chat.stream(Messages.fromUser("Hi."), { modelOptions: { maxTokens: 5, toolChoice: "none" } }))
      expect(model.requests[0]?.options).toEqual({ temperature: 0.2, maxTokens: 5, toolChoice: "none" })
    }))

  it.effect("a consumer may stop early (take): the turn is interrupted cleanly", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("A long answer that keeps going.")])
      const chat = yield* Chat.make().pipe(Effect.provide(model.layer))
      const events = yield* collect(Stream.take(chat.stream(Messages.fromUser("Talk.")), 2))
      expect(events.map(describeEvent)).toEqual(["TextDelta \"A lo\"", "TextDelta \"ng a\""])
    }))
})


describe("Chat.stream: the consumer's pull drives the model", () => {
  it.effect("a consumer that stops after three deltas has read three parts of an endless model stream", () =>
    Effect.gen(function*() {
      let read = 0
      const model = LanguageModel.make({
        stream: () => Stream.fromEffectRepeat(Effect.sync((): LanguageModel.StreamPart => ({ _tag: "TextDelta", text: `${++read} ` })))
      })
      const chat = yield* Chat.make().pipe(Effect.provide(LanguageModel.layer(model)))
      const events = yield* collect(Stream.take(chat.stream(Messages.fromUser("Count.")), 3))
      expect(events.map(describeEvent)).toEqual(["TextDelta \"1 \"", "TextDelta \"2 \"", "TextDelta \"3 \""])
      // Nothing was read ahead of the consumer (a turn pushing events would have read on until its buffer filled).
      expect(read).toBe(3)
    }))

  it.effect("a model stream that fails mid-way fails the stream with the typed error, after the deltas before it", () =>
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
      const error = yield* Effect.flip(Stream.runForEach(chat.stream(Messages.fromUser("Hi.")), (event) => Effect.sync(() => events.push(event))))
      expect(events.map(describeEvent)).toEqual(["TextDelta \"Hel\""])
      expect(error).toMatchObject({ _tag: "NetworkError", message: "cut" })
    }))

  it.effect("a model stream that ends before its finish is a NetworkError, as with complete", () =>
    Effect.gen(function*() {
      const model = LanguageModel.make({ stream: () => Stream.make<Array<LanguageModel.StreamPart>>({ _tag: "TextDelta", text: "Hel" }) })
      const chat = yield* Chat.make().pipe(Effect.provide(LanguageModel.layer(model)))
      const streamed = yield* Effect.flip(Stream.runDrain(chat.stream(Messages.fromUser("Hi."))))
      const completed = yield* Effect.flip(chat.complete(Messages.fromUser("Hi.")))
      expect(streamed).toMatchObject({ _tag: "NetworkError" })
      expect(streamed.message).toBe(completed.message)
    }))
})
