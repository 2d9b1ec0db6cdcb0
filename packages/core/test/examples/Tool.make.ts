/** The `@example` of `Tool.make` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Tool } from "@chat-ts/core"
import { Schema } from "effect"

const GetWeather = Tool.make("get_weather", {
  description: "The temperature in a city, in degrees Celsius.",
  parameters: { city: Schema.String }, // the fields of a Struct, or any Schema
  success: Schema.Number // defaults to Schema.Void
})
// #endregion

export { GetWeather }
