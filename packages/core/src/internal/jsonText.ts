/**
 * JSON text read the one way every reader reads it. `JSON.parse` keeps the
 * last value of a key given twice (`{"amount":1,"amount":1000000}` is a
 * million), while a person, a policy or a model reading the text sees the
 * first: a key given twice is the one thing in valid JSON that readers
 * disagree on. `parse` refuses it; `canonical` rewrites such text as the one
 * text of the value it decodes to.
 *
 * The scan for repeated keys never throws and never recurses: one loop over
 * the text with an explicit stack, at most `maxJsonDepth` levels deep; keys are
 * compared as decoded (`"a"` and `"\u0061"` are the same key).
 *
 * Values go the other way through `toStoredJson`: what a tool or a provider gave, as the plain
 * JSON the conversation stores, or why JSON cannot hold it.
 *
 * @internal
 */
import * as Result from "effect/Result"
import { jsonProblem, maxArgumentChars, maxJsonDepth } from "./schema.js"
import type { ToolCallPart } from "./schema.js"

/** An open container while scanning: an object (its keys so far, the current one) or an array (the current index). */
type Frame =
  | { readonly object: true; first: string | undefined; keys: Set<string> | undefined; key: string | undefined; expectKey: boolean }
  | { readonly object: false; index: number }

/** A string token (valid JSON: every backslash escapes one character, which the regex skips). */
const stringToken = /"(?:[^"\\]|\\.)*"/y

/** A run of characters that are neither strings nor structure (numbers, literals, white space). */
const plain = /[^"{}[\],:]+/y

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** The path of the container on top of the stack: `$`, `$.a`, `$["a b"][0]`… */
const pathOf = (stack: ReadonlyArray<Frame>): string => {
  let path = "$"
  for (let i = 0; i < stack.length - 1; i++) {
    const frame = stack[i]!
    if (!frame.object) path += `[${frame.index}]`
    else if (frame.key !== undefined) path += identifier.test(frame.key) ? `.${frame.key}` : `[${JSON.stringify(frame.key)}]`
  }
  return path
}

/** A key's string token decoded: the text between the quotes when it escapes nothing (no JSON.parse). */
const keyOf = (token: string): string => (token.includes("\\") ? JSON.parse(token) as string : token.slice(1, -1))

/**
 * Whether an object's key was given before, noting it: the first key is kept alone, the set of
 * keys made at the second (most arguments' objects have one key or none).
 */
const isRepeated = (frame: Extract<Frame, { readonly object: true }>, key: string): boolean => {
  if (frame.first === undefined) {
    frame.first = key
    return false
  }
  if (frame.keys === undefined) {
    if (frame.first === key) return true
    frame.keys = new Set([frame.first, key])
    return false
  }
  if (frame.keys.has(key)) return true
  frame.keys.add(key)
  return false
}

/** What the scan found: a key given twice (and where), nesting past the limit, or neither. */
type Finding =
  | { readonly _tag: "Duplicate"; readonly key: string; readonly path: string }
  | { readonly _tag: "TooDeep" }
  | undefined

/** Scans JSON text that `JSON.parse` accepted for a key given twice in one object, or nesting past `maxJsonDepth`. */
const scan = (text: string): Finding => {
  const stack: Array<Frame> = []
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    const top = stack[stack.length - 1]
    if (c === "{" || c === "[") {
      if (stack.length >= maxJsonDepth) return { _tag: "TooDeep" }
      stack.push(c === "{" ? { object: true, first: undefined, keys: undefined, key: undefined, expectKey: true } : { object: false, index: 0 })
      i++
    } else if (c === "}" || c === "]") {
      stack.pop()
      i++
    } else if (c === ",") {
      if (top !== undefined) {
        if (!top.object) top.index++
        else top.expectKey = true
      }
      i++
    } else if (c === "\"") {
      stringToken.lastIndex = i
      const token = stringToken.exec(text)
      // Not a string token: the text is not JSON after all; `JSON.parse` said otherwise, so stop here.
      if (token === null) return undefined
      if (top !== undefined && top.object && top.expectKey) {
        const key = keyOf(token[0])
        if (isRepeated(top, key)) return { _tag: "Duplicate", key, path: pathOf(stack) }
        top.key = key
        top.expectKey = false
      }
      i += token[0].length
    } else if (c === ":") {
      i++
    } else {
      plain.lastIndex = i
      const run = plain.exec(text)
      i += run === null ? 1 : run[0].length
    }
  }
  return undefined
}

/** The scan of text `JSON.parse` accepted; never throws (a scan that fails says nothing). */
const findingOf = (text: string): Finding => {
  try {
    return scan(text)
  } catch {
    return undefined
  }
}

const tooDeep = `nests deeper than ${maxJsonDepth} levels`

/**
 * Parses JSON text into plain data, refusing what readers would disagree on or
 * what cannot be stored: a key given twice in one object (at any depth), a
 * `"__proto__"` key, nesting past `maxJsonDepth`. The failure says why, with
 * the path (`the key "amount" appears twice in $`). Never throws.
 */
export const parse = (text: string): Result.Result<unknown, string> => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return Result.fail(`not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  const finding = findingOf(text)
  if (finding?._tag === "Duplicate") {
    return Result.fail(`the key ${JSON.stringify(finding.key)} appears twice in ${finding.path}: readers of the text would disagree on its value`)
  }
  if (finding?._tag === "TooDeep") return Result.fail(`$ ${tooDeep}`)
  const problem = jsonProblem(value)
  return problem === undefined ? Result.succeed(value) : Result.fail(problem)
}

/**
 * The canonical text of JSON text that gives a key twice: `JSON.stringify` of
 * what `JSON.parse` makes of it (the last value of each key, in the order the
 * keys first appear), so that everyone who reads it sees the value a handler
 * gets. `undefined` when the text needs no rewriting: it gives no key twice,
 * or it is not JSON (or nests too deep) and is refused wherever it is read.
 */
export const canonical = (text: string): string | undefined => {
  // The scan first: text that gives no key twice (nearly all) is never parsed here at all.
  if (findingOf(text)?._tag !== "Duplicate") return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  return Result.getOrUndefined(Result.try(() => JSON.stringify(value)))
}

/**
 * A tool call of a model's response as it enters the state: arguments that
 * give a key twice are replaced by their canonical text (what the handler
 * gets), the text as sent kept in `rawArguments` for audit. So the person, the
 * policy, the model's history and the handler all read one value. A call
 * already made canonical stays as it is; a `rawArguments` that is not the text
 * its `arguments` were made from (a response that claims one) is dropped.
 */
export const canonicalCall = (part: ToolCallPart): ToolCallPart => {
  // Past the limit the call is refused as it is (`argumentsLengthProblem`): no scan, no second copy.
  const tooLong = part.arguments.length > maxArgumentChars
  const text = tooLong ? undefined : canonical(part.arguments)
  if (text !== undefined) return { ...part, arguments: text, rawArguments: part.arguments }
  if (part.rawArguments === undefined || (!tooLong && canonical(part.rawArguments) === part.arguments)) return part
  const { rawArguments: _, ...rest } = part
  return rest
}

/** The JSON a value is stored as: written and read back (`undefined` fields dropped), or why it cannot be stored. */
export const toStoredJson = (value: unknown): Result.Result<unknown, string> => {
  // Most values already are plain JSON data: one walk, no copy (`undefined` at the top is stored as null).
  if (value === undefined) return Result.succeed(null)
  if (jsonProblem(value) === undefined) return Result.succeed(value)
  let json: unknown
  try {
    const text = JSON.stringify(value)
    json = text === undefined ? null : JSON.parse(text)
  } catch (error) {
    return Result.fail(`it cannot be written as JSON (${(error as Error).message})`)
  }
  const problem = jsonProblem(json)
  return problem === undefined ? Result.succeed(json) : Result.fail(`it cannot be stored as JSON (${problem})`)
}
