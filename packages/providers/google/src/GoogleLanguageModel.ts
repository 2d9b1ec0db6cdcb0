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
import type { ChatError } from "@chat-ts/core"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as ProviderRetry from "@chat-ts/core/ProviderRetry"
import * as ProviderStream from "@chat-ts/core/ProviderStream"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { GoogleClient } from "./GoogleClient.js"
import type { Options } from "./internal/options.js"
import * as Timeouts from "./internal/timeouts.js"
import * as Wire from "./internal/wire.js"

/** How the model may call functions (Gemini's `functionCallingConfig`). */
export type { FunctionCalling } from "./internal/options.js"

/** Gemini's thinking settings. */
export type { Thinking } from "./internal/options.js"

/** Settings of the model; a request's own options take precedence over these. */
export type { Options } from "./internal/options.js"

/** Builds the model on the `GoogleClient` in context. */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, GoogleClient> =>
  GoogleClient.useSync((client) => {
    const generate = (request: LanguageModel.Request): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
      Effect.flatMap(Effect.fromResult(Wire.toParams(request, options)), (params) =>
        ProviderRetry.withRetry(client.generateContent(params), options.retry).pipe(
          (attempts) => ProviderStream.withTotalTimeout(attempts, Timeouts.call(options)),
          Effect.flatMap((response) => Effect.fromResult(Wire.fromResponse(response, client.redact)))
        ))

    // The stream of `decodeEvents` itself (no `Stream.unwrap`), so that `chat.events` reads the SDK's iterator.
    const stream = (request: LanguageModel.Request): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
      const params = Wire.toParams(request, options)
      if (Result.isFailure(params)) return Stream.fail(params.failure)
      return ProviderStream.decodeEvents(
        client.streamGenerateContent(params.success),
        options.retry,
        () => new Wire.StreamState(client.redact),
        Timeouts.stream(options)
      )
    }

    return LanguageModel.make({ generate, stream })
  })

/** A layer providing `LanguageModel.LanguageModel` on Gemini; requires `GoogleClient`. */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, GoogleClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))
