/**
 * The arguments a call's decision decoded, kept for its handler: a call decided to run with no
 * strategy to ask is decoded once, at the decision, and its handler gets that value instead of
 * the text parsed and decoded again. An entry is the tool, the call's id and the exact text it was
 * decoded from; it is taken (and dropped) by the first lookup, and only a lookup with the same
 * tool, id and text gets it: an edited call, changed text or a tool read again is decoded afresh.
 * Values a strategy saw are never kept (it could have changed them).
 *
 * @internal
 */
import type * as Result from "effect/Result"
import type * as Tool from "../../tools/Tool.js"

/** Arguments decoded, as `decodeArguments` gives them. */
type Decoded = Result.Success<unknown, string>

interface Kept {
  readonly id: string
  readonly tool: Tool.Any
  readonly text: string
  readonly decoded: Decoded
}

/** The decoded arguments of one turn's decided calls, by call id, each handed out once. */
export class DecodedArguments {
  /** The one kept value when there is one (a response of one call: no `Map`). */
  private only: Kept | undefined
  /** The others, by id, made on the second value kept at once. */
  private more: Map<string, Kept> | undefined

  /** Keeps `decoded`, decoded with `tool` from `text`, for the call `id`. */
  keep(tool: Tool.Any, id: string, text: string, decoded: Decoded): void {
    const kept = { id, tool, text, decoded }
    if (this.only === undefined || this.only.id === id) {
      this.only = kept
      this.more?.delete(id)
    } else (this.more ??= new Map()).set(id, kept)
  }

  /** What was kept for the call `id` if it was decoded with `tool` from exactly `text` (then dropped), else `undefined`. */
  take(tool: Tool.Any, id: string, text: string): Decoded | undefined {
    let kept: Kept | undefined
    if (this.only?.id === id) {
      kept = this.only
      this.only = undefined
    } else {
      kept = this.more?.get(id)
      if (kept === undefined) return undefined
      this.more!.delete(id)
    }
    return kept.tool === tool && kept.text === text ? kept.decoded : undefined
  }
}
