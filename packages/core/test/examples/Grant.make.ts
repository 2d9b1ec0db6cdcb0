/** The `@example` of `Grant.make` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Grant, Messages } from "@chat-ts/core"
import { Result } from "effect"

// "Approve send_email to ann@example.com in conversation conv-1 for the next hour."
const options: Grant.Options = {
  id: "g1",
  tool: "send_email",
  where: { path: ["to"], equals: "ann@example.com" },
  scope: { conversation: "conv-1" },
  by: "ann",
  at: Date.now(),
  expiresAfter: "1 hour"
}
const grant = Grant.make(options) // a Result: the grant, or InvalidGrant

// Recorded in the messages, it settles later calls it covers (see `Grant.grantedOr`).
const withGrant = (messages: Messages.Messages) => Result.flatMap(grant, () => Messages.grant(messages, options))
// #endregion

export { grant, withGrant }
