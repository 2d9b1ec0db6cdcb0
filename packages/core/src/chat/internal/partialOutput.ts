/**
 * The partial values of a structured answer as its text streams in
 * (`chat.streamStructured`): the text of the current model call, parsed
 * leniently (`partialJson`), brought back from the wire like the final answer
 * (`Structured.fromWire`), and given out only when it changed.
 *
 * Each parse reads the whole text so far. To keep a long answer linear, the
 * text is parsed on every delta while it is short (up to `eagerChars`), and
 * past that only once it grew by an eighth since the last parse.
 *
 * @internal
 */
import * as PartialJson from "../../internal/partialJson.js"
import type { Structured } from "../../tools/ResponseFormat.js"
import { jsonProblem } from "../../internal/schema.js"

/** Up to this many characters, every delta is parsed. */
export const eagerChars = 4096

/** The partial values of the answer of one structured turn. */
export class PartialOutput {
  private text = ""
  private parsedLength = 0
  private last: string | undefined

  constructor(private readonly structured: Structured) {}

  /** A model call starts over: its text is a new answer. */
  reset(): void {
    this.text = ""
    this.parsedLength = 0
    this.last = undefined
  }

  /** Adds a piece of the answer's text; the value known so far when it changed. */
  add(delta: string): { readonly value: unknown } | undefined {
    this.text += delta
    const grown = this.text.length - this.parsedLength
    if (grown === 0 || (this.text.length > eagerChars && grown < this.parsedLength / 8)) return undefined
    this.parsedLength = this.text.length
    return this.changed(PartialJson.parse(this.text))
  }

  /** The value of a parse, back from the wire, when it is new and plain data. */
  private changed(parsed: { readonly value: unknown } | undefined): { readonly value: unknown } | undefined {
    if (parsed === undefined) return undefined
    const wire = parsed.value
    // A wrapped root is known once its "value" key is.
    if (this.structured.wrapped && !(typeof wire === "object" && wire !== null && Object.hasOwn(wire, "value"))) return undefined
    // A "__proto__" key is never handed out (the final answer fails on it, as completeStructured's does).
    if (jsonProblem(wire) !== undefined) return undefined
    const value = this.structured.fromWire(wire)
    const seen = JSON.stringify(value)
    if (seen === this.last) return undefined
    this.last = seen
    return { value }
  }
}
