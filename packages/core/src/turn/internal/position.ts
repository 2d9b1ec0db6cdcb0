/**
 * Where a shell stands in a conversation, and the array ownership that lets a step write in place.
 *
 * A `Position` makes stepping a conversation cost O(1) per event instead of a walk over the turn
 * and a scan of the history (packages/bench, scenarios 1 and 4). It describes exactly one messages
 * array (`of`): `Turn`'s positioned step ignores a position of another array and works it out
 * again, so a stale one is never trusted. An array the step made itself (`unshared`, or `owned`
 * within one step) is written in place instead of copied, so a shell copies the history once per
 * model call, not once per event. The shell reaches this through `turn/Stepping.ts`.
 */
import type * as Messages from "../Messages.js"
import type { Message } from "../Messages.js"

/** Where a shell stands in one messages array (see the module header). */
export interface Position {
  /** The messages this position describes. */
  readonly of: Messages.Messages
  /** Index of the first message of the current turn (just after the last user message). */
  readonly turnStart: number
  /** Model responses (assistant messages) of the current turn. */
  readonly steps: number
  /** How many leading messages are known to hold no unresolved call. */
  readonly settled: number
  /**
   * The step made `of` itself (or wrote it in place) and says so: the next step may write it
   * in place instead of copying it. A shell passes it back only while it handed the array to
   * nobody (no model request, no checkpoint, no event); otherwise it drops it (`handedOut`).
   */
  readonly unshared?: boolean | undefined
}

/** The result of one step with the position of its messages (`O`: the reducer's outcome). */
export type Positioned<O> = readonly [Messages.Messages, O, Position]

/** The position of `messages` worked out from scratch: a walk back over the current turn. */
export const positionOf = (messages: Messages.Messages): Position => {
  let steps = 0
  let i = messages.length - 1
  for (; i >= 0; i--) {
    const role = messages[i]!.role
    if (role === "user") break
    if (role === "assistant") steps++
  }
  return { of: messages, turnStart: i + 1, steps, settled: 0 }
}

/**
 * `position` with its `unshared` mark set to `unshared`. Written out: a spread that adds a key
 * (`{ ...position, unshared }` of a position without one) takes V8's slow path, about 0.7 µs.
 */
export const markUnshared = (position: Position, unshared: boolean): Position => ({
  of: position.of,
  turnStart: position.turnStart,
  steps: position.steps,
  settled: position.settled,
  unshared
})

/**
 * The reducer's positioned step, installed by `Turn` as it loads and reached by the shells through
 * `Stepping.stepAt`. `Turn` keeps the step to itself (its rules are the step), so it is not an
 * export of the public module; this slot is the one door to it. Typed loosely here because this
 * module sits below `Turn`'s types; `Stepping` gives it its real type.
 */
export const door: {
  stepAt?: (messages: Messages.Messages, event: never, config: never, position: Position | undefined) => Positioned<unknown>
} = {}

/** `position` marked as handed out: the next step copies its array before a change. */
export const handedOut = (position: Position): Position => markUnshared(position, false)

/**
 * `messages` with the message at `index` (the last, an assistant message) replaced.
 * An array this step made itself (`owned`) is written in place: nobody else holds it yet.
 */
export const replaceMessage = (position: Position, index: number, message: Message, owned: boolean): Position => {
  const next = owned ? position.of as Array<Message> : position.of.slice()
  next[index] = message
  return { of: next, turnStart: position.turnStart, steps: position.steps, settled: Math.min(position.settled, index) }
}

/** `Array.prototype.toSpliced` (ES2023, in every Node chat-ts supports), typed here: the build's lib is ES2022. */
const toSpliced = (Array.prototype as unknown as {
  readonly toSpliced: (this: ReadonlyArray<Message>, start: number, deleteCount: number, item: Message) => Array<Message>
}).toSpliced

/**
 * A copy of `messages` with `message` at the end, exactly as long as it is: `slice` then `push`
 * leaves room for half as many again and 16 more (34 slots for a 12-message turn, kept as long as
 * the array), `concat` is 3× slower on short arrays; `toSpliced` costs what `slice` + `push` did at
 * 12 messages and a third of it at 1,000 (measured interleaved in one process on Node 24).
 */
export const appendOne = (messages: Messages.Messages, message: Message): Array<Message> =>
  toSpliced.call(messages, messages.length, 0, message)
