/**
 * A lenient parser of JSON text that may be cut short: the value known so far
 * of a JSON document still arriving (`chat.streamStructured`). Open objects,
 * arrays and strings are closed where the text stops; a number, `true`,
 * `false` or `null` counts only once complete (a number is complete when
 * something follows it, or at the end of a text said to be complete); an
 * object key whose value has not begun is left out. Past a malformed spot
 * nothing more is read: the value is what came before it.
 *
 * It never throws and never recurses: one loop over the text with an explicit
 * stack, nesting read to `maxJsonDepth` levels only (deeper content is left
 * out), keys set like `JSON.parse` sets them (an own `"__proto__"` property,
 * never a prototype), and on the whole text of a JSON document (with
 * `complete`) it gives what `JSON.parse` gives.
 *
 * @internal
 */
import { maxJsonDepth } from "./schema.js"

/** An open container: an array, or an object with the key whose value comes next. */
type Frame =
  | { readonly array: Array<unknown> }
  | { readonly object: Record<string, unknown>; key: string | undefined }

/** Whether the rest of the text is the start of `literal` (it may still become it). */
const startsLiteral = (text: string, at: number, literal: string): boolean =>
  text.length - at < literal.length && literal.startsWith(text.slice(at))

const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const numberChars = /[-+.eE0-9]/

/** Where a plain run of string characters stops: a quote, a backslash or a control character. */
const special = /["\\\u0000-\u001f]/g

const escapes: Readonly<Record<string, string>> = { "\"": "\"", "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }

/** A string from the quote at `at`: its text so far (an escape cut short left out), and the index past it if it closed. */
const readString = (text: string, at: number): { readonly value: string; readonly end: number | undefined; readonly bad: boolean } => {
  let value = ""
  let i = at + 1
  while (i < text.length) {
    special.lastIndex = i
    const next = special.exec(text)
    if (next === null) return { value: value + text.slice(i), end: undefined, bad: false }
    value += text.slice(i, next.index)
    i = next.index
    const c = text[i]!
    if (c === "\"") return { value, end: i + 1, bad: false }
    if (c !== "\\") return { value, end: undefined, bad: true }
    const e = text[i + 1]
    if (e === undefined) return { value, end: undefined, bad: false }
    if (e === "u") {
      const hex = text.slice(i + 2, i + 6)
      if (!/^[0-9a-fA-F]*$/.test(hex)) return { value, end: undefined, bad: true }
      if (hex.length < 4) return { value, end: undefined, bad: false }
      value += String.fromCharCode(parseInt(hex, 16))
      i += 6
    } else if (escapes[e] !== undefined) {
      value += escapes[e]
      i += 2
    } else return { value, end: undefined, bad: true }
  }
  return { value, end: undefined, bad: false }
}

/** The parser's state: the text, where it stands, the open containers and the value read. */
class Parser {
  i = 0
  readonly stack: Array<Frame> = []
  root: { value: unknown } | undefined

  constructor(readonly text: string, readonly complete: boolean) {}

  private skipSpace(): void {
    while (this.i < this.text.length && " \t\n\r".includes(this.text[this.i]!)) this.i++
  }

  /** Puts a value in the innermost open container (or makes it the root). */
  private put(value: unknown): void {
    const top = this.stack[this.stack.length - 1]
    if (top === undefined) this.root = { value }
    else if ("array" in top) top.array.push(value)
    else {
      Object.defineProperty(top.object, top.key!, { value, writable: true, enumerable: true, configurable: true })
      top.key = undefined
    }
  }

  /** Reads one value at `i`; `false` when the text stops (or turns malformed) inside it. */
  private value(): boolean {
    const { text } = this
    const c = text[this.i]!
    if (c === "{" || c === "[") {
      if (this.stack.length >= maxJsonDepth) return false
      const frame: Frame = c === "{" ? { object: {}, key: undefined } : { array: [] }
      this.put("array" in frame ? frame.array : frame.object)
      this.stack.push(frame)
      this.i++
      return true
    }
    if (c === "\"") {
      const string = readString(text, this.i)
      if (string.end === undefined) {
        if (!string.bad) this.put(string.value)
        return false
      }
      this.put(string.value)
      this.i = string.end
      return true
    }
    for (const [literal, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(literal, this.i)) {
        this.put(value)
        this.i += literal.length
        return true
      }
      if (startsLiteral(text, this.i, literal)) return false
    }
    return this.number()
  }

  private number(): boolean {
    numberPattern.lastIndex = this.i
    const match = numberPattern.exec(this.text)
    const end = this.i + (match?.[0].length ?? 0)
    // Cut short ("1", "-", "1.", "1e") or still growing: a number counts once something follows it.
    if (end === this.text.length || (match === null && this.i === this.text.length - 1 && this.text[this.i] === "-")) {
      if (this.complete && match !== null) this.put(Number(match[0]))
      return false
    }
    if (match === null || numberChars.test(this.text[end]!)) return false
    this.put(Number(match[0]))
    this.i = end
    return true
  }

  /** In an object, before a key: reads the key and its colon; `false` when the text stops or is malformed. */
  private key(frame: Extract<Frame, { object: unknown }>): boolean {
    if (this.text[this.i] !== "\"") return false
    const key = readString(this.text, this.i)
    if (key.end === undefined) return false
    this.i = key.end
    this.skipSpace()
    if (this.text[this.i] !== ":") return false
    this.i++
    frame.key = key.value
    return true
  }

  /** After a value in a container: a comma (then the next key or value) or the closing bracket. */
  private after(frame: Frame): boolean {
    const c = this.text[this.i]
    if (c === ("array" in frame ? "]" : "}")) {
      this.stack.pop()
      this.i++
      return true
    }
    if (c !== ",") return false
    this.i++
    this.skipSpace()
    return "array" in frame || this.key(frame)
  }

  /** Reads as far as the text goes. */
  run(): void {
    const { text } = this
    let expectValue = true
    while (true) {
      this.skipSpace()
      if (this.i >= text.length) return
      const top = this.stack[this.stack.length - 1]
      if (expectValue) {
        const c = text[this.i]
        if (top !== undefined && this.justOpened(top) && c === ("array" in top ? "]" : "}")) {
          this.stack.pop()
          this.i++
          expectValue = false
          continue
        }
        if (top !== undefined && !("array" in top) && top.key === undefined) {
          if (!this.key(top)) return
          continue
        }
        if (!this.value()) return
        expectValue = this.stack[this.stack.length - 1] !== top
        continue
      }
      if (top === undefined) return
      if (!this.after(top)) return
      expectValue = this.stack[this.stack.length - 1] === top
    }
  }

  /** Whether nothing was read yet in this container (a closing bracket may come at once). */
  private justOpened(frame: Frame): boolean {
    return "array" in frame ? frame.array.length === 0 : frame.key === undefined && Object.keys(frame.object).length === 0
  }
}

/**
 * The value known so far of JSON text that may be cut short, or `undefined`
 * when nothing is known yet. `complete`: the text is whole (a number at its
 * very end is then complete too).
 */
export const parse = (text: string, complete = false): { readonly value: unknown } | undefined => {
  const parser = new Parser(text, complete)
  parser.run()
  return parser.root
}
