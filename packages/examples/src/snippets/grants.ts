// Human in the loop: grants, standing approvals that settle later calls without a person.
// #region imports
import { Action, type ChatError, Grant, Messages, Tool, Toolkit } from "@chat-ts/core"
import { Clock, Effect, type Result, Schema } from "effect"
// #endregion imports

const SendEmail = Tool.make("send_email", {
  description: "Send an email.",
  parameters: { to: Schema.String, subject: Schema.String, body: Schema.String },
  success: Schema.String
})
const ReadFile = Tool.make("read_file", {
  description: "Read a file.",
  parameters: { path: Schema.String },
  success: Schema.String
})

// #region strategy
// Every call needs a person, unless a live grant made before it was proposed covers it.
export const toolkit = Toolkit.make(SendEmail, ReadFile).pipe(
  Toolkit.withStrategy(Grant.grantedOr(() => Action.RequireApproval()))
)
// #endregion strategy

/** "Approve send_email to this address for this conversation for the next hour." */
export const emailForAnHour = (messages: Messages.Messages, conversationId: string) =>
  // #region grant
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.fromResult(Messages.grant(messages, {
      id: "grant-1",
      tool: "send_email",
      where: { path: ["to"], equals: "ops@example.com" },
      scope: { conversation: conversationId },
      by: "alice",
      at: now,
      expiresAfter: "1 hour",
      reason: "the nightly report"
    })))
  // #endregion grant

/** "Approve read_* for this user today": a pattern, a user scope, a predicate combining comparisons. */
export const readsToday = (messages: Messages.Messages, user: string, endOfDay: number) =>
  // #region pattern
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.fromResult(Messages.grant(messages, {
      id: "grant-2",
      tool: "read_*",
      where: { all: [{ path: ["path"], prefix: "reports/" }, { not: { path: ["path"], suffix: ".key" } }] },
      scope: { user },
      by: user,
      at: now,
      expiresAt: endOfDay
    })))
  // #endregion pattern

/** Takes a grant back. */
export const revoke = (messages: Messages.Messages, now: number): Result.Result<Messages.Messages, ChatError.RevokeGrantError> =>
  // #region revoke
  Messages.revokeGrant(messages, "grant-1", { by: "bob", at: now, reason: "the report is done" })
  // #endregion revoke

/** Refused: an operator the predicate language does not have. */
export const unknownOperator = (messages: Messages.Messages, now: number) =>
  // #region invalid
  Messages.grant(messages, {
    id: "grant-3",
    tool: "send_email",
    where: { path: ["to"], regex: ".*@example.com" } as unknown as Grant.Predicate,
    by: "alice",
    at: now,
    expiresAfter: "1 hour"
  }) // Result.fail(InvalidGrant: "$: unknown operator \"regex\" …")
  // #endregion invalid
