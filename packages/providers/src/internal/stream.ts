/**
 * The scaffolding every streaming layer shares: open the stream (retried only
 * while it opens), decode its events with a fresh decoder per stream, and let
 * the decoder say what the end of the stream means (the finish, or an error
 * when it broke off).
 *
 * @internal
 */
import type { ChatError, LanguageModel } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Retry from "../Retry.js"
import { withRetry } from "./retry.js"

/** What a decoder must say once the events are over. */
export interface Ending {
  readonly end: () => Either.Either<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError>
}

/** Opens `open`, then maps its events to stream parts with `decode` and a decoder made per stream. */
export const decodeStream = <Event, Decoder extends Ending>(
  open: Effect.Effect<Stream.Stream<Event, ChatError.ModelError>, ChatError.ModelError, Scope.Scope>,
  policy: Retry.Policy | undefined,
  makeDecoder: () => Decoder,
  decode: (
    events: Stream.Stream<Event, ChatError.ModelError>,
    decoder: Decoder
  ) => Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError>
): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> =>
  Stream.unwrapScoped(
    Effect.map(withRetry(open, policy), (events) =>
      Stream.suspend(() => {
        const decoder = makeDecoder()
        return decode(events, decoder).pipe(
          Stream.concat(Stream.fromIterableEffect(Effect.suspend(() => decoder.end())))
        )
      }))
  )
