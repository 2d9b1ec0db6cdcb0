/**
 * `ChatEvent.ToolCallDelta`: a call's arguments as the model streams them,
 * before the call's `ToolCall` event, under the id the call gets in the messages.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import fc from "fast-check"
import { Chat, ChatEvent, LanguageModel, Messages } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { checkProperty, fileHandlers, files, recorder } from "./support/Chat.helpers.js"

type Part = LanguageModel.StreamPart

const finish: Part = { _tag: "Finish", usage: LanguageModel.noUsage, finishReason: "tool-calls" }
const start = (id: string, name: string): Part => ({ _tag: "ToolCallStart", id, name })
const delta = (id: string, argumentsDelta: string): Part => ({ _tag: "ToolCallDelta", id, argumentsDelta })

/** A model streaming `first`, then answering "done" to every later call. */
const streaming = (first: ReadonlyArray<Part>) => {
  let calls = 0
  return LanguageModel.layer(LanguageModel.make({
    stream: () => {
      calls++
      return Stream.fromIterable(
        calls === 1
          ? first
          : [{ _tag: "TextDelta", text: "done" }, { _tag: "Finish", usage: LanguageModel.noUsage, finishReason: "stop" }]
      )
    }
  }))
}

/** Streams one turn of a chat serving `files` (reads run, writes pause) and collects its events. */
const streamTurn = (model: Layer.Layer<LanguageModel.LanguageModel>, messages = Messages.fromUser("Go.")) =>
  Effect.gen(function*() {
    const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model, fileHandlers(recorder()))))
    const events: ReadonlyArray<ChatEvent.ChatEvent> = yield* Stream.runCollect(chat.stream(messages))
    return events
  })

type Delta = Extract<ChatEvent.ChatEvent, { readonly _tag: "ToolCallDelta" }>
const deltasOf = (events: ReadonlyArray<ChatEvent.ChatEvent>): ReadonlyArray<Delta> =>
  events.filter((event): event is Delta => event._tag === "ToolCallDelta")

/** The calls of the first response in the turn's final messages. */
const finalCalls = (events: ReadonlyArray<ChatEvent.ChatEvent>): ReadonlyArray<Messages.ToolCallPart> => {
  const last = events[events.length - 1]!
  if (last._tag !== "Paused" && last._tag !== "Completed") throw new Error(`the stream ended with ${last._tag}`)
  const response = last.messages.find((message) => message.role === "assistant" && Messages.toolCallsOf(message).length > 0)
  return response === undefined ? [] : Messages.toolCallsOf(response)
}

/** Each call's deltas, in order, joined: they must be the call's arguments, under its name. */
const expectDeltasMatch = (events: ReadonlyArray<ChatEvent.ChatEvent>, calls: ReadonlyArray<Messages.ToolCallPart>) => {
  const deltas = deltasOf(events)
  for (const call of calls) {
    const own = deltas.filter((d) => d.id === call.id)
    expect(own.length, `deltas of ${call.id}`).toBeGreaterThan(0)
    expect(own.map((d) => d.name)).toEqual(own.map(() => call.name))
    expect(own.map((d) => d.argumentsDelta).join("")).toBe(call.arguments)
  }
  expect(new Set(deltas.map((d) => d.id))).toEqual(new Set(calls.map((call) => call.id)))
}

describe("Chat.stream: ToolCallDelta", () => {
  it.effect("every delta of a call comes before its ToolCall event, and they join into its final arguments", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "c1", name: "list_files", arguments: { folder: "logs/2024" } },
          { id: "c2", name: "delete_files", arguments: { paths: ["a.log", "b.log"] } }
        ])
      ])
      const events = yield* streamTurn(model.layer)
      const calls = finalCalls(events)
      expect(calls.map((call) => call.id)).toEqual(["c1", "c2"])
      expectDeltasMatch(events, calls)
      for (const call of calls) {
        const lastDelta = events.map((event) => event._tag === "ToolCallDelta" && event.id === call.id).lastIndexOf(true)
        const toolCall = events.findIndex((event) => event._tag === "ToolCall" && event.call.id === call.id)
        expect(lastDelta).toBeLessThan(toolCall)
      }
      // The first delta announces the call by name before any of its arguments.
      expect(deltasOf(events)[0]).toEqual(ChatEvent.ChatEvent.ToolCallDelta({ id: "c1", name: "list_files", argumentsDelta: "" }))
      expect(deltasOf(events).filter((d) => d.argumentsDelta === "").map((d) => d.id)).toEqual(["c1", "c2"])
    }))

  it.effect("parallel calls whose fragments interleave are told apart by id", () =>
    Effect.gen(function*() {
      const events = yield* streamTurn(streaming([
        start("a", "read_file"),
        start("b", "list_files"),
        delta("b", "{\"folder\":"),
        delta("a", "{\"path\":\"x"),
        delta("b", "\"logs\"}"),
        delta("a", ".txt\"}"),
        finish
      ]))
      const calls = finalCalls(events)
      expect(calls.map((call) => [call.id, call.arguments])).toEqual([
        ["a", "{\"path\":\"x.txt\"}"],
        ["b", "{\"folder\":\"logs\"}"]
      ])
      expectDeltasMatch(events, calls)
      expect(deltasOf(events).map((d) => `${d.id}:${d.argumentsDelta}`)).toEqual([
        "a:",
        "b:",
        "b:{\"folder\":",
        "a:{\"path\":\"x",
        "b:\"logs\"}",
        "a:.txt\"}"
      ])
    }))

  it.effect("a call that comes whole (no deltas) has no ToolCallDelta, only its ToolCall", () =>
    Effect.gen(function*() {
      const whole = Messages.toolCall({ id: "w", name: "list_files", arguments: "{\"folder\":\"logs\"}" })
      const events = yield* streamTurn(streaming([{ _tag: "Part", part: whole }, start("s", "list_files"), delta("s", "{\"folder\":\"tmp\"}"), finish]))
      expect(deltasOf(events).map((d) => d.id)).toEqual(["s", "s"])
      expect(events.filter((event) => event._tag === "ToolCall").map((event) => event._tag === "ToolCall" && event.call.id)).toEqual(["w", "s"])
    }))

  it.effect("a call started with no argument deltas is announced once, with empty arguments", () =>
    Effect.gen(function*() {
      const events = yield* streamTurn(streaming([start("e", "list_files"), delta("e", ""), finish]))
      expect(deltasOf(events)).toEqual([ChatEvent.ChatEvent.ToolCallDelta({ id: "e", name: "list_files", argumentsDelta: "" })])
      expect(finalCalls(events).map((call) => call.arguments)).toEqual([""])
    }))

  it.effect("fragments that come before their call's start are held and announced with its name", () =>
    Effect.gen(function*() {
      const events = yield* streamTurn(streaming([delta("late", "{\"folder\""), delta("late", ":\"x\"}"), start("late", "list_files"), finish]))
      expect(deltasOf(events)).toEqual([
        ChatEvent.ChatEvent.ToolCallDelta({ id: "late", name: "list_files", argumentsDelta: "{\"folder\":\"x\"}" })
      ])
      expectDeltasMatch(events, finalCalls(events))
    }))

  it.effect("a provider id already used in the conversation: the deltas carry the id the call gets in the messages", () =>
    Effect.gen(function*() {
      // The conversation already holds a call "c1"; the provider reuses "c1", twice, and sends one call with no id.
      const history = Messages.fromUser("Go.")
      const first = yield* streamTurn(streaming([start("c1", "list_files"), delta("c1", "{\"folder\":\"a\"}"), finish]), history)
      const last = first[first.length - 1]!
      if (last._tag !== "Completed") throw new Error("expected a completion")
      const next = [...last.messages, ...Messages.fromUser("Again.")]
      const events = yield* streamTurn(streaming([
        start("c1", "list_files"),
        delta("c1", "{\"folder\":\"b\"}"),
        start("c1", "list_files"),
        delta("c1", "{\"folder\":\"c\"}"),
        start("", "list_files"),
        delta("", "{\"folder\":\"d\"}"),
        finish
      ]), next)
      const done = events[events.length - 1]!
      if (done._tag !== "Completed") throw new Error("expected a completion")
      const calls = Messages.toolCallsOf(done.messages[next.length]!)
      expect(calls.map((call) => call.id)).toEqual(["c1_2", "c1_3", "call_4"])
      expectDeltasMatch(events, calls)
      expect(events.filter((event) => event._tag === "ToolCall").map((event) => event._tag === "ToolCall" && event.call.id))
        .toEqual(["c1_2", "c1_3", "call_4"])
    }))
})

/** A streamed call: a provider id from a small pool (so ids repeat), a tool, its arguments and how they are cut. */
const arbCall = fc.record({
  id: fc.constantFrom("", "a", "b", "a_2", "call_1"),
  name: fc.constantFrom("list_files", "read_file", "nope"),
  args: fc.string({ maxLength: 24 }),
  cuts: fc.array(fc.nat({ max: 24 }), { maxLength: 4 }),
  whole: fc.boolean(),
  /** The fragments come before the start (they then belong to an earlier call with that id, if one is open). */
  lateStart: fc.boolean()
})

const partsOf = (call: typeof arbCall extends fc.Arbitrary<infer A> ? A : never): ReadonlyArray<Part> => {
  if (call.whole) return [{ _tag: "Part", part: Messages.toolCall({ id: call.id, name: call.name, arguments: call.args }) }]
  const points = [...new Set(call.cuts.map((cut) => Math.min(cut, call.args.length)))].sort((x, y) => x - y)
  const pieces = [0, ...points].map((from, i, all) => call.args.slice(from, all[i + 1] ?? call.args.length))
  const fragments = pieces.map((piece) => delta(call.id, piece))
  return call.lateStart ? [...fragments, start(call.id, call.name)] : [start(call.id, call.name), ...fragments]
}

describe("Chat.stream: ToolCallDelta (property)", () => {
  const arbitraries = fc.tuple(fc.array(arbCall, { minLength: 1, maxLength: 5 }), fc.constantFrom([], ["a"], ["a", "call_1"]))

  it.effect(
    "for any calls (ids repeated, missing or already used, whole or in fragments, fragments before the start), each call's deltas carry its id and name in the messages and join into its arguments",
    () =>
      checkProperty(arbitraries, ([calls, usedIds]) =>
        Effect.gen(function*() {
          const history: Messages.Messages = usedIds.length === 0 ? Messages.fromUser("Go.") : [
            ...Messages.fromUser("Before."),
            {
              role: "assistant",
              parts: usedIds.map((id) => ({
                ...Messages.toolCall({ id, name: "gone", arguments: "{}" }),
                status: { _tag: "Failed" as const, error: "old" }
              }))
            },
            ...Messages.fromUser("Go.")
          ]
          const events = yield* streamTurn(streaming([...calls.flatMap(partsOf), finish]), history)
          const response = yield* Effect.fromNullishOr(
            (events[events.length - 1] as { readonly messages?: Messages.Messages }).messages?.[history.length]
          )
          const final = Messages.toolCallsOf(response)
          expect(new Set(final.map((call) => call.id)).size).toBe(final.length)
          expectDeltasMatch(events, final.filter((_, i) => !calls[i]!.whole))
          const toolCallEvents = events.filter((event) => event._tag === "ToolCall").map((event) => event._tag === "ToolCall" && event.call.id)
          expect(toolCallEvents).toEqual(final.map((call) => call.id))
        }), { numRuns: 25 })
  )
})
