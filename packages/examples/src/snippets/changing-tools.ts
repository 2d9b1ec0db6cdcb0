// Tools that change while the chat lives: `refreshTools` is read at the start of every turn and
// before every model call, so a tool enabled by a call is offered in the very next request.
// #region imports
import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Effect, Layer, Ref, Schema } from "effect"
// #endregion imports

// #region refresh
const EnableWeather = Tool.make("enable_weather", { description: "Turns the weather tools on.", parameters: {}, success: Schema.String })
const GetWeather = Tool.make("get_weather", {
  description: "The current temperature in a city, in °C.",
  parameters: { city: Schema.String },
  success: Schema.Number
})
const basics = Toolkit.make(EnableWeather)
const weather = Toolkit.make(GetWeather)

/** A chat whose tools are whatever `enabled` holds now: `enable_weather` adds the weather toolkit. */
export const pluginChat = Effect.gen(function*() {
  const enabled = yield* Ref.make<Chat.ToolSet>({ tools: [basics] })
  // Handlers of toolkits added later: given with the set (here built once, up front).
  const weatherHandlers = yield* Layer.build(weather.toLayer({ get_weather: () => Effect.succeed(17) }))
  const basicsHandlers = basics.toLayer({
    enable_weather: () => Effect.as(Ref.set(enabled, { tools: [basics, weather], handlers: weatherHandlers }), "enabled")
  })
  return yield* Chat.make({ tools: basics, refreshTools: Ref.get(enabled) }).pipe(Effect.provide(basicsHandlers))
})
// #endregion refresh

/** One turn: the model enables the weather tools, then calls one; the tools each request offered. */
export const enableThenAsk = Effect.gen(function*() {
  const model = MockLanguageModel.make([
    MockLanguageModel.toolCalls([{ name: "enable_weather" }]),
    MockLanguageModel.toolCalls([{ name: "get_weather", arguments: { city: "Lisbon" } }]),
    MockLanguageModel.text("17°C in Lisbon.")
  ])
  const chat = yield* pluginChat.pipe(Effect.provide(model.layer))
  const result = yield* chat.complete(Messages.fromUser("Weather in Lisbon?"))
  return {
    offered: model.requests.map((request) => request.tools.map((tool) => tool.name)),
    statuses: Messages.toolCalls(result.messages).map((call) => call.status)
  }
}).pipe(Effect.scoped)
