// Errors and retries: typed errors of a turn, retrying a turn, resuming after a failure.
// #region imports
import type { ChatError } from "@chat-ts/core"
import { Chat, Messages } from "@chat-ts/core"
import { Effect, Schedule } from "effect"
// #endregion imports

// #region catch
/** One turn's answer as text, whatever happened. */
export const reply = (chat: Chat.Service, messages: Messages.Messages) =>
  chat.complete(messages).pipe(
    Effect.map((result) =>
      result.outcome._tag === "Complete" ? result.outcome.value : "(waiting for your approval)"
    ),
    Effect.catchTags({
      AuthenticationError: () => Effect.succeed("The model refused our key: check OPENAI_API_KEY."),
      ContextLengthExceeded: () => Effect.succeed("This conversation is too long for the model."),
      StepLimitReached: (error) => Effect.succeed(`No answer after ${error.maxSteps} model calls.`)
    })
  )
// #endregion catch

// #region resume
const retryable = (error: { readonly _tag: string }): boolean =>
  error._tag === "RateLimited" || error._tag === "ServerError" || error._tag === "NetworkError"

/**
 * Retries a turn the provider gave up on. Each attempt starts from the state
 * the last error carried, so tool calls that already ran are not run again.
 */
export const completeWithRetries = (chat: Chat.Service, messages: Messages.Messages) => {
  let latest = messages
  return Effect.suspend(() => chat.complete(latest)).pipe(
    Effect.tapError((error: Chat.TurnError) =>
      Effect.sync(() => {
        if ("messages" in error && error.messages !== undefined) latest = error.messages
      })
    ),
    Effect.retry({
      schedule: Schedule.max([Schedule.exponential("2 seconds"), Schedule.recurs(3)]),
      while: retryable
    })
  )
}
// #endregion resume

// #region defect
/** A handler that died: the call is recorded as failed in `error.messages`; go on from there. */
export const carryOn = (chat: Chat.Service, error: ChatError.ToolHandlerDefect) =>
  Effect.logError(error.message).pipe(Effect.andThen(chat.resume(error.messages)))
// #endregion defect
