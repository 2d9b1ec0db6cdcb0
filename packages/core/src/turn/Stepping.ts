/**
 * What a shell needs of the reducer beyond `Turn.step`, to drive it the way `Chat` does: the
 * positioned step (`stepAt`, O(1) per event, writing in place an array nobody else holds; see
 * `internal/position.ts`), and two rules about what the shell puts into the events: the ids a
 * model response's calls take in the conversation, and which calls left running may run again
 * (`Resume`'s `rerun`).
 *
 * @internal
 */
import type * as Messages from "./Messages.js"
import type { ToolCallPart } from "./Messages.js"
import { toolCallsOf } from "./Messages.js"
import { door, handedOut, type Position, type Positioned as PositionedOf, positionOf } from "./internal/position.js"
import { type Config, defaultConfig, type Event, type Outcome } from "./Turn.js"

export { handedOut, type Position, positionOf }

/** The result of `stepAt`: the next messages, the outcome, and the position of those messages. */
export type Positioned = PositionedOf<Outcome>

/** What `Turn` installs at `door.stepAt` (importing `Turn` above, for `defaultConfig`, makes sure it has loaded). */
type StepAt = (messages: Messages.Messages, event: Event, config: Config, position: Position | undefined) => Positioned

/**
 * `Turn.step` with a position: the reducer's own positioned step (kept in `Turn`, not exported
 * there), so that an event costs O(1) whatever the history; see `internal/position.ts` for the
 * position and the in-place writes an `unshared` one allows.
 */
export const stepAt = (
  messages: Messages.Messages,
  event: Event,
  config: Config = defaultConfig,
  position?: Position
): Positioned => (door.stepAt as unknown as StepAt)(messages, event, config, position)

/**
 * The id a call gets in a conversation: its own when free, `call_<n>` when it
 * has none, else its id with the first free suffix `_2`, `_3`… `isTaken` says
 * whether an id is used; `count` is how many are.
 */
export const uniqueId = (id: string, isTaken: (id: string) => boolean, count: number): string => {
  let unique = id === "" ? `call_${count + 1}` : id
  for (let n = 2; isTaken(unique); n++) unique = `${id || "call"}_${n}`
  return unique
}

/**
 * A response's parts with their tool call ids made unique within the conversation (a provider
 * may repeat or omit them), in order. `taken` holds the ids already used; the ids given out are added.
 */
export const uniqueIds = (taken: Set<string>, parts: ReadonlyArray<Messages.Part>): ReadonlyArray<Messages.Part> =>
  parts.map((part) => {
    if (part._tag !== "ToolCall") return part
    const id = uniqueId(part.id, (id) => taken.has(id), taken.size)
    taken.add(id)
    return id === part.id ? part : { ...part, id }
  })

/** What `rerunnable` needs to know of a call's tool. */
export interface Rerun {
  /** Running a call twice is harmless. */
  readonly idempotent: boolean
  /** How many times a call may be started in all. */
  readonly maxAttempts: number
}

/** Whether a call left running (by a worker that died) may start again: its tool is idempotent and it has attempts left. */
export const mayRunAgain = (call: ToolCallPart, tool: Rerun | undefined): boolean => {
  if (call.status._tag !== "Running" || tool === undefined || tool.idempotent !== true) return false
  return (call.status.attempt ?? 1) < tool.maxAttempts
}

/** The calls of the last response left running that may start again (`Resume`'s `rerun`); `toolOf` finds a call's tool by name. */
export const rerunnable = (messages: Messages.Messages, toolOf: (name: string) => Rerun | undefined): ReadonlyArray<string> => {
  const last = messages[messages.length - 1]
  if (last === undefined || last.role !== "assistant") return []
  return toolCallsOf(last).flatMap((call) => mayRunAgain(call, toolOf(call.name)) ? [call.id] : [])
}
