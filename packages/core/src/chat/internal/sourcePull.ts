/**
 * `chat.stream`'s consumer side of a model response whose stream can be read
 * as a `PartSource` (a provider's `ProviderStream.decodeEvents` stream): each
 * pull of the consumer is one read of the source (the SDK's iterator), its
 * parts handed to the turn's `onPart` in place, with no `Stream` stage of the
 * provider's in between. The gathered response, or the stream's failure, goes
 * back to the waiting turn through `done`.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import type { ChatEvent } from "../ChatEvent.js"
import type * as ChatError from "../../data/ChatError.js"
import * as LanguageModel from "../../model/LanguageModel.js"
import * as PartSource from "../../model/PartSource.js"

type Events = readonly [ChatEvent, ...Array<ChatEvent>]

/** One model response handed over by the turn. */
export interface Response {
  readonly parts: Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError>
  readonly onPart: (part: LanguageModel.StreamPart) => Effect.Effect<void>
  readonly done: Deferred.Deferred<LanguageModel.Response, ChatError.ModelError>
  readonly span: Option.Option<Tracer.AnySpan>
}

/** Whether `pull` reads this response's parts as a source (else the caller pulls its stream). */
export const applies = (response: Response): boolean => PartSource.hasOpener(response.parts)

/**
 * The events of `response`: `events` is where the turn's `onPart` puts them
 * while the consumer pulls, `release` ends that once the response is over.
 */
export const pull = (response: Response, events: Array<ChatEvent>, release: () => void): Stream.Stream<ChatEvent> => {
  const acc = new LanguageModel.Accumulator()
  const opened = PartSource.sourceOf(response.parts)
  const traced = Option.isSome(response.span) ? Effect.provideService(opened, Tracer.ParentSpan, response.span.value) : opened
  const ending = (effect: Effect.Effect<void>): Effect.Effect<never, Cause.Done> =>
    Effect.suspend(() => {
      release()
      return Effect.andThen(effect, Cause.done())
    })
  return Stream.unwrap(Effect.matchCause(traced, {
    // Failing to open fails the turn's model call, as a failure of the stream's first pull did.
    onFailure: (cause) => Stream.fromPull(Effect.succeed(ending(Deferred.failCause(response.done, cause)))),
    onSuccess: (source) => {
      let resume: (effect: Effect.Effect<Events, Cause.Done>) => void = () => {}
      const take = Effect.sync(() => events.splice(0))
      const next: Effect.Effect<Events, Cause.Done> = Effect.callback((r) => {
        resume = r
        source.read(reader)
      })
      const onPart = (part: LanguageModel.StreamPart) =>
        Effect.suspend(() => {
          acc.add(part)
          return response.onPart(part)
        })
      const reader: PartSource.Reader = {
        onParts: (parts) => {
          for (let i = 0; i < parts.length; i++) {
            acc.add(parts[i]!)
            const effect = response.onPart(parts[i]!)
            // A delta's emits return `Effect.void` while the consumer pulls; anything else runs in the pull, in order.
            if (effect !== Effect.void) {
              return resume(effect.pipe(
                Effect.andThen(Effect.forEach(parts.slice(i + 1), onPart, { discard: true })),
                Effect.andThen(take),
                Effect.flatMap((out) => (out.length === 0 ? next : Effect.succeed(out as unknown as Events)))
              ))
            }
          }
          // Parts with no events (a call's start whose name is not known yet): read on within this pull.
          if (events.length === 0) return source.read(reader)
          resume(Effect.succeed(events.splice(0) as unknown as Events))
        },
        onEnd: () => resume(ending(Deferred.complete(response.done, LanguageModel.finish(acc)))),
        onFailure: (cause) => resume(ending(Deferred.failCause(response.done, cause)))
      }
      return Stream.fromPull(Effect.succeed(next))
    }
  }))
}
