/**
 * Tools: a typed tool, its handler, and a chat that calls it until the model
 * can answer.
 *
 *   npx tsx src/tools.ts
 */
// #region imports
import { Chat, ChatOutcome, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Effect, Schema } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

// #region tool
const GetWeather = Tool.make("get_weather", {
  description: "The current weather in a city.",
  parameters: {
    city: Schema.String,
    unit: Schema.Literals(["celsius", "fahrenheit"])
  },
  success: Schema.Struct({
    city: Schema.String,
    temperature: Schema.Number,
    conditions: Schema.String
  })
})

export const toolkit = Toolkit.make(GetWeather)

// Handlers receive decoded parameters; this one pretends to ask a weather service.
export const handlers = toolkit.toLayer({
  get_weather: ({ city, unit }) =>
    Effect.succeed({ city, temperature: unit === "celsius" ? 17 : 63, conditions: "light rain" })
})
// #endregion tool

// #region program
export const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: toolkit, maxSteps: 5 })
  const result = yield* chat.complete(Messages.fromUser("Do I need an umbrella in Lisbon today?"))
  for (const call of Messages.toolCalls(result.messages)) {
    yield* Console.log(`${call.name}(${call.arguments}) -> ${call.status._tag}`)
  }
  if (ChatOutcome.isComplete(result.outcome)) yield* Console.log(result.outcome.value)
  return result
}).pipe(Effect.provide(handlers))
// #endregion program

/** The offline model: asks for the weather, then answers from the tool's result. */
export const offline: MockLanguageModel.Script = (request) => {
  const call = Messages.toolCalls(request.messages).find((c) => c.name === "get_weather")
  if (call === undefined || call.status._tag !== "Completed") {
    return MockLanguageModel.toolCalls([{ name: "get_weather", arguments: { city: "Lisbon", unit: "celsius" } }])
  }
  const weather = call.status.result as { readonly temperature: number; readonly conditions: string }
  return MockLanguageModel.text(
    `Yes: it is ${weather.temperature}°C with ${weather.conditions} in Lisbon, so take an umbrella.`
  )
}

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Models.languageModel(choice, offline))))
}
