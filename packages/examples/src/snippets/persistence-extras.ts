// Persistence: signed documents, checkpoints and idempotent tools.
// #region imports
import { Chat, Messages, SignedState, Tool, Toolkit } from "@chat-ts/core"
import { Config, Console, Effect, Ref, Schema } from "effect"
// #endregion imports

// #region signed
/**
 * Hands a paused turn out where others can edit it (a browser, a queue): signed with a server-side
 * secret (32 bytes or more), for one conversation at one version (the server keeps the latest version).
 */
export const save = (messages: Messages.Messages, conversationId: string, version: number) =>
  Effect.flatMap(Config.Redacted("STATE_SECRET"), (secret) => SignedState.sign(messages, secret, { conversationId, version }))

/**
 * Takes it back; a document changed by anyone without the secret, a document of another
 * conversation, or an older one than `latestVersion` (a replay) is a StateDecodeError.
 */
export const load = (stored: string, conversationId: string, latestVersion: number) =>
  Effect.flatMap(
    Config.Redacted("STATE_SECRET"),
    (secret) => SignedState.verify(stored, secret, { conversationId, atLeastVersion: latestVersion })
  )
// #endregion signed

// #region checkpoint
/** Runs a turn, keeping its latest state after every step (a call recorded as running is never run twice). */
export const completeDurably = (chat: Chat.Service, store: Ref.Ref<string>, messages: Messages.Messages) =>
  chat.complete(messages, {
    checkpoint: (latest) => Effect.flatMap(Effect.fromResult(Messages.toJson(latest)), (json) => Ref.set(store, json))
  })
// #endregion checkpoint

// #region idempotent
/** Running a transfer twice is harmless: the bank makes one transfer per idempotency key. */
export const Transfer = Tool.make("transfer", {
  description: "Move money between two of the user's own accounts.",
  parameters: { from: Schema.String, to: Schema.String, amount: Schema.Number },
  success: Schema.Struct({ reference: Schema.String, attempt: Schema.Number }),
  idempotent: true, // after its worker died mid-run, the call runs again instead of being reported interrupted
  maxAttempts: 3 // in all, counting the first run (the default)
})

export const transfers = Toolkit.make(Transfer)

export const transferHandlers = transfers.toLayer({
  // Every attempt of a call sends the same key, so the bank's side happens at most once.
  transfer: ({ amount, from, to }, call) =>
    Console.log(`transfer ${amount} from ${from} to ${to}, key ${call.id}, attempt ${call.attempt}`).pipe(
      Effect.as({ reference: `bank-${call.id}`, attempt: call.attempt })
    )
})
// #endregion idempotent
