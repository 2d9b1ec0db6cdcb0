import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Result, Schema, Stream } from "effect"
import { Chat, ChatError, type ChatEvent, Messages, Tool, Toolkit, Turn } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import {
  complete,
  expectNothingRunning,
  fileHandlers,
  files,
  paused,
  ran,
  recorder,
  seen,
  statusOf
} from "./support/Chat.helpers.js"

const listCall = (id: string) => MockLanguageModel.toolCalls([{ id, name: "list_files", arguments: { folder: "logs" } }])

describe("Chat errors: the step limit", () => {
  it.effect("StepLimitReached after maxSteps model calls, carrying the messages with every result", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const model = MockLanguageModel.make([listCall("c1"), listCall("c2"), listCall("c3")])
      const chat = yield* Chat.make({ tools: files, maxSteps: 2 }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))
      const error = yield* Effect.flip(chat.complete(Messages.fromUser("Loop forever.")))
      expect(error).toBeInstanceOf(ChatError.StepLimitReached)
      if (error._tag !== "StepLimitReached") return
      expect(error.maxSteps).toBe(2)
      expect(error.messages).toHaveLength(3)
      expect(statusOf(error.messages, "c1")).toBe("Completed")
      expect(statusOf(error.messages, "c2")).toBe("Completed")
      expect(ran(rec)).toEqual(["list_files", "list_files"])
      expect(model.requests).toHaveLength(2)

      // A bigger budget for one call lets the turn go on from there, without running anything twice.
      const more = yield* Effect.flip(chat.resume(error.messages, { maxSteps: 3 }))
      expect(more._tag).toBe("StepLimitReached")
      expect(ran(rec)).toEqual(["list_files", "list_files", "list_files"])
    }))

  it.effect("the stream fails with StepLimitReached too (it does not just end)", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([listCall("c1"), listCall("c2")])
      const chat = yield* Chat.make({ tools: files, maxSteps: 1 }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(recorder()))))
      const events: Array<ChatEvent.ChatEvent> = []
      const error = yield* Effect.flip(Stream.runForEach(chat.stream(Messages.fromUser("Loop.")), (event) => Effect.sync(() => events.push(event))))
      expect(error._tag).toBe("StepLimitReached")
      expect(events.map((event) => event._tag).filter((tag) => tag !== "ToolCallDelta")).toEqual(["ToolCall", "StepFinished", "ToolResult"])
    }))
})

describe("Chat errors: model errors", () => {
  it.effect("a model error after tools ran carries the latest messages; retrying does not run them again", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const model = MockLanguageModel.make([
        listCall("c1"),
        MockLanguageModel.fail(new ChatError.RateLimited({ message: "slow down", retryAfterMillis: 1000 })),
        MockLanguageModel.text("Two logs.")
      ])
      const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))
      const error = yield* Effect.flip(chat.complete(Messages.fromUser("What is in logs?")))
      expect(error).toBeInstanceOf(ChatError.RateLimited)
      if (error._tag !== "RateLimited") return
      expect(error.retryAfterMillis).toBe(1000)
      expect(ChatError.isRetryable(error)).toBe(true)
      expect(error.messages).toBeDefined()
      expect(statusOf(error.messages!, "c1")).toBe("Completed")
      expect(ran(rec)).toEqual(["list_files"])

      const result = yield* chat.resume(error.messages!)
      expect(complete(result).value).toBe("Two logs.")
      expect(ran(rec)).toEqual(["list_files"])
      expect(seen(model.requests[2], "c1").result?.value).toEqual(["a.log", "b.log"])
    }))

  it.effect("a model error before anything changed carries no messages (retry with the same input)", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.fail(new ChatError.AuthenticationError({ message: "bad key", status: 401 }))
      ])
      const chat = yield* Chat.make().pipe(Effect.provide(model.layer))
      const error = yield* Effect.flip(chat.complete(Messages.fromUser("Hi.")))
      expect(error._tag).toBe("AuthenticationError")
      if (error._tag === "AuthenticationError") {
        expect(error.messages).toBeUndefined()
        expect(ChatError.isRetryable(error)).toBe(false)
      }
    }))

  it.effect("a stream cut mid-way is a NetworkError and leaves no half message", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const model = MockLanguageModel.make([
        listCall("c1"),
        MockLanguageModel.text("There are two logs in that folder.", { cutAfterChunks: 3 }),
        MockLanguageModel.text("There are two logs.")
      ])
      const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))
      const events: Array<ChatEvent.ChatEvent> = []
      const error = yield* Effect.flip(
        Stream.runForEach(chat.stream(Messages.fromUser("What is in logs?")), (event) => Effect.sync(() => events.push(event)))
      )
      expect(error).toBeInstanceOf(ChatError.NetworkError)
      if (error._tag !== "NetworkError") return
      // The first pieces were streamed, but the state holds only what finished: the tool call and its result.
      expect(events.filter((event) => event._tag === "TextDelta").map((event) => event.text).join("")).toBe("There are tw")
      expect(error.messages).toHaveLength(2)
      expect(error.messages![1]!.parts.map((part) => part._tag)).toEqual(["ToolCall"])
      expect(statusOf(error.messages!, "c1")).toBe("Completed")

      // Streaming again from the error's messages picks up there.
      const again = [...yield* Stream.runCollect(chat.stream(error.messages!))]
      const last = again[again.length - 1]
      expect(last?._tag === "Completed" && Messages.textOf(last.response)).toBe("There are two logs.")
      expect(ran(rec)).toEqual(["list_files"])
    }))

  it.effect("running past the end of the script is a defect naming the request (a clear test failure)", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("Only answer.")])
      const chat = yield* Chat.make().pipe(Effect.provide(model.layer))
      complete(yield* chat.complete(Messages.fromUser("One.")))
      const exit = yield* Effect.exit(chat.complete(Messages.fromUser("Two.")))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      if (Exit.isFailure(exit)) {
        const defect = Cause.squash(exit.cause)
        expect(String(defect)).toContain("MockLanguageModel: the script has 1 response(s)")
        expect(String(defect)).toContain("Two.")
      }
    }))
})

describe("Chat errors: handler defects and interruptions leave a consistent state", () => {
  const Risky = Tool.make("risky", { description: "Might blow up.", parameters: { n: Schema.Number }, success: Schema.Number })
  const kit = Toolkit.make(Risky)

  /** A `risky` handler that signals `started` and then never finishes; `runs()` counts its starts. */
  const hangingRisky = Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    let count = 0
    const handlers = kit.toLayer({
      risky: () =>
        Effect.suspend(() => {
          count++
          return Deferred.succeed(started, undefined).pipe(Effect.andThen(Effect.never))
        })
    })
    return { started, handlers, runs: () => count }
  })

  it.effect("a handler defect: ToolHandlerDefect with messages where no call is Running; resuming never reruns it", () =>
    Effect.gen(function*() {
      const runs: Array<number> = []
      const handlers = kit.toLayer({
        risky: ({ n }) =>
          Effect.suspend(() => {
            runs.push(n)
            return n === 2 ? Effect.die(new Error("disk on fire")) : Effect.succeed(n * 10)
          })
      })
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([1, 2, 3].map((n) => ({ id: `r${n}`, name: "risky", arguments: { n } }))),
        MockLanguageModel.text("One call failed.")
      ])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      const error = yield* Effect.flip(chat.complete(Messages.fromUser("Go.")))
      expect(error).toBeInstanceOf(ChatError.ToolHandlerDefect)
      if (error._tag !== "ToolHandlerDefect") return
      expect(error.id).toBe("r2")
      expect(error.name).toBe("risky")
      expect(error.detail).toContain("disk on fire")
      expectNothingRunning(error.messages)
      // The other calls of the response finished normally.
      expect(statusOf(error.messages, "r1")).toBe("Completed")
      expect(statusOf(error.messages, "r2")).toBe("Failed")
      expect(statusOf(error.messages, "r3")).toBe("Completed")
      expect([...runs].sort()).toEqual([1, 2, 3])

      const result = yield* chat.resume(error.messages)
      complete(result)
      expect([...runs].sort()).toEqual([1, 2, 3])
      const failed = seen(model.requests[1], "r2").result
      expect(failed?.isError).toBe(true)
      // The model is told the call failed, not the internals of the defect.
      expect(failed?.text).toContain("failed unexpectedly")
      expect(failed?.text).not.toContain("disk on fire")
    }))

  it.effect("an interruption while a tool runs: the checkpoint holds no Running call and resuming does not run it again", () =>
    Effect.gen(function*() {
      const { started, handlers, runs } = yield* hangingRisky
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "r1", name: "risky", arguments: { n: 1 } }]),
        MockLanguageModel.text("It was interrupted.")
      ])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      const saved: Array<Messages.Messages> = []
      const fiber = yield* chat.complete(Messages.fromUser("Go."), {
        checkpoint: (messages) => Effect.sync(() => saved.push(messages))
      }).pipe(Effect.forkChild)
      yield* Deferred.await(started)

      // While it runs, the last checkpoint records the call as running.
      const whileRunning = saved[saved.length - 1]!
      expect(statusOf(whileRunning, "r1")).toBe("Running")

      yield* Fiber.interrupt(fiber)
      const afterInterrupt = saved[saved.length - 1]!
      expectNothingRunning(afterInterrupt)
      expect(statusOf(afterInterrupt, "r1")).toBe("Failed")
      // The shell says what the reducer says of a call found running after a crash (below): one text.
      expect(Messages.findTool(afterInterrupt, "r1")?.status).toMatchObject({ error: Turn.interruptedError })

      const result = yield* chat.resume(afterInterrupt)
      expect(complete(result).value).toBe("It was interrupted.")
      expect(runs()).toBe(1)
      expect(seen(model.requests[1], "r1").result?.text).toContain("interrupted")
    }))

  it.effect("a crash while a tool runs: resuming the checkpoint that still says Running records it as failed, never reruns", () =>
    Effect.gen(function*() {
      const { started, handlers, runs } = yield* hangingRisky
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "r1", name: "risky", arguments: { n: 1 } }]),
        MockLanguageModel.text("Its outcome is unknown.")
      ])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      let stored = ""
      const fiber = yield* chat.complete(Messages.fromUser("Go."), {
        checkpoint: (messages) => Effect.sync(() => (stored = Result.getOrThrow(Messages.toJson(messages))))
      }).pipe(Effect.forkChild)
      yield* Deferred.await(started)
      // The process "dies" here: only what was stored survives.
      const crashed = yield* Effect.fromResult(Messages.fromJson(stored))
      expect(statusOf(crashed, "r1")).toBe("Running")

      const result = yield* chat.resume(crashed)
      complete(result)
      expect(runs()).toBe(1)
      expect(statusOf(result.messages, "r1")).toBe("Failed")
      expect(Messages.findTool(result.messages, "r1")?.status).toMatchObject({ error: Turn.interruptedError })
      expect(seen(model.requests[1], "r1").result?.isError).toBe(true)
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("interrupting a stream while a tool runs leaves the same consistent checkpoint", () =>
    Effect.gen(function*() {
      const { started, handlers, runs } = yield* hangingRisky
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "r1", name: "risky", arguments: { n: 1 } }]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      const saved: Array<Messages.Messages> = []
      const fiber = yield* Stream.runDrain(chat.stream(Messages.fromUser("Go."), {
        checkpoint: (messages) => Effect.sync(() => saved.push(messages))
      })).pipe(Effect.forkChild)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      const last = saved[saved.length - 1]!
      expectNothingRunning(last)
      complete(yield* chat.resume(last))
      expect(runs()).toBe(1)
    }))

  it.effect("every change of state is checkpointed, ending with the returned messages", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "c1", name: "list_files", arguments: { folder: "logs" } },
          { id: "c2", name: "delete_files", arguments: { paths: ["a.log"] } }
        ])
      ])
      const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(recorder()))))
      const saved: Array<Messages.Messages> = []
      const result = yield* chat.complete(Messages.fromUser("Go."), {
        checkpoint: (messages) => Effect.sync(() => saved.push(messages))
      })
      paused(result)
      expect(saved[saved.length - 1]).toEqual(result.messages)
      // Response added (calls proposed) → decided → c1 started → c1 finished.
      expect(saved.map((messages) => [statusOf(messages, "c1"), statusOf(messages, "c2")])).toEqual([
        ["Proposed", "Proposed"],
        ["Running", "AwaitingApproval"],
        ["Completed", "AwaitingApproval"]
      ])
    }))
})
