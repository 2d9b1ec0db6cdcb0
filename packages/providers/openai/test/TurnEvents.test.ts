/**
 * `chat.events` with the real `openai` SDK against the loopback replay server:
 * the consumer's `next()` reads the SDK's iterator itself (through
 * `ProviderStream.decodeEvents`). The same events as `chat.stream`, a break
 * that closes the HTTP stream, an abort that records the running calls as
 * interrupted, typed errors for a cut stream and an idle one.
 */
import { Action, Chat, ChatError, type ChatEvent, Messages, Tool, Toolkit } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import { clientLayer } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const GetWeatherArgs = Tool.make("GetWeatherArgs", {
  description: "The weather in a city.",
  parameters: { city: Schema.String, country: Schema.String, units: Schema.Literals(["c", "f"]) },
  success: Schema.Struct({ temperature: Schema.Number })
})

const GetStockPrice = Tool.make("get_stock_price", {
  description: "The price of a stock.",
  parameters: { ticker: Schema.String, exchange: Schema.String },
  success: Schema.Number
})

const market = Toolkit.make(GetWeatherArgs, GetStockPrice).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

const handlers = market.toLayer({
  GetWeatherArgs: () => Effect.succeed({ temperature: 12 }),
  get_stock_price: () => Effect.succeed(226.5)
})

const ask = [Messages.user("What's the weather like in Edinburgh?"), Messages.user("What's the price of AAPL?")]

const drain = async (events: AsyncIterable<ChatEvent.ChatEvent>): Promise<Array<ChatEvent.ChatEvent>> => {
  const out: Array<ChatEvent.ChatEvent> = []
  for await (const event of events) out.push(event)
  return out
}

/** The error a loop threw, or `undefined` when it ended. */
const thrown = (loop: Promise<unknown>): Promise<unknown> => loop.then(() => undefined, (error: unknown) => error)

const chatOn = (server: ReplayServer.ReplayServer, options: Partial<OpenAiChatCompletions.Options> = {}) =>
  Chat.make({ tools: market }).pipe(
    Effect.provide(Layer.merge(
      OpenAiChatCompletions.layer({ model: "gpt-4o-2024-08-06", retry: false, ...options }).pipe(Layer.provide(clientLayer(server))),
      handlers
    ))
  )

describe("chat.events on OpenAiChatCompletions (the real SDK over HTTP)", () => {
  it.effect("the same events as chat.stream for the pause and for the resumed turn", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const parallel = ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-tool-calls-parallel.sse"))
      const text = ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse"))
      server.enqueue(parallel, parallel)
      const chat = yield* chatOn(server)
      const streamed = yield* Stream.runCollect(chat.stream(ask))
      const iterated = yield* Effect.promise(() => drain(chat.events(ask)))
      expect(iterated).toEqual(streamed)
      const pause = iterated.at(-1)!
      if (pause._tag !== "Paused") throw new Error(`expected a pause, got ${pause._tag}`)
      expect(iterated.filter((event) => event._tag === "ToolCallDelta").length).toBeGreaterThan(2)

      let decided = pause.messages
      for (const call of Messages.pendingTools(decided)) decided = yield* Effect.fromResult(Messages.approve(decided, call.id))
      server.enqueue(text, text)
      const resumedStream = yield* Stream.runCollect(chat.stream(decided))
      const resumedEvents = yield* Effect.promise(() => drain(chat.events(decided)))
      expect(resumedEvents).toEqual(resumedStream)
      expect(resumedEvents.at(-1)?._tag).toBe("Completed")
      expect(resumedEvents.filter((event) => event._tag === "TextDelta").length).toBeGreaterThan(1)
    }))

  it.effect("leaving the loop mid-stream closes the HTTP stream before the loop ends", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const partial = ReplayServer.firstEvents(ReplayServer.fixture("chat-completions/stream-text.sse"), 4)
      server.enqueue(ReplayServer.hang({ sse: true, body: partial }))
      const chat = yield* chatOn(server)
      const deltas = yield* Effect.promise(async () => {
        const out: Array<string> = []
        for await (const event of chat.events(Messages.fromUser("Hi."))) {
          if (event._tag === "TextDelta") out.push(event.text)
          if (out.length === 2) break
        }
        return out
      })
      expect(deltas).toHaveLength(2)
      yield* server.waitForClientCloses(1, 5_000)
      expect(server.clientCloses()).toBe(1)
    }))

  it.effect("a stream cut before its finish throws the typed NetworkError, after the deltas before it", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.cut(ReplayServer.firstEvents(ReplayServer.fixture("chat-completions/stream-text.sse"), 4)))
      const chat = yield* chatOn(server)
      const seen: Array<string> = []
      const error = yield* Effect.promise(() =>
        thrown((async () => {
          for await (const event of chat.events(Messages.fromUser("Hi."))) seen.push(event._tag)
        })())
      )
      expect(error).toBeInstanceOf(ChatError.NetworkError)
      expect(seen.every((tag) => tag === "TextDelta")).toBe(true)
    }))

  it.effect("a stream that goes idle throws the idleTimeout's NetworkError and closes the HTTP stream", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.hang({ sse: true, body: ReplayServer.firstEvents(ReplayServer.fixture("chat-completions/stream-text.sse"), 2) }))
      // No context given: the turn runs on the real clock, so the idle timeout is a few real milliseconds.
      const chat = yield* chatOn(server, { idleTimeout: "50 millis" })
      const error = yield* Effect.promise(() => thrown(drain(chat.events(Messages.fromUser("Hi.")))))
      expect(error).toBeInstanceOf(ChatError.NetworkError)
      expect((error as ChatError.NetworkError).message).toContain("idleTimeout")
      yield* server.waitForClientCloses(1, 5_000)
    }))

  it.effect("aborting while the response's calls run interrupts them: recorded as interrupted, the loop throws the reason", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-tool-calls-parallel.sse")))
      let started = 0
      const controller = new AbortController()
      const running = Toolkit.make(GetWeatherArgs, GetStockPrice).pipe(Toolkit.withStrategy(() => Action.Execute()))
      const never = () => Effect.andThen(Effect.sync(() => ++started === 2 && controller.abort(new Error("gone"))), Effect.never)
      const chat = yield* Chat.make({ tools: running }).pipe(
        Effect.provide(Layer.merge(
          OpenAiChatCompletions.layer({ model: "gpt-4o-2024-08-06", retry: false }).pipe(Layer.provide(clientLayer(server))),
          running.toLayer({ GetWeatherArgs: never, get_stock_price: never })
        ))
      )
      const saved: Array<Messages.Messages> = []
      const checkpoint = (messages: Messages.Messages) => Effect.sync(() => void saved.push(messages))
      const error = yield* Effect.promise(() => thrown(drain(chat.events(ask, { checkpoint, signal: controller.signal }))))
      expect(error).toMatchObject({ message: "gone" })
      const calls = Messages.toolCalls(saved.at(-1)!)
      expect(calls).toHaveLength(2)
      for (const call of calls) expect(JSON.stringify(call.status)).toContain("interrupted")
    }))
})
