/**
 * What every harness of this package shares: the calls, texts and response
 * format the fixtures hold (the same questions of the conformance suite, in
 * each vendor's own wire format), and the layer on an AI SDK model.
 */
import type { LanguageModel } from "@chat-ts/core"
import type { Conformance } from "@chat-ts/core/testing"
import * as Layer from "effect/Layer"
import * as AiSdkLanguageModel from "../../src/AiSdkLanguageModel.js"

/** The answer's text of the text fixtures. */
export const answer = "The capital of France is Paris."
/** The streamed text, in pieces. */
export const streamedPieces = ["The capital", " of France", " is Paris."] as const

export const weather = { id: "call_weather_1", name: "get_weather", arguments: { city: "Paris" } } as const
export const time = { id: "call_time_2", name: "get_time", arguments: { timezone: "Europe/Paris" } } as const

/** The response format of the structured fixtures. */
export const citiesFormat: LanguageModel.ResponseFormat = {
  type: "json",
  name: "cities",
  schema: {
    type: "object",
    properties: { value: { type: "array", items: { type: "string" } } },
    required: ["value"],
    additionalProperties: false
  },
  strict: true
}
export const cities = { value: ["Paris", "Lyon", "Marseille"] }

/** The layer of the bridge on a model, with the suite's settings. */
export const bridge = (
  model: AiSdkLanguageModel.AnyModel,
  settings: Conformance.ModelSettings,
  secrets: ReadonlyArray<string> = []
): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.orDie(AiSdkLanguageModel.layer({
    model,
    idleTimeout: settings.idleTimeout,
    secrets,
    ...(settings.retry ? {} : { retry: false })
  }))

type Body = { readonly [key: string]: unknown }
/** A recorded request's JSON body. */
export const bodyOf = (request: { readonly body: unknown }): Body => request.body as Body
