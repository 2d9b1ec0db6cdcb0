/** The `@example` of `Messages.toJson` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Messages } from "@chat-ts/core"
import { Effect } from "effect"

// The versioned JSON document of a conversation, for any store (a StateEncodeError if it cannot be).
const save = (messages: Messages.Messages, write: (json: string) => Effect.Effect<void>) =>
  Effect.flatMap(Effect.fromResult(Messages.toJson(messages)), write)
// #endregion

export { save }
