/**
 * The input side of a streamed turn (`Chat.StreamOptions.input`): user messages
 * sent while the turn runs, and `cancel`. A message that comes while the model
 * streams its answer interrupts it and the model answers again with the message
 * (the rules are the reducer's: `Turn.Event.InputArrived`); one that comes while
 * calls run or wait is held until they are resolved. `cancel` ends the turn as
 * stopping the stream does: the running calls are recorded as interrupted.
 *
 * @since 0.3.0
 */
import type { Message } from "../turn/Messages.js"

/**
 * Ends the turn (as interrupting its stream does).
 *
 * @category models
 * @since 0.3.0
 */
export interface Cancel {
  readonly _tag: "Cancel"
}

/**
 * What a caller sends into a streaming turn: a user message (text and files) or `cancel`.
 *
 * @category models
 * @since 0.3.0
 */
export type ChatInput = Message | Cancel

/**
 * The cancel input.
 *
 * @category constructors
 * @since 0.3.0
 */
export const cancel: Cancel = { _tag: "Cancel" }

/**
 * Whether an input is `cancel`.
 *
 * @category guards
 * @since 0.3.0
 */
export const isCancel = (input: ChatInput): input is Cancel =>
  typeof input === "object" && input !== null && (input as { readonly _tag?: unknown })._tag === "Cancel"
