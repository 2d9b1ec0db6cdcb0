/** The `@example` of `Messages.approve` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Messages } from "@chat-ts/core"
import { Effect, pipe } from "effect"

// A turn paused on call "call_1": approve it with edited arguments (the model sees the edit).
const approveEdited = (paused: Messages.Messages) =>
  Messages.approve(paused, "call_1", { to: "ann@example.com" }) // a Result: the messages, or a ResolveError

// Data-last, with who decided (checked against the call's decision policy, kept in its record).
const approveAsAnn = (paused: Messages.Messages, at: number) =>
  Effect.fromResult(pipe(paused, Messages.approve("call_1", undefined, { decider: { id: "ann", roles: ["ops"] }, at })))
// #endregion

export { approveAsAnn, approveEdited }
