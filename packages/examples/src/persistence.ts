/**
 * Pause in one process, resume in another: a paused turn is entirely in its
 * messages, so store them as JSON and pick the turn up anywhere, any time.
 *
 *   npx tsx src/persistence.ts pause paused.json     # runs until the approval, saves, exits
 *   npx tsx src/persistence.ts resume paused.json    # approves, resumes, finishes
 *   npx tsx src/persistence.ts resume paused.json --reject "not this month"
 */
// #region imports
import { Action, Chat, ChatError, ChatOutcome, LanguageModel, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Clock, Console, Duration, Effect, FileSystem, Option, type PlatformError, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
// #endregion imports
import { fromUserFolder, isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

const PayBill = Tool.make("pay_bill", {
  description: "Pay a bill from the household account.",
  parameters: { payee: Schema.String, amount: Schema.Number, currency: Schema.String },
  success: Schema.Struct({ reference: Schema.String })
})

// Every payment waits for a person; an approval not given within a week expires.
export const toolkit = Toolkit.make(PayBill).pipe(
  Toolkit.withStrategy(() =>
    Effect.map(Clock.currentTimeMillis, (now) =>
      Action.RequireApproval({ expiresAt: now + Duration.toMillis(Duration.days(7)) }))
  )
)

export const handlers = toolkit.toLayer({
  pay_bill: ({ amount, payee }) =>
    Effect.succeed({ reference: `PAY-${payee.replace(/\W/g, "").slice(0, 4).toUpperCase()}-${Math.round(amount * 100)}` })
})

type Errors = Chat.TurnError | ChatError.ResolveError | ChatError.StateDecodeError | Chat.MakeError | PlatformError.PlatformError

// #region pause
/** First process: run the turn until it pauses and save the messages. */
export const pause = (file: string): Effect.Effect<ChatOutcome.Result, Errors, LanguageModel.LanguageModel | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const chat = yield* Chat.make({ tools: toolkit })
    const result = yield* chat.complete(Messages.fromUser("Pay the electricity bill: 84.20 EUR to ACME Power."))
    yield* fs.writeFileString(file, yield* Effect.fromResult(Messages.toJson(result.messages)))
    if (result.outcome._tag === "Paused") {
      for (const call of Messages.pendingTools(result.messages)) {
        yield* Console.log(`waiting for approval: ${call.name} ${call.arguments} (${call.id})`)
      }
      yield* Console.log(`Paused; saved to ${file}.`)
    }
    return result
  }).pipe(Effect.provide(handlers))
// #endregion pause

// #region resume
/** Second process: load the messages, decide the pending calls, and resume. */
export const resume = (
  file: string,
  decision: { readonly approve: true } | { readonly approve: false; readonly reason: string }
): Effect.Effect<ChatOutcome.Result, Errors, LanguageModel.LanguageModel | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    let messages = yield* Effect.fromResult(Messages.fromJson(yield* fs.readFileString(file)))
    for (const call of Messages.pendingTools(messages).filter(Messages.isAwaitingDecision)) {
      messages = yield* Effect.fromResult(
        decision.approve ? Messages.approve(messages, call.id) : Messages.reject(messages, call.id, decision.reason)
      )
      yield* Console.log(`${decision.approve ? "approved" : "rejected"}: ${call.name} ${call.arguments}`)
    }
    const chat = yield* Chat.make({ tools: toolkit })
    const result = yield* chat.resume(messages)
    yield* fs.writeFileString(file, yield* Effect.fromResult(Messages.toJson(result.messages)))
    yield* Console.log(result.outcome._tag === "Complete" ? result.outcome.value : "Paused again.")
    return result
  }).pipe(Effect.provide(handlers))
// #endregion resume

/** The offline model: asks to pay, then reports the payment (a function of the request, so it works across processes). */
export const offline: MockLanguageModel.Script = (request) => {
  const last = request.messages.at(-1)
  if (last === undefined || last.role === "user") {
    return MockLanguageModel.toolCalls([
      { name: "pay_bill", arguments: { payee: "ACME Power", amount: 84.2, currency: "EUR" } }
    ])
  }
  const status = Messages.toolCallsOf(last)[0]!.status
  return MockLanguageModel.text(
    status._tag === "Completed"
      ? `Paid 84.20 EUR to ACME Power (reference ${(status.result as { reference: string }).reference}).`
      : `I did not pay the bill${status._tag === "Rejected" && status.reason ? `: ${status.reason}` : "."}`
  )
}

const file = Argument.String("file").pipe(Argument.withDescription("The JSON file holding the paused messages"))

/** The two commands. */
export const command = Command.make("persistence").pipe(
  Command.withSubcommands([
    Command.make("pause", { file }, ({ file }) => pause(fromUserFolder(file))),
    Command.make(
      "resume",
      { file, reject: Flag.String("reject").pipe(Flag.optional, Flag.withDescription("Reject, with this reason")) },
      ({ file, reject }) =>
        resume(fromUserFolder(file), Option.match(reject, { onNone: () => ({ approve: true }), onSome: (reason) => ({ approve: false, reason }) }))
    )
  ])
)

if (isMain(import.meta.url)) {
  runExample((choice) =>
    Command.run(command, { version: "0.1.0" }).pipe(
      Effect.provide(Models.languageModel(choice, offline))
    )
  )
}
