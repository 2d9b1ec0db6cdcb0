// Persistence: signed documents and checkpoints.
import { Chat, Messages, SignedState } from "@chat-ts/core"
import { Config, Effect, Ref } from "effect"

// #region signed
/**
 * Hands a paused turn out where others can edit it (a browser, a queue): signed with a server-side
 * secret (32 bytes or more), for one conversation at one version (the server keeps the latest version).
 */
export const save = (messages: Messages.Messages, conversationId: string, version: number) =>
  Effect.flatMap(Config.redacted("STATE_SECRET"), (secret) => SignedState.sign(messages, secret, { conversationId, version }))

/**
 * Takes it back; a document changed by anyone without the secret, a document of another
 * conversation, or an older one than `latestVersion` (a replay) is a StateDecodeError.
 */
export const load = (stored: string, conversationId: string, latestVersion: number) =>
  Effect.flatMap(
    Config.redacted("STATE_SECRET"),
    (secret) => SignedState.verify(stored, secret, { conversationId, atLeastVersion: latestVersion })
  )
// #endregion signed

// #region checkpoint
/** Runs a turn, keeping its latest state after every step (a call recorded as running is never run twice). */
export const completeDurably = (chat: Chat.Service, store: Ref.Ref<string>, messages: Messages.Messages) =>
  chat.complete(messages, {
    checkpoint: (latest) => Effect.flatMap(Messages.toJson(latest), (json) => Ref.set(store, json))
  })
// #endregion checkpoint
