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
import type { ChatError } from "@chat-ts/core"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderRetry from "@chat-ts/core/ProviderRetry"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Internal from "./internal/responses.js"
import type { Options } from "./internal/responsesOptions.js"
import * as Timeouts from "./internal/timeouts.js"
import { OpenAiClient } from "./OpenAiClient.js"

/** Settings of the model; a request's own options take precedence over these. */
export type { Options } from "./internal/responsesOptions.js"

/** Builds the model on the `OpenAiClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, OpenAiClient> =>
  OpenAiClient.useSync((client) => {
    const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
      Effect.flatMap(Effect.fromResult(Internal.toBody(request, options)), (body) =>
        ProviderRetry.withRetry(client.createResponse({ ...body, stream: false }), options.retry).pipe(
          (attempts) => ProviderStream.withTotalTimeout(attempts, Timeouts.call(options)),
          Effect.flatMap((response) => Effect.fromResult(Internal.fromResponse(response, client.redact)))
        ))

    // The stream of `decodeEvents` itself (no `Stream.unwrap`), so that `chat.events` reads the SDK's iterator.
    const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
      const body = Internal.toBody(request, options)
      if (Result.isFailure(body)) return Stream.fail(body.failure)
      return ProviderStream.decodeEvents(
        client.streamResponse({ ...body.success, stream: true }),
        options.retry,
        () => new Internal.StreamState(client.redact),
        Timeouts.stream(options)
      )
    }

    return LanguageModel.make({ generate, stream })
  })

/** A layer providing `LanguageModel.LanguageModel` on the Responses API; requires `OpenAiClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, OpenAiClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
