/** The `@example` of `Chat.make` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { Effect, Schema } from "effect"

const GetWeather = Tool.make("get_weather", {
  description: "The temperature in a city, in degrees Celsius.",
  parameters: { city: Schema.String },
  success: Schema.Number
})
const WeatherTools = Toolkit.make(GetWeather)

// Needs a LanguageModel (a provider's layer) and the handlers (`WeatherTools.toLayer`).
const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: WeatherTools, system: "Answer in one sentence." })
  const result = yield* chat.complete(Messages.fromUser("How cold is it in Oslo?"))
  // A turn ends Complete, or Paused on calls waiting for a person or a time (resolve, then `chat.resume`).
  return result.outcome._tag === "Complete" ? result.outcome.value : "paused"
})
// #endregion

export { program, WeatherTools }
