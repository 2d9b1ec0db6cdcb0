/**
 * Human in the loop: a tool whose strategy requires approval pauses the turn;
 * a person approves (possibly with edited arguments) or rejects each pending
 * call, and `resume` picks the same turn back up. One turn can pause more than
 * once, so `complete` then `resume` until the outcome is `Complete`.
 *
 *   npx tsx src/human-in-the-loop.ts      # asks you on the terminal
 */
// #region imports
import { Action, Chat, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Context, Effect, Schema } from "effect"
import { Prompt } from "effect/cli"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files for good.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Array(Schema.String) }),
  metadata: { requiresApproval: true }
})

export const toolkit = Toolkit.make(DeleteFiles).pipe(
  Toolkit.withStrategy((_call, meta) => (meta.requiresApproval ? Action.RequireApproval() : Action.Execute()))
)

// A pretend folder, fresh for each run.
export const handlers = toolkit.toLayer(Effect.sync(() => {
  const files = new Set(["app.log", "app-2025-03.log", "app-2025-04.log"])
  return {
    delete_files: ({ paths }) => Effect.sync(() => ({ deleted: paths.filter((path) => files.delete(path)) }))
  }
}))

// #region ask
/** A person's answer about one call. */
export type Answer =
  | { readonly _tag: "Approve"; readonly edited?: unknown }
  | { readonly _tag: "Reject"; readonly reason?: string }

/** Asks a person about a call (on the terminal, in a web page, in a test…). */
export class AskUser extends Context.Service<
  AskUser,
  (name: string, args: unknown) => Effect.Effect<Answer>
>()("AskUser") {}
// #endregion ask

// #region resolve
/** Asks about every call awaiting approval and records each answer in the messages. */
const resolvePending = (reason: PauseReason.PauseReason, messages: Messages.Messages) =>
  Effect.gen(function*() {
    const askUser = yield* AskUser
    let next = messages
    for (const id of PauseReason.approvalIds(reason)) {
      const call = Messages.findTool(next, id)
      if (call === undefined) continue
      const answer = yield* askUser(call.name, Messages.parsedArguments(call))
      next = yield* Effect.fromResult(
        answer._tag === "Approve" ? Messages.approve(next, id, answer.edited) : Messages.reject(next, id, answer.reason)
      )
    }
    return next
  })
// #endregion resolve

// #region loop
export const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: toolkit })
  let result = yield* chat.complete(Messages.fromUser("Delete the old logs."))
  while (result.outcome._tag === "Paused") {
    const messages = yield* resolvePending(result.outcome.reason, result.messages)
    result = yield* chat.resume(messages)
  }
  yield* Console.log(result.outcome.value)
  return result
}).pipe(Effect.provide(handlers))
// #endregion loop

/** The offline model: proposes deleting the two old logs, then reports the outcome. */
export const offline: MockLanguageModel.Script = (request) => {
  const last = request.messages.at(-1)
  if (last === undefined || last.role === "user") {
    return MockLanguageModel.toolCalls([
      { name: "delete_files", arguments: { paths: ["app-2025-03.log", "app-2025-04.log"] } }
    ])
  }
  const call = Messages.toolCallsOf(last)[0]!
  const status = call.status
  if (status._tag === "Completed") {
    const { deleted } = status.result as { readonly deleted: ReadonlyArray<string> }
    return MockLanguageModel.text(`Deleted ${deleted.join(" and ")}.`)
  }
  return MockLanguageModel.text(
    status._tag === "Rejected" || status._tag === "Cancelled"
      ? `I left the logs alone${status.reason ? `: ${status.reason}` : "."}`
      : status._tag === "Expired"
      ? "Nobody approved the deletion in time, so I left the logs alone."
      : "The deletion failed."
  )
}

/** Asks on the terminal with `effect/cli` prompts: approve, or reject with a reason. */
const askOnTerminal = Effect.map(Effect.context<Prompt.Environment>(), (context) =>
  AskUser.of((name, args) =>
    Effect.gen(function*() {
      yield* Console.log(`\n${name} wants to run with ${JSON.stringify(args)}`)
      const approve = yield* Prompt.Confirm({ message: "Approve?", initial: false })
      if (approve) return { _tag: "Approve" } as const
      const reason = yield* Prompt.String({ message: "Why not? (the model sees this)" })
      return { _tag: "Reject", reason } as const
    }).pipe(
      Effect.provide(context),
      // Ctrl-C at a prompt: stop the program.
      Effect.catchTag("QuitError", () => Effect.interrupt)
    )
  ))

/** Without a terminal, approves every call and says so. */
const approveAll = AskUser.of((name, args) =>
  Effect.as(Console.log(`(no terminal: approving ${name} ${JSON.stringify(args)})`), { _tag: "Approve" } as const)
)

if (isMain(import.meta.url)) {
  runExample((choice) =>
    Effect.gen(function*() {
      const askUser = process.stdin.isTTY ? yield* askOnTerminal : approveAll
      return yield* program.pipe(
        Effect.provideService(AskUser, askUser),
        Effect.provide(Models.languageModel(choice, offline))
      )
    })
  )
}
