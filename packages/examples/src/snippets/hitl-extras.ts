// Human in the loop: edits, expiry and moving on while calls are pending.
// #region imports
import { Action, type Chat, ChatError, Messages, Steering, Toolkit } from "@chat-ts/core"
import { Clock, Duration, Effect, Result } from "effect"
// #endregion imports
import { toolkit } from "../human-in-the-loop.js"

/** Approves call `id` with edited arguments: the tool runs with them and the model sees them. */
export const approveEdited = (messages: Messages.Messages, id: string) =>
  // #region edit
  Messages.approve(messages, id, { paths: ["app-2025-03.log"] })
  // #endregion edit

/** Approves with an edit checked against the tool's parameters now, not at resume. */
export const approveChecked = (chat: Chat.Service, messages: Messages.Messages, id: string) =>
  // #region approve-checked
  chat.approve(messages, id, { paths: "app-2025-03.log" }).pipe(
    Effect.catchTag("InvalidEditedArguments", (error) =>
      // `paths` must be an array: nothing changed, ask the person again with `error.detail`.
      Effect.succeed(error.messages))
  )
  // #endregion approve-checked

// #region expiry
// An approval nobody gives within a day is Expired on the next resume: it never runs.
export const expiring = toolkit.pipe(
  Toolkit.withStrategy(() =>
    Effect.map(Clock.currentTimeMillis, (now) =>
      Action.RequireApproval({ expiresAt: now + Duration.toMillis(Duration.days(1)) }))
  )
)
// #endregion expiry

/** The person sends a new message instead of deciding. */
export const moveOn = (
  paused: Messages.Messages
): Result.Result<Messages.Messages, ChatError.PendingToolCalls | ChatError.DecisionNotAllowed> =>
  // #region supersede
  // Without `supersede` this fails with PendingToolCalls naming the undecided calls; a call under a
  // decision policy is withdrawn only for its requester or someone it lets reject (DecisionNotAllowed).
  Messages.append(paused, Messages.user("Actually, keep them all."), {
    supersede: "The user moved on without deciding."
  })
  // #endregion supersede

/** An operator withdraws a call: it never runs, and it is not a rejection. */
export const withdraw = (messages: Messages.Messages, id: string) =>
  // #region cancel
  Messages.cancel(messages, id, {
    by: "operator",
    reason: "This was opened by mistake.",
    cancellation: { by: "ops@example.com", at: Date.UTC(2026, 11, 1) } // audit only, never sent
  })
  // #endregion cancel

/** The person writes again while calls wait: the reducer's rule cancels what nobody decided yet. */
export const steer = (paused: Messages.Messages) =>
  // #region steer
  // Undecided calls become Cancelled ("…the user sent a new message…"); approved ones still run;
  // then the model answers the new message. Resume the result as usual.
  Steering.steer(paused, Messages.user("Actually, keep them all."))
  // #endregion steer

/** The other rule: the message waits until every pending call is decided. */
export const queue = (paused: Messages.Messages) =>
  // #region steer-queue
  Steering.steer(paused, Messages.user("And after that, list what is left."), { rule: "queue" })
  // #endregion steer-queue

/** Deciding a call twice is refused: it would run twice. */
export const decideTwice = (messages: Messages.Messages, id: string) =>
  // #region twice
  Messages.approve(messages, id).pipe(
    Result.flatMap((approved) => Messages.approve(approved, id)),
    Result.mapError((error) => error._tag) // "ToolCallAlreadyResolved"
  )
  // #endregion twice
