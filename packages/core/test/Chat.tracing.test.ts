import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Stream, Tracer } from "effect"
import { Chat, LanguageModel, Messages, Tool, Toolkit } from "../src/index.js"
import * as Schema from "effect/Schema"
import * as Context from "effect/Context"
import { MockLanguageModel } from "../src/testing/index.js"
import { fileHandlers, files, recorder } from "./support/Chat.helpers.js"

/** A tracer that records the spans it was asked to start, with their attributes when they end. */
const recordingTracer = () => {
  const spans: Array<{ name: string; parent: string | undefined; attributes: Map<string, unknown> }> = []
  const tracer = Tracer.make({
    span: ({ annotations, kind, links, name, parent, startTime }) => {
      const attributes = new Map<string, unknown>()
      const record = {
        name,
        parent: Option.isSome(parent) && parent.value._tag === "Span" ? parent.value.name : undefined,
        attributes
      }
      spans.push(record)
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: String(spans.length),
        traceId: "trace",
        parent,
        annotations,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        end: () => {},
        attribute: (key, value) => {
          attributes.set(key, value)
        },
        event: () => {},
        addLinks: () => {}
      }
      return span
    }
  })
  return { tracer, spans }
}

describe("Chat tracing", () => {
  it.effect("opens a span per turn, per model call and per tool call, with GenAI attributes", () =>
    Effect.gen(function*() {
      const { tracer, spans } = recordingTracer()
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "c1", name: "list_files", arguments: { folder: "/logs" } }], {
          usage: { inputTokens: 7, outputTokens: 3 }
        }),
        MockLanguageModel.text("Two files.")
      ])
      const chat = yield* Chat.make({ tools: files }).pipe(
        Effect.provide(Layer.merge(model.layer, fileHandlers(recorder())))
      )
      yield* chat.complete(Messages.fromUser("What is in /logs?")).pipe(Effect.withTracer(tracer))

      expect(spans.map((span) => span.name)).toEqual(["chat-ts.turn", "chat-ts.model", "chat-ts.tool", "chat-ts.model"])
      expect(spans.slice(1).every((span) => span.parent === "chat-ts.turn")).toBe(true)
      const firstModel = spans[1]!.attributes
      expect(firstModel.get("chat_ts.step")).toBe(1)
      expect(firstModel.get("gen_ai.usage.input_tokens")).toBe(7)
      expect(firstModel.get("gen_ai.response.finish_reasons")).toBe("tool-calls")
      expect(spans[2]!.attributes.get("gen_ai.tool.name")).toBe("list_files")
      expect(spans[2]!.attributes.get("gen_ai.tool.call.id")).toBe("c1")
    }))

  it.effect("makes no spans when no tracer is installed: a handler runs in its caller's span", () =>
    Effect.gen(function*() {
      const Probe = Tool.make("probe", { description: "Reports its span.", parameters: {}, success: Schema.String })
      const kit = Toolkit.make(Probe)
      const seen: Array<string> = []
      const handlers = kit.toLayer({
        probe: () =>
          Effect.map(Effect.option(Effect.currentSpan), (span) => {
            const name = Option.isSome(span) ? span.value.name : "(none)"
            seen.push(name)
            return name
          })
      })
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "p1", name: "probe", arguments: {} }]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      yield* chat.complete(Messages.fromUser("Probe.")).pipe(Effect.withSpan("caller"))
      expect(seen).toEqual(["caller"])

      // With a tracer, the same handler runs in the chat's tool span.
      const { tracer, spans } = recordingTracer()
      const traced = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "p2", name: "probe", arguments: {} }]),
        MockLanguageModel.text("Done.")
      ])
      const chat2 = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(traced.layer, handlers)))
      yield* chat2.complete(Messages.fromUser("Probe.")).pipe(Effect.withSpan("caller"), Effect.withTracer(tracer))
      expect(seen).toEqual(["caller", "chat-ts.tool"])
      expect(spans.map((span) => span.name)).toEqual(["caller", "chat-ts.turn", "chat-ts.model", "chat-ts.tool", "chat-ts.model"])
    }))

  it.effect("streamed: a provider's spans are children of the model span, though the consumer pulls the stream", () =>
    Effect.gen(function*() {
      const { tracer, spans } = recordingTracer()
      const part = (p: LanguageModel.StreamPart) => Effect.withSpan(Effect.succeed(p), "provider.read")
      const model = LanguageModel.make({
        stream: () =>
          Stream.concat(
            Stream.fromEffect(part({ _tag: "TextDelta", text: "Hi." })),
            Stream.fromEffect(part({ _tag: "Finish", usage: LanguageModel.noUsage, finishReason: "stop" }))
          )
      })
      const chat = yield* Chat.make().pipe(Effect.provide(LanguageModel.layer(model)))
      yield* Stream.runDrain(chat.stream(Messages.fromUser("Hi."))).pipe(Effect.withSpan("caller"), Effect.withTracer(tracer))
      expect(spans.map((span) => [span.name, span.parent])).toEqual([
        ["caller", undefined],
        ["chat-ts.turn", "caller"],
        ["chat-ts.model", "chat-ts.turn"],
        ["provider.read", "chat-ts.model"],
        ["provider.read", "chat-ts.model"]
      ])
    }))

  it.effect("handlers built with services still get them (the toolkit provides its layer's context)", () =>
    Effect.gen(function*() {
      class Greeting extends Context.Service<Greeting, string>()("Greeting") {}
      const Hello = Tool.make("hello", { description: "Greets.", parameters: {}, success: Schema.String })
      const kit = Toolkit.make(Hello)
      const handlers = kit.toLayer(Effect.map(Greeting, (greeting) => ({ hello: () => Effect.map(Greeting, (g) => `${g}, ${greeting}`) })))
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "h1", name: "hello", arguments: {} }]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* Chat.make({ tools: kit }).pipe(
        Effect.provide(Layer.merge(model.layer, Layer.provide(handlers, Layer.succeed(Greeting, "hi"))))
      )
      const result = yield* chat.complete(Messages.fromUser("Greet."))
      const call = Messages.findTool(result.messages, "h1")
      expect(call?.status).toEqual({ _tag: "Completed", result: "hi, hi" })
    }))
})
