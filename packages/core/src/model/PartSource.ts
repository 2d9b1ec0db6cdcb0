/**
 * A model response's parts read outside Effect: a `PartSource` is read with
 * plain callbacks, one read at a time, nothing read ahead of its reader. A
 * provider stream built by `ProviderStream.decodeEvents` carries the way to
 * open one straight on the SDK's iterator (no fiber, no `Stream` stage per
 * event); `sourceOf` opens one for any stream (through the stream's pull).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pull from "effect/Pull"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as ChatError from "../data/ChatError.js"
import type * as LanguageModel from "./LanguageModel.js"

/** The parts of one read: never empty. */
export type Parts = readonly [LanguageModel.StreamPart, ...Array<LanguageModel.StreamPart>]

/** What one read ends with: parts, the end of the stream, or its typed failure. */
export interface Reader {
  readonly onParts: (parts: Parts) => void
  readonly onEnd: () => void
  /** The stream failed: with a typed error, or (a stream not made by a provider) a defect or an interruption. */
  readonly onFailure: (cause: Cause.Cause<ChatError.ModelError>) => void
}

/** A model response's parts, read one at a time: call `read` again only after the last read answered. */
export interface PartSource {
  readonly read: (reader: Reader) => void
}

const opener: unique symbol = Symbol.for("@chat-ts/core/PartSource/opener")

/** A stream that knows how to open its parts as a `PartSource` (see `ProviderStream.decodeEvents`). */
interface WithSource extends Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> {
  readonly [opener]: Effect.Effect<PartSource, ChatError.ModelError, Scope.Scope>
}

/** The stream of a source, one pull per read: what the provider's `stream` returns. */
export const toStream = (
  open: Effect.Effect<PartSource, ChatError.ModelError, Scope.Scope>
): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> => {
  const stream = Stream.unwrap(Effect.map(open, (source) => {
    let resume: (effect: Effect.Effect<Parts, ChatError.ModelError | Cause.Done>) => void = () => {}
    const reader: Reader = {
      onParts: (parts) => resume(Effect.succeed(parts)),
      onEnd: () => resume(Cause.done()),
      onFailure: (cause) => resume(Effect.failCause(cause))
    }
    const pull = Effect.callback<Parts, ChatError.ModelError | Cause.Done>((r) => {
      resume = r
      source.read(reader)
    })
    return Stream.fromPull(Effect.succeed(pull))
  }))
  return Object.assign(stream, { [opener]: open })
}

/** Whether `stream` opens its parts as a source without a stream stage (see `ProviderStream.decodeEvents`). */
export const hasOpener = (stream: Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError>): stream is WithSource =>
  Effect.isEffect((stream as Partial<WithSource>)[opener])

/**
 * Opens the parts of `stream` as a source, in the scope: straight on the
 * SDK's iterator for a stream of `ProviderStream.decodeEvents`, else through
 * the stream's own pull (each read running it with the caller's services).
 */
export const sourceOf = (
  stream: Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError>
): Effect.Effect<PartSource, ChatError.ModelError, Scope.Scope> =>
  hasOpener(stream)
    ? stream[opener]
    : Effect.flatMap(Effect.all([Stream.toPull(stream), Effect.context<never>()]), ([pull, context]) =>
      Effect.sync((): PartSource => {
        const run = Effect.runCallbackWith(context)
        return {
          read: (reader) =>
            void run(pull, {
              onExit: (exit) => {
                if (Exit.isSuccess(exit)) return reader.onParts(exit.value as Parts)
                if (Pull.isDoneCause(exit.cause)) return reader.onEnd()
                reader.onFailure(exit.cause as Cause.Cause<ChatError.ModelError>)
              }
            })
        }
      }))
