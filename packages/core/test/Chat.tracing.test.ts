import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Tracer } from "effect"
import { Chat, Messages } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { fileHandlers, files, recorder } from "./Chat.helpers.js"

/** A tracer that records the spans it was asked to start, with their attributes when they end. */
const recordingTracer = () => {
  const spans: Array<{ name: string; parent: string | undefined; attributes: Map<string, unknown> }> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
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
        context,
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
    },
    context: (f) => f()
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
})
