// Persistence: signed documents and checkpoints.
// #region imports
import { Chat, Messages, SignedState } from "@chat-ts/core"
import { Config, Effect, Ref } from "effect"
// #endregion imports

// #region signed
/** Stores a paused turn where others can edit it (a browser, a queue): signed with a server-side secret. */
export const save = (messages: Messages.Messages) =>
  Effect.flatMap(Config.redacted("STATE_SECRET"), (secret) => SignedState.sign(messages, secret))

/** Loads it back; a document changed by anyone without the secret is a StateDecodeError. */
export const load = (stored: string) =>
  Effect.flatMap(Config.redacted("STATE_SECRET"), (secret) => SignedState.verify(stored, secret))
// #endregion signed

// #region checkpoint
/** Runs a turn, keeping its latest state after every step (a call recorded as running is never run twice). */
export const completeDurably = (chat: Chat.Service, store: Ref.Ref<string>, messages: Messages.Messages) =>
  chat.complete(messages, {
    checkpoint: (latest) => Ref.set(store, Messages.toJson(latest))
  })
// #endregion checkpoint
