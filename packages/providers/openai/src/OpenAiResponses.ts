/**
 * The core `LanguageModel` on OpenAI's Responses API (POST /responses).
 *
 * Stateless by default: the whole conversation is sent with `store: false`,
 * and a reasoning model's reasoning comes back encrypted
 * (`include: ["reasoning.encrypted_content"]`) so it can be sent back on the
 * next call; a Reasoning part keeps the
 * encrypted content as its `signature` and the item id in its
 * `providerMetadata`. With `previousResponseId: true` responses are stored and
 * chained: only what follows the last response is sent, and the response id
 * lives in the assistant message's `providerMetadata.openai.responseId`.
 *
 * Tool calls are `function_call` items and their results `function_call_output`
 * items, both through the shared projection `Messages.projectToolCall`.
 *
 * @since 0.1.0
 */
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Internal from "./internal/responses.js"
import type { Options } from "./internal/responsesOptions.js"
import { OpenAiClient } from "./OpenAiClient.js"
import * as Defaults from "./OpenAiDefaults.js"

/** Settings of the model; a request's own options take precedence over these. */
export type { Options } from "./internal/responsesOptions.js"

/** Builds the model on the `OpenAiClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, OpenAiClient> =>
  OpenAiClient.useSync((client) =>
    ProviderStream.languageModel({
      toBody: (request) => Internal.toBody(request, options),
      call: (body) => client.createResponse({ ...body, stream: false }),
      decode: (response) => Internal.fromResponse(response, client.redact),
      open: (body) => client.streamResponse({ ...body, stream: true }),
      decoder: () => new Internal.StreamState(client.redact),
      options,
      defaults: Defaults
    })
  )

/** A layer providing `LanguageModel.LanguageModel` on the Responses API; requires `OpenAiClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, OpenAiClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
