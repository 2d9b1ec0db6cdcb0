/** The `@example` of `Toolkit.make` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Tool, Toolkit } from "@chat-ts/core"
import { Effect, Schema } from "effect"

const GetWeather = Tool.make("get_weather", {
  description: "The temperature in a city, in degrees Celsius.",
  parameters: { city: Schema.String },
  success: Schema.Number
})

// No strategy: every call runs (see `Toolkit.withStrategy`).
const WeatherTools = Toolkit.make(GetWeather)

// The handlers, as the layer `Chat.make` needs.
const WeatherToolsLive = WeatherTools.toLayer({
  get_weather: ({ city }) => Effect.succeed(city === "Oslo" ? 4 : 21)
})
// #endregion

export { WeatherTools, WeatherToolsLive }
