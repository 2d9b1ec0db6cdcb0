/**
 * The `Chat` shell and a running call's requests for a person's input (what an MCP elicitation
 * becomes): the handler records them through `CallInfo.inputs`, the checkpoint saved while the call
 * waits holds them (a UI reading the store sees them), the stream announces them, the answer removes
 * them, and a crash while one waits is recorded as the request lost, the call never run again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Result, Schema, Stream } from "effect"
import { Chat, ChatEvent, Messages, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { complete, seen } from "./support/Chat.helpers.js"

const Ask = Tool.make("ask_name", { description: "Ask the person's name.", parameters: {}, success: Schema.String })
const kit = Toolkit.make(Ask)

const request: Messages.InputRequest = {
  id: "elicitation-1",
  from: "people-server",
  message: "Your name?",
  requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  deadline: 60_000
}

/** A handler that records `request`, waits for the test to answer, settles it and returns the answer. */
const asking = Effect.gen(function*() {
  const asked = yield* Deferred.make<void>()
  const answer = yield* Deferred.make<string>()
  let runs = 0
  const handlers = kit.toLayer({
    ask_name: (_params, info) =>
      Effect.gen(function*() {
        runs++
        yield* info.inputs!.requested(request)
        yield* Deferred.succeed(asked, undefined)
        const name = yield* Deferred.await(answer)
        yield* info.inputs!.settled(request.id)
        return `The person is ${name}.`
      })
  })
  return { asked, answer, handlers, runs: () => runs }
})

const script = () =>
  MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "a1", name: "ask_name", arguments: {} }]), MockLanguageModel.text("Hello, Ada.")])

describe("Chat: a running call's requests for input", () => {
  it.effect("the checkpoint while the call waits holds the request; the answer removes it; the result reaches the model", () =>
    Effect.gen(function*() {
      const { asked, answer, handlers, runs } = yield* asking
      const model = script()
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      const saved: Array<Messages.Messages> = []
      const fiber = yield* chat.complete(Messages.fromUser("Who am I?"), {
        checkpoint: (messages) => Effect.sync(() => saved.push(messages))
      }).pipe(Effect.forkChild)
      yield* Deferred.await(asked)

      const waiting = saved[saved.length - 1]!
      expect(Messages.findTool(waiting, "a1")?.status).toEqual({ _tag: "Running", inputRequests: [request] })
      expect(Messages.pendingInputs(waiting).map((pending) => [pending.call.id, pending.request.id])).toEqual([["a1", "elicitation-1"]])
      // The stored form holds it too: a UI reading the store shows it.
      const stored = Result.getOrThrow(Messages.toJson(waiting))
      expect(Messages.pendingInputs(Result.getOrThrow(Messages.fromJson(stored)))).toHaveLength(1)

      yield* Deferred.succeed(answer, "Ada")
      const result = yield* Fiber.join(fiber)
      expect(complete(result).value).toBe("Hello, Ada.")
      expect(Messages.pendingInputs(result.messages)).toEqual([])
      expect(seen(model.requests[1], "a1").result?.text).toContain("The person is Ada.")
      expect(runs()).toBe(1)
      // A checkpoint after the answer and before the result no longer lists it.
      const settled = saved.find((messages, i) => i > saved.indexOf(waiting) && Messages.findTool(messages, "a1")?.status._tag === "Running")
      expect(settled === undefined ? undefined : Messages.findTool(settled, "a1")?.status).toEqual({ _tag: "Running" })
    }))

  it.effect("the stream announces the request (InputRequested) and its end (InputSettled), before the call's result", () =>
    Effect.gen(function*() {
      const { asked, answer, handlers } = yield* asking
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(script().layer, handlers)))
      const fiber = yield* Stream.runCollect(chat.stream(Messages.fromUser("Who am I?"))).pipe(Effect.forkChild)
      yield* Deferred.await(asked)
      yield* Deferred.succeed(answer, "Ada")
      const events = yield* Fiber.join(fiber)
      const tags = events.map((event) => event._tag).filter((tag) => tag !== "TextDelta" && tag !== "ToolCallDelta" && tag !== "StepFinished")
      expect(tags).toEqual(["ToolCall", "InputRequested", "InputSettled", "ToolResult", "Completed"])
      const requested = events.find((event) => event._tag === "InputRequested")!
      expect(ChatEvent.ChatEvent.$is("InputRequested")(requested) && requested.request).toEqual(request)
      expect(ChatEvent.ChatEvent.$is("InputRequested")(requested) && requested.call.id).toBe("a1")
    }))

  it.effect("a crash while the request waits: resuming the stored state records it lost with the connection, never runs the call again", () =>
    Effect.gen(function*() {
      const { asked, handlers, runs } = yield* asking
      const model = script()
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      let stored = ""
      const fiber = yield* chat.complete(Messages.fromUser("Who am I?"), {
        checkpoint: (messages) => Effect.sync(() => (stored = Result.getOrThrow(Messages.toJson(messages))))
      }).pipe(Effect.forkChild)
      yield* Deferred.await(asked)
      // The process "dies" here: only what was stored survives (and the request was never answered).
      const crashed = yield* Effect.fromResult(Messages.fromJson(stored))
      expect(Messages.pendingInputs(crashed).map((pending) => pending.request.id)).toEqual(["elicitation-1"])

      const result = yield* chat.resume(crashed)
      complete(result)
      expect(runs()).toBe(1)
      const status = Messages.findTool(result.messages, "a1")?.status
      expect(status?._tag).toBe("Failed")
      const error = status?._tag === "Failed" ? String(status.error) : ""
      expect(error).toContain(`"Your name?" (elicitation-1, from people-server)`)
      // The model is told so.
      const text = seen(model.requests[1], "a1").result?.text ?? ""
      expect(text).toContain("(elicitation-1, from people-server)")
      expect(text).toContain("lost with the connection")
      expect(text).toContain("outcome is unknown")
      expect(Messages.pendingInputs(result.messages)).toEqual([])
      yield* Fiber.interrupt(fiber)
    }))
})
