/**
 * Scheduled calls: a strategy defers a call to a later time. Without
 * `waitForScheduled` the turn pauses on it (store the messages, come back
 * later); with `waitForScheduled: true` the chat sleeps on Effect's `Clock`
 * until the call is due, runs it and finishes the turn.
 *
 *   npx tsx src/scheduled-calls.ts
 */
// #region imports
import { Action, Chat, ChatOutcome, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Clock, Console, DateTime, Effect, Schema } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

// #region toolkit
const SendReminder = Tool.make("send_reminder", {
  description: "Send a reminder message to someone.",
  parameters: { to: Schema.String, text: Schema.String },
  success: Schema.Struct({ sentAt: Schema.String }),
  // How long to hold the reminder back; a few seconds, so the example is quick.
  metadata: { delay: { seconds: 2 } }
})

export const toolkit = Toolkit.make(SendReminder).pipe(
  Toolkit.withStrategy((_call, meta) => Action.Defer({ after: meta.delay }))
)

export const handlers = toolkit.toLayer({
  send_reminder: () => Effect.map(DateTime.now, (now) => ({ sentAt: DateTime.formatIso(now) }))
})
// #endregion toolkit

const iso = (millis: number) => new Date(millis).toISOString()

// #region program
export const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: toolkit })
  const messages = Messages.fromUser("Remind Sam to water the plants.")

  // Without waitForScheduled: the turn pauses and tells us when the call is due.
  const paused = yield* chat.complete(messages)
  if (paused.outcome._tag === "Paused") {
    const due = PauseReason.earliest(paused.outcome.reason)!
    yield* Console.log(`now ${iso(yield* Clock.currentTimeMillis)}: paused, the reminder is due at ${iso(due)}`)
  }

  // With waitForScheduled: resuming sleeps until it is due, runs it, and completes the turn.
  const done = yield* chat.resume(paused.messages, { waitForScheduled: true })
  const call = Messages.toolCalls(done.messages)[0]!
  if (call.status._tag === "Completed") yield* Console.log(`sent: ${JSON.stringify(call.status.result)}`)
  if (ChatOutcome.isComplete(done.outcome)) yield* Console.log(done.outcome.value)
  return done
}).pipe(Effect.provide(handlers))
// #endregion program

/** The offline model: schedules the reminder, then confirms it went out. */
export const offline: MockLanguageModel.Script = (request) =>
  request.messages.at(-1)?.role === "user"
    ? MockLanguageModel.toolCalls([{ name: "send_reminder", arguments: { to: "Sam", text: "Water the plants!" } }])
    : MockLanguageModel.text("Sam has been reminded to water the plants.")

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Models.languageModel(choice, offline))))
}
