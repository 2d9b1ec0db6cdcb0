/**
 * End to end: the core `Chat` runs the human-in-the-loop flow on each OpenAI
 * layer against the replay server (recorded responses, the real SDK). The
 * model proposes two calls, the turn pauses, a person approves one with
 * edited arguments and rejects the other with a reason, the turn resumes and
 * completes; the requests the server received are checked.
 */
import { Action, Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import * as OpenAiResponses from "../src/OpenAiResponses.js"
import { clientLayer } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const rejection = (reason: string) =>
  JSON.stringify({ error: `The user rejected this tool call; it did not run. Reason: ${reason}` })

const paused = <A extends { readonly outcome: { readonly _tag: string } }>(result: A): A => {
  expect(result.outcome._tag).toBe("Paused")
  return result
}

// ---------------------------------------------------------------------------
// Chat Completions: the recorded `tool-calls-parallel` response, then `text`
// ---------------------------------------------------------------------------

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

/** Every call waits for a person. */
const market = Toolkit.make(GetWeatherArgs, GetStockPrice).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

const marketHandlers = (ran: Array<unknown>) =>
  market.toLayer({
    GetWeatherArgs: (params) => Effect.sync(() => (ran.push(params), { temperature: 12 })),
    get_stock_price: (params) => Effect.sync(() => (ran.push(params), 226.5))
  })

const weatherId = "call_fdNz3vOBKYgOIpMdWotB9MjY"
const stockId = "call_h1DWI1POMJLb0KwIyQHWXD4p"

describe("Chat end to end: OpenAiChatCompletions", () => {
  const run = (mode: "complete" | "stream") =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      if (mode === "complete") {
        server.enqueue(
          ReplayServer.json(ReplayServer.fixture("chat-completions/tool-calls-parallel.json")),
          ReplayServer.json(ReplayServer.fixture("chat-completions/text.json"))
        )
      } else {
        server.enqueue(
          ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-tool-calls-parallel.sse")),
          ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse"))
        )
      }
      const ran: Array<unknown> = []
      const layer = Layer.merge(
        OpenAiChatCompletions.layer({ model: "gpt-4o-2024-08-06", retry: false }).pipe(Layer.provide(clientLayer(server))),
        marketHandlers(ran)
      )
      const chat = yield* Chat.make({ tools: market, system: "Answer briefly." }).pipe(Effect.provide(layer))
      const ask = [
        Messages.user("What's the weather like in Edinburgh?"),
        Messages.user("What's the price of AAPL?")
      ]
      const turn = (messages: Messages.Messages) => (mode === "complete" ? chat.complete(messages) : streamed(chat, messages))
      const resume = (messages: Messages.Messages) => (mode === "complete" ? chat.resume(messages) : streamed(chat, messages))

      const first = paused(yield* turn(ask))
      expect(first.outcome).toMatchObject({ reason: { _tag: "AwaitingApproval" } })
      expect(server.requests).toHaveLength(1)
      expect(ran).toHaveLength(0)
      const calls = Messages.pendingTools(first.messages)
      expect(calls.map((call) => call.name)).toEqual(["GetWeatherArgs", "get_stock_price"])
      const [weather, stock] = calls

      const approved = yield* Effect.fromResult(Messages.approve(first.messages, weather!.id, { city: "Glasgow", country: "GB", units: "c" }))
      const decided = yield* Effect.fromResult(Messages.reject(approved, stock!.id, "Markets are closed"))
      const second = yield* resume(decided)
      expect(second.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ city: "Glasgow", country: "GB", units: "c" }])
      expect(server.requests).toHaveLength(2)

      const firstBody = server.requests[0]!.body as Record<string, unknown>
      expect(firstBody["messages"]).toEqual([
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "What's the weather like in Edinburgh?" },
        { role: "user", content: "What's the price of AAPL?" }
      ])
      expect(firstBody["tools"]).toEqual(
        chat.tools.map((d) => ({
          type: "function",
          function: { name: d.name, description: d.description, parameters: d.parameters, strict: true }
        }))
      )
      expect(chat.tools.every((d) => d.strict)).toBe(true)

      const secondBody = server.requests[1]!.body as { messages: ReadonlyArray<Record<string, unknown>> }
      const tail = secondBody.messages.slice(3)
      expect(tail[0]).toMatchObject({
        role: "assistant",
        tool_calls: [
          { id: weather!.id, type: "function", function: { name: "GetWeatherArgs", arguments: "{\"city\":\"Glasgow\",\"country\":\"GB\",\"units\":\"c\"}" } },
          { id: stock!.id, type: "function", function: { name: "get_stock_price", arguments: stock!.arguments } }
        ]
      })
      expect(tail.slice(1)).toEqual([
        { role: "tool", tool_call_id: weather!.id, content: "{\"temperature\":12}" },
        { role: "tool", tool_call_id: stock!.id, content: rejection("Markets are closed") }
      ])
      return { weather: weather!, stock: stock! }
    })

  it.effect("complete → pause on two calls → approve one edited, reject the other → resume → complete", () =>
    Effect.gen(function*() {
      const { stock, weather } = yield* run("complete")
      expect(weather.id).toBe(weatherId)
      expect(stock.id).toBe(stockId)
    }))

  it.effect("the same flow streamed (chat.stream over the SSE recordings)", () =>
    Effect.gen(function*() {
      const { weather } = yield* run("stream")
      expect(weather.name).toBe("GetWeatherArgs")
    }))
})

/** Runs a streamed turn (the model streams) and returns its messages and how it ended, from the last event. */
const streamed = (chat: Chat.Service, messages: Messages.Messages) =>
  Effect.gen(function*() {
    const events = yield* Stream.runCollect(chat.stream(messages))
    const list = Array.from(events)
    const last = list[list.length - 1]
    if (last === undefined) throw new Error("no events")
    if (last._tag === "Paused") {
      return { messages: last.messages, outcome: { _tag: "Paused" as const, reason: last.reason } }
    }
    if (last._tag === "Completed") return { messages: last.messages, outcome: { _tag: "Complete" as const } }
    throw new Error(`unexpected last event ${last._tag}`)
  })

// ---------------------------------------------------------------------------
// Responses: the recorded `function-calls-parallel` response, then `text`
// ---------------------------------------------------------------------------

const GetLocation = Tool.make("get_location", {
  description: "Where a place is.",
  parameters: { loc_name: Schema.String },
  success: Schema.Struct({ lat: Schema.Number, lng: Schema.Number })
})

const places = Toolkit.make(GetLocation).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

const placesHandlers = (ran: Array<unknown>) =>
  places.toLayer({ get_location: (params) => Effect.sync(() => (ran.push(params), { lat: 51.5, lng: -0.12 })) })

const londosId = "call_LWVp74L5HaH2KNvgVz9PJsrj"
const londonId = "call_YnRAWeTyxI91m5uNa5bxXwVO"

describe("Chat end to end: OpenAiResponses", () => {
  const flow = (options: Partial<OpenAiResponses.Options>) =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("responses/function-calls-parallel.json")),
        ReplayServer.json(ReplayServer.fixture("responses/text.json"))
      )
      const ran: Array<unknown> = []
      const layer = Layer.merge(
        OpenAiResponses.layer({ model: "gpt-4o", retry: false, ...options }).pipe(Layer.provide(clientLayer(server))),
        placesHandlers(ran)
      )
      const chat = yield* Chat.make({ tools: places, system: "Use the tools." }).pipe(Effect.provide(layer))
      const first = paused(yield* chat.complete(Messages.fromUser("What is the location of Londos and London?")))
      expect(first.outcome).toMatchObject({ reason: { _tag: "AwaitingApproval", toolIds: [londosId, londonId] } })
      expect(Messages.lastResponse(first.messages)?.providerMetadata).toMatchObject({
        openai: { responseId: "resp_67e547c48c9481918c5c4394464ce0c60ae6111e84dd5c08" }
      })

      const approved = yield* Effect.fromResult(Messages.approve(first.messages, londosId, { loc_name: "London" }))
      const decided = yield* Effect.fromResult(Messages.reject(approved, londonId, "Only one lookup, please"))
      const second = yield* chat.resume(decided)
      expect(second.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ loc_name: "London" }])
      expect(server.requests).toHaveLength(2)

      const firstBody = server.requests[0]!.body as Record<string, unknown>
      expect(firstBody["instructions"]).toBe("Use the tools.")
      expect(firstBody["input"]).toEqual([{ role: "user", content: "What is the location of Londos and London?" }])
      expect(firstBody["tools"]).toEqual([{
        type: "function",
        name: "get_location",
        description: "Where a place is.",
        parameters: chat.tools[0]!.parameters,
        strict: true
      }])
      return server.requests[1]!.body as Record<string, unknown>
    })

  const outputs = [
    { type: "function_call_output", call_id: londosId, output: "{\"lat\":51.5,\"lng\":-0.12}" },
    { type: "function_call_output", call_id: londonId, output: rejection("Only one lookup, please") }
  ]

  it.effect("stateless (store: false): the whole history with the edited call and both outputs", () =>
    Effect.gen(function*() {
      const body = yield* flow({})
      expect(body["store"]).toBe(false)
      expect(body["previous_response_id"]).toBeUndefined()
      expect(body["input"]).toEqual([
        { role: "user", content: "What is the location of Londos and London?" },
        { type: "function_call", call_id: londosId, name: "get_location", arguments: "{\"loc_name\":\"London\"}" },
        { type: "function_call", call_id: londonId, name: "get_location", arguments: "{\"loc_name\":\"London\"}" },
        ...outputs
      ])
    }))

  it.effect("chained (previous_response_id): only the outputs after the stored response", () =>
    Effect.gen(function*() {
      const body = yield* flow({ previousResponseId: true })
      expect(body["store"]).toBe(true)
      expect(body["previous_response_id"]).toBe("resp_67e547c48c9481918c5c4394464ce0c60ae6111e84dd5c08")
      expect(body["input"]).toEqual(outputs)
    }))
})
