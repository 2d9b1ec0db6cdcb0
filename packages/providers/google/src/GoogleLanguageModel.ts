/**
 * The core `LanguageModel` on Gemini's generateContent
 * (POST models/{model}:generateContent and :streamGenerateContent).
 *
 * Tool calls travel as `functionCall` parts of the model's content, their
 * results as `functionResponse` parts of the next user content, through the
 * shared projection `Messages.projectToolCall`: edited arguments replace the
 * model's, a failed or rejected call answers `{ error }` with the reason, a
 * completed one `{ output }`. Thought signatures are kept and sent back
 * unchanged. A response cut by a safety filter ends with finish reason
 * `content-filter`; a prompt Gemini refuses to answer at all fails with
 * `ChatError.InvalidRequest` (its `code` is the block reason).
 *
 * @since 0.1.0
 */
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { GoogleClient } from "./GoogleClient.js"
import * as Defaults from "./GoogleDefaults.js"
import type { Options } from "./internal/options.js"
import * as Wire from "./internal/wire.js"

/** How the model may call functions (Gemini's `functionCallingConfig`). */
export type { FunctionCalling } from "./internal/options.js"

/** Gemini's thinking settings. */
export type { Thinking } from "./internal/options.js"

/** Settings of the model; a request's own options take precedence over these. */
export type { Options } from "./internal/options.js"

/** Builds the model on the `GoogleClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, GoogleClient> =>
  GoogleClient.useSync((client) =>
    ProviderStream.languageModel({
      toBody: (request) => Wire.toParams(request, options),
      call: (params) => client.generateContent(params),
      decode: (response) => Wire.fromResponse(response, client.redact),
      open: (params) => client.streamGenerateContent(params),
      decoder: () => new Wire.StreamState(client.redact),
      options,
      defaults: Defaults
    })
  )

/** A layer providing `LanguageModel.LanguageModel` on Gemini; requires `GoogleClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, GoogleClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
