/**
 * The conformance suite catches broken providers: the OpenAI Chat Completions
 * harness with its layer wrapped by a middleware that breaks one promise
 * (drops a rejection's reason, sends the original arguments of an edited
 * call, mistypes an error, swallows a broken stream, loses usage, drops the
 * system prompt) fails the scenario that covers it, naming what is wrong.
 */
import { ChatError, LanguageModel, type Messages } from "@chat-ts/core"
import { Conformance } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { chatCompletions } from "./conformance/openai.js"

/** The harness with its model wrapped by `middleware`. */
const broken = (middleware: Layer.Layer<LanguageModel.LanguageModel, never, LanguageModel.LanguageModel>): Conformance.Harness => ({
  ...chatCompletions,
  layer: (server, settings) => middleware.pipe(Layer.provide(chatCompletions.layer(server, settings)))
})

const mapCalls = (f: (call: Messages.ToolCallPart) => Messages.ToolCallPart) =>
  LanguageModel.mapRequest((request) => ({
    ...request,
    messages: request.messages.map((message) => ({
      ...message,
      parts: message.parts.map((part) => (part._tag === "ToolCall" ? f(part) : part))
    }))
  }))

/** Runs the scenario of `harness` named `name` and returns how it failed. */
const failureOf = (harness: Conformance.Harness, name: string) =>
  Effect.gen(function*() {
    const scenario = Conformance.scenarios(harness).find((s) => s.name.startsWith(name))
    expect(scenario, name).toBeDefined()
    const exit = yield* Effect.exit(scenario!.run)
    expect(Exit.isFailure(exit)).toBe(true)
    return Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
  })

describe("the conformance suite fails a provider that", () => {
  it.effect("drops a rejection's reason", () =>
    Effect.gen(function*() {
      const harness = broken(mapCalls((call) =>
        call.status._tag === "Rejected" ? { ...call, status: { _tag: "Rejected", by: call.status.by } } : call
      ))
      expect(yield* failureOf(harness, "pause → approve")).toContain("the rejection's reason is sent")
    }), Conformance.timeoutMillis)

  it.effect("sends the original arguments of an edited call", () =>
    Effect.gen(function*() {
      const harness = broken(mapCalls((call) => {
        const { editedArguments: _, ...status } = call.status as typeof call.status & { editedArguments?: string }
        return { ...call, status } as Messages.ToolCallPart
      }))
      expect(yield* failureOf(harness, "pause → approve")).toContain("the edited arguments are sent")
    }), Conformance.timeoutMillis)

  it.effect("reports a rate limit as a server error", () =>
    Effect.gen(function*() {
      const harness = broken(LanguageModel.middleware((model) => ({
        generate: (request) =>
          Effect.catchTag(model.generate(request), "RateLimited", (error) => Effect.fail(new ChatError.ServerError({ message: error.message }))),
        stream: model.stream
      })))
      expect(yield* failureOf(harness, "429 with retry-after: RateLimited")).toContain("expected a RateLimited")
    }), Conformance.timeoutMillis)

  it.effect("ends a broken stream quietly", () =>
    Effect.gen(function*() {
      const harness = broken(LanguageModel.middleware((model) => ({
        generate: model.generate,
        stream: (request) => Stream.catch(model.stream(request), () => Stream.empty)
      })))
      expect(yield* failureOf(harness, "a stream cut mid-way")).toContain("expected a failure")
    }), Conformance.timeoutMillis)

  it.effect("loses the usage of a stream", () =>
    Effect.gen(function*() {
      const harness = broken(LanguageModel.middleware((model) => ({
        generate: model.generate,
        stream: (request) =>
          Stream.map(model.stream(request), (part) => (part._tag === "Finish" ? { ...part, usage: LanguageModel.noUsage } : part))
      })))
      expect(yield* failureOf(harness, "text: several deltas")).toContain("usage.inputTokens")
    }), Conformance.timeoutMillis)

  it.effect("drops the system prompt", () =>
    Effect.gen(function*() {
      const harness = broken(LanguageModel.mapRequest((request) => ({
        ...request,
        messages: request.messages.filter((message) => message.role !== "system")
      })))
      expect(yield* failureOf(harness, "text: one text part")).toContain("the system prompt is sent")
    }), Conformance.timeoutMillis)
})
