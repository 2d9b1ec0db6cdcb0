// Streaming: input while the model answers (`chat.stream(…, { input })`): typing interrupts the answer.
// #region imports
import { type Chat, ChatEvent, ChatInput, type Messages } from "@chat-ts/core"
import { Deferred, Effect, Fiber, Queue, Stream } from "effect"
// #endregion imports

// #region barge-in
/** Streams a turn and, as soon as the model's text starts, sends `later`: the answer is cut and the model answers it. */
export const interruptWith = (chat: Chat.Service, messages: Messages.Messages, later: Messages.Message) =>
  Effect.gen(function*() {
    const input = yield* Queue.unbounded<ChatInput.ChatInput>()
    const started = yield* Deferred.make<void>()
    const turn = yield* chat.stream(messages, { input }).pipe(
      Stream.tap((event) => (event._tag === "TextDelta" ? Deferred.succeed(started, undefined) : Effect.void)),
      Stream.runCollect,
      Effect.forkChild
    )
    yield* Deferred.await(started)
    yield* Queue.offer(input, later) // the user types while the answer streams
    const events = yield* Fiber.join(turn)
    // `AnswerInterrupted` says what was cut; the last event is the answer to `later`.
    return { interrupted: events.filter(ChatEvent.ChatEvent.$is("AnswerInterrupted")), last: events.at(-1) }
  })
// #endregion barge-in
