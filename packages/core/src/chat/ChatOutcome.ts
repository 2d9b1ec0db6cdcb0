/**
 * How a turn ended: complete with the model's final response, or paused on
 * calls that wait for a person or a time. Both report the turn's usage.
 *
 * @since 0.1.0
 */
import type { Message, Messages } from "../turn/Messages.js"
import type { PauseReason } from "../data/PauseReason.js"
import type { Usage } from "../data/Usage.js"

/**
 * How a turn ended. `A` is the decoded value of a structured turn.
 *
 * @category models
 * @since 0.1.0
 */
export type ChatOutcome<A = string> = Complete<A> | Paused

/**
 * The turn is complete: `response` is the model's final message; `value` its text (or decoded value).
 *
 * @category models
 * @since 0.1.0
 */
export interface Complete<A = string> {
  readonly _tag: "Complete"
  readonly response: Message
  readonly value: A
  /** Tokens used by every model call of the turn, pauses included. */
  readonly usage: Usage
}

/**
 * The turn waits: `reason` names the calls to decide or wait for.
 *
 * @category models
 * @since 0.1.0
 */
export interface Paused {
  readonly _tag: "Paused"
  readonly reason: PauseReason
  /** Tokens used so far by the turn. */
  readonly usage: Usage
}

/**
 * A complete outcome.
 *
 * @category constructors
 * @since 0.1.0
 */
export const Complete = <A>(args: Omit<Complete<A>, "_tag">): Complete<A> => ({ _tag: "Complete", ...args })

/**
 * A paused outcome.
 *
 * @category constructors
 * @since 0.1.0
 */
export const Paused = (args: Omit<Paused, "_tag">): Paused => ({ _tag: "Paused", ...args })

/**
 * What `complete`, `resume` and `completeStructured` return: the new messages and how the turn ended.
 *
 * @category models
 * @since 0.1.0
 */
export interface Result<A = string> {
  readonly messages: Messages
  readonly outcome: ChatOutcome<A>
}

/**
 * Whether the outcome is complete.
 *
 * @category guards
 * @since 0.1.0
 */
export const isComplete = <A>(outcome: ChatOutcome<A>): outcome is Complete<A> => outcome._tag === "Complete"

/**
 * Whether the outcome is paused.
 *
 * @category guards
 * @since 0.1.0
 */
export const isPaused = <A>(outcome: ChatOutcome<A>): outcome is Paused => outcome._tag === "Paused"
