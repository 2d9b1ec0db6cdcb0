// Tools: a handler that uses a service of the program and fails with a typed error.
// #region imports
import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Context, Effect, Layer, Schema } from "effect"
// #endregion imports

// #region services
class CityNotFound extends Schema.TaggedError<CityNotFound>()("CityNotFound", { city: Schema.String }) {}

/** A service of your program; the handler gets it from the layer's context. */
class WeatherApi extends Context.Service<WeatherApi, {
  readonly current: (city: string) => Effect.Effect<{ readonly temperature: number }, CityNotFound>
}>()("WeatherApi") {}

const GetWeather = Tool.make("get_weather", {
  description: "The current temperature in a city, in °C.",
  parameters: { city: Schema.String },
  success: Schema.Struct({ temperature: Schema.Number }),
  // What the model sees when the call fails.
  failure: Schema.Struct({ error: Schema.String })
})

const toolkit = Toolkit.make(GetWeather)

// A layer that needs WeatherApi: provide it like any other service.
const handlers = toolkit.toLayer(
  Effect.gen(function*() {
    const api = yield* WeatherApi
    return {
      get_weather: ({ city }) =>
        api.current(city).pipe(Effect.mapError((e) => ({ error: `I know no city called ${e.city}.` })))
    }
  })
)
// #endregion services

/** A fake weather service for the snippet's test. */
export const fakeWeather = Layer.succeed(WeatherApi, {
  current: (city) => (city === "Lisbon" ? Effect.succeed({ temperature: 17 }) : Effect.fail(new CityNotFound({ city })))
})

/** Asks about two cities, one unknown; returns the statuses of both calls. */
export const askTwoCities = Effect.gen(function*() {
  const model = MockLanguageModel.make([
    MockLanguageModel.toolCalls([
      { name: "get_weather", arguments: { city: "Lisbon" } },
      { name: "get_weather", arguments: { city: "Atlantis" } }
    ]),
    MockLanguageModel.text("17°C in Lisbon; Atlantis is not a city I know.")
  ])
  const chat = yield* Chat.make({ tools: toolkit }).pipe(
    Effect.provide(Layer.merge(model.layer, handlers.pipe(Layer.provide(fakeWeather))))
  )
  const result = yield* chat.complete(Messages.fromUser("Weather in Lisbon and Atlantis?"))
  return Messages.toolCalls(result.messages).map((call) => call.status)
})
