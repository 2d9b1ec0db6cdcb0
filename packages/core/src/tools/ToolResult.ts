/**
 * Tool results with a size: every call's result (or failure) is cut to a
 * number of characters of the text the model reads, so that one call cannot
 * fill the next model request or the stored conversation.
 *
 * The cap of a call is its tool's `maxResultChars` (`Tool.make`), else its
 * toolkit's (`Toolkit.withMaxResultChars`), else `defaultMaxChars` (50,000
 * characters, about 12,500 tokens: where Claude Code keeps an MCP result
 * aside instead of sending it). A result whose text is longer is cut to it,
 * with a marker the model reads saying how much was cut and how the rest can
 * be had: when one string of it holds what is too much (a file's text), that
 * string is cut in place and the result keeps its shape; otherwise it is
 * recorded as the first characters of its text, then the marker. The stored
 * state holds only that. The full result goes to the application's `Store`,
 * when it gives one (a database, a bucket, a folder): the reference it returns
 * is named in the marker. Without one, the rest is dropped.
 *
 * The files a result carries (a tool's `splitFiles`, an MCP server's images)
 * have a size too: at most `maxResultFileBytes` bytes of them as stored (the
 * tool's, else its toolkit's `Toolkit.withMaxResultFileBytes`, else
 * `defaultMaxFileBytes`, 5 MiB) and at most `maxFiles` files per call. The
 * files are kept in order while they fit; each one from the first that does
 * not is left out of the state and the request, and replaced by a note the
 * model reads (its media type, name and size, the limit, where it is kept):
 * the files kept keep their indexes, so a result's mentions of them stay true.
 * The `Store` is given the full result with all its files.
 *
 * The cut is made where a handler's result is encoded (the one place every
 * shell, `Chat`, `Worker.resume` and the workflow, records results through):
 * the reducer is never given more. A shell driving `Turn.step` by hand cuts
 * with `cut` and `cutFiles` itself.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { FilePart } from "../turn/Messages.js"
import * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * The cap when neither the tool nor its toolkit gives one: 50,000 characters of the text the model reads.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaultMaxChars = 50_000

/**
 * The longest marker `cut` appends (the reference it names is shortened to fit).
 *
 * @category constants
 * @since 0.3.0
 */
export const markerMaxChars = 400

/** The longest reference a marker names in full (longer ones are shortened, ending in `…`). */
const maxRefChars = 200

/**
 * A cap as given (`Tool.make`, `Toolkit.withMaxResultChars`, an MCP server's metadata): a whole number ≥ 0, `Infinity` for none; anything else is not a cap.
 *
 * @category guards
 * @since 0.3.0
 */
export const isMaxChars: (value: unknown) => value is number = Tool.isMaxChars

/**
 * The cap of a call of `tool` in `kit`: the tool's own, else the toolkit's, else `defaultMaxChars`.
 *
 * @category utils
 * @since 0.3.0
 */
export const maxCharsOf = (tool: Tool.Any, kit?: Pick<Toolkit.Any, "resultLimits">): number =>
  tool.maxResultChars ?? kit?.resultLimits?.get(tool.name) ?? defaultMaxChars

/**
 * The cap on the files of one call's result when neither the tool nor its toolkit gives one: 5 MiB
 * (5,242,880 bytes as stored, base64). Anthropic refuses an image over 5 MB (counted on its base64),
 * the strictest of the APIs chat-ts sends files to (OpenAI takes 50 MB a request, Gemini 20 MB of
 * inline data): so the files of one call fit in a request to any of them.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaultMaxFileBytes = 5 * 1024 * 1024

/**
 * The most files one call's result carries, whatever their size: 100 (the most images Anthropic takes in one request).
 *
 * @category constants
 * @since 0.3.0
 */
export const maxFiles = 100

/**
 * The cap on the files of a call of `tool` in `kit`, in bytes: the tool's own, else the toolkit's, else `defaultMaxFileBytes`.
 *
 * @category utils
 * @since 0.3.0
 */
export const maxFileBytesOf = (tool: Tool.Any, kit?: Pick<Toolkit.Any, "resultFileLimits">): number =>
  tool.maxResultFileBytes ?? kit?.resultFileLimits?.get(tool.name) ?? defaultMaxFileBytes

/**
 * How many bytes a file takes as stored: its part as JSON (its base64 data or URL, media type and name).
 *
 * @category utils
 * @since 0.3.0
 */
export const fileBytes = (file: FilePart): number => JSON.stringify(file).length

/**
 * How many of `files`, from the first, fit in `maxFileBytes` (and `maxFiles`): the rest are left out.
 *
 * @category utils
 * @since 0.3.0
 */
export const filesThatFit = (files: ReadonlyArray<FilePart>, maxFileBytes: number): number => {
  let used = 0
  for (let index = 0; index < files.length; index++) {
    if (index >= maxFiles) return index
    used += fileBytes(files[index]!)
    if (used > maxFileBytes) return index
  }
  return files.length
}

/**
 * The key under which an object result lists the notes of its files left out (see `cutFiles`).
 *
 * @category constants
 * @since 0.3.0
 */
export const filesNotShownKey = "filesNotShown"

/** The longest media type or file name a note names in full. */
const maxNameChars = 100

/** `text` as a JSON string of at most about `maxNameChars` characters (ending in `…` when shortened). */
const quoted = (text: string): string => {
  const fits = prefixLength(text, maxNameChars, true)
  return JSON.stringify(fits === text.length ? text : `${text.slice(0, prefixLength(text, maxNameChars - 1, true))}…`)
}

/**
 * What `fileNote` says about a file left out.
 *
 * @category models
 * @since 0.3.0
 */
export interface FileNote {
  /** Its index among the result's files. */
  readonly index: number
  readonly file: FilePart
  /** The cap on the result's files, in bytes. */
  readonly maxFileBytes: number
  /** Where the application keeps the full result (its `Store`'s reference), if it kept it. */
  readonly kept?: string | undefined
}

/**
 * The longest a note of a file (or of the files) left out is as the model reads it, JSON escaping included.
 *
 * @category constants
 * @since 0.3.0
 */
export const noteMaxChars = 1_000

/**
 * The note the model reads in place of a file left out (at most `noteMaxChars`, escaped).
 *
 * @category utils
 * @since 0.3.0
 */
export const fileNote = (note: FileNote): string => {
  const { file, index } = note
  const name = file.filename === undefined ? "" : ` ${quoted(file.filename)}`
  const why = index >= maxFiles
    ? `over the limit of ${count(maxFiles)} files in one result`
    : `over the limit of ${count(note.maxFileBytes)} bytes of files in one result`
  const kept = note.kept === undefined ? undefined : prefixLength(note.kept, maxRefChars, true) === note.kept.length
    ? note.kept
    : `${note.kept.slice(0, prefixLength(note.kept, maxRefChars - 1, true))}…`
  const where = kept === undefined
    ? "It was not kept: ask the tool for a smaller one (a part, a lower resolution) if you need it."
    : `The application keeps it with the full result as ${JSON.stringify(kept)}.`
  return `[chat-ts: file ${index} (${quoted(file.mediaType)}${name}, ${count(fileBytes(file))} bytes) not shown: ${why}. ${where}]`
}

/**
 * A result's files cut to their cap: what is recorded.
 *
 * @category models
 * @since 0.3.0
 */
export interface FileCut {
  /** The result with a note for each file left out (see `cutFiles`). */
  readonly value: unknown
  /** The files kept: the first ones, that fit. */
  readonly files: ReadonlyArray<FilePart>
}

/** `value` (`isError`: a failure) with `notes` added where the model reads them. */
const withNotes = (value: unknown, notes: ReadonlyArray<string>, isError: boolean): unknown => {
  if (typeof value === "string") return `${value}\n${notes.join("\n")}`
  if (typeof value === "object" && value !== null && !Array.isArray(value) && !Object.hasOwn(value, filesNotShownKey)) {
    return { ...value, [filesNotShownKey]: notes }
  }
  const text = isError ? JSON.stringify(value) ?? "null" : modelText(value, false)
  return `${text}\n${notes.join("\n")}`
}

/**
 * A result's (`isError`: a failure's) files cut to `maxFileBytes` (and `maxFiles`): the first files
 * while they fit are kept, with their indexes; each other one is left out and a note names it
 * (`fileNote`: its type, name, size, the limit, and `kept`, where the application keeps it). The
 * notes go after a string result's text, in an object result's `filesNotShown` list (its other keys
 * as they are), else after the result's JSON text (it becomes a string): a note each for the first
 * `maxNotes` files left out, one for the others. `undefined` when all fit.
 *
 * @category utils
 * @since 0.3.0
 */
export const cutFiles = (
  value: unknown,
  files: ReadonlyArray<FilePart>,
  options: { readonly maxFileBytes: number; readonly isError?: boolean | undefined; readonly kept?: string | undefined }
): FileCut | undefined => {
  const fit = filesThatFit(files, options.maxFileBytes)
  if (fit === files.length) return undefined
  const left = files.slice(fit)
  const notes = left.slice(0, maxNotes).map((file, offset) =>
    fileNote({ index: fit + offset, file, maxFileBytes: options.maxFileBytes, kept: options.kept })
  )
  if (left.length > maxNotes) notes.push(restNote(fit + maxNotes, left.slice(maxNotes), options.maxFileBytes, options.kept))
  return { value: withNotes(value, notes, options.isError === true), files: files.slice(0, fit) }
}

/**
 * The most files left out that get a note each; the others share one (so the notes take at most about 7,000 characters).
 *
 * @category constants
 * @since 0.3.0
 */
export const maxNotes = 10

/** The one note of the files left out from index `from` on, past the first `maxNotes`. */
const restNote = (from: number, rest: ReadonlyArray<FilePart>, maxFileBytes: number, kept: string | undefined): string => {
  const bytes = rest.reduce((sum, file) => sum + fileBytes(file), 0)
  const where = kept === undefined
    ? "They were not kept."
    : `The application keeps them with the full result as ${JSON.stringify(prefixLength(kept, maxRefChars, true) === kept.length ? kept : `${kept.slice(0, prefixLength(kept, maxRefChars - 1, true))}…`)}.`
  return `[chat-ts: files ${count(from)} to ${count(from + rest.length - 1)} (${count(bytes)} bytes in all) not shown: over the limit of ${count(maxFileBytes)} bytes or ${count(maxFiles)} files in one result. ${where}]`
}

/**
 * The text the model reads for a result (`isError`: a failure, which it reads as `{"error": …}`).
 *
 * @category utils
 * @since 0.3.0
 */
export const modelText = (value: unknown, isError: boolean): string => {
  const shown = isError ? { error: value } : value
  return typeof shown === "string" ? shown : JSON.stringify(shown) ?? "null"
}

/** How many characters the UTF-16 unit `code` takes inside a JSON string, when it is not half of a surrogate pair. */
const escapedLength = (code: number): number =>
  code === 0x22 || code === 0x5c || code === 0x08 || code === 0x0c || code === 0x0a || code === 0x0d || code === 0x09
    ? 2
    : code < 0x20 || (code >= 0xd800 && code <= 0xdfff)
    // Other control characters, and a lone surrogate (`JSON.stringify` writes both as `\uXXXX`).
    ? 6
    : 1

/** Whether `code` is the first half of a surrogate pair (a cut after it would split a character). */
const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/** Whether `code` is the second half of a surrogate pair. */
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/**
 * How many leading units of `text` fit in `budget` characters: as they are, or (`escaped`) inside a
 * JSON string; never ending inside a surrogate pair.
 */
const prefixLength = (text: string, budget: number, escaped: boolean): number => {
  if (!escaped) {
    const end = Math.min(text.length, budget)
    return end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))
      ? end - 1
      : end
  }
  let end = 0
  let used = 0
  while (end < text.length) {
    const code = text.charCodeAt(end)
    // A pair is written as it is (two units); half of one alone is escaped.
    const pair = isHighSurrogate(code) && end + 1 < text.length && isLowSurrogate(text.charCodeAt(end + 1))
    const size = pair ? 2 : escapedLength(code)
    if (used + size > budget) break
    used += size
    end += pair ? 2 : 1
  }
  return end
}

/** A number with thousands separators (the marker is read by a model and by people). */
const count = (n: number): string => n.toLocaleString("en-US")

/**
 * What `marker` says about a cut.
 *
 * @category models
 * @since 0.3.0
 */
export interface Marker {
  /** How many characters of the text the model is shown. */
  readonly shown: number
  /** How many characters the whole text had. */
  readonly chars: number
  /** The cap that cut it. */
  readonly maxChars: number
  /** Where the application keeps the full result (its `Store`'s reference), if it kept it. */
  readonly kept?: string | undefined
}

/**
 * The text appended to a cut result: how much was cut, and how the full result can be had (at most `markerMaxChars`).
 *
 * @category utils
 * @since 0.3.0
 */
export const marker = (cut: Marker): string => {
  // The reference is named as a JSON string: at most `maxRefChars` characters as written.
  const fits = cut.kept === undefined ? 0 : prefixLength(cut.kept, maxRefChars, true)
  const ref = cut.kept === undefined
    ? undefined
    : fits === cut.kept.length
    ? cut.kept
    : `${cut.kept.slice(0, prefixLength(cut.kept, maxRefChars - 1, true))}…`
  const where = ref === undefined
    ? "The rest was not kept: call the tool again asking for less (a part, a page, a filter) if you need more."
    : `The full result is kept by the application as ${JSON.stringify(ref)}; ask for a part of it if you need more.`
  return `\n[chat-ts cut this result: shown ${count(cut.shown)} of ${count(cut.chars)} characters (the limit is ${count(cut.maxChars)}). ${where}]`
}

/**
 * A result cut to its cap: what is recorded, and how long its text was.
 *
 * @category models
 * @since 0.3.0
 */
export interface Cut {
  /**
   * What the conversation records: the result with its longest string cut and the marker at its end
   * (when that string alone holds what is too much: a file's text), else the first characters of its
   * text, then the marker (a string).
   */
  readonly value: unknown
  /** How many characters the whole text had. */
  readonly chars: number
}

/**
 * At most how many characters JSON writes `value` in (each string unit at most 6, a number at most
 * 25, as `-0.0000012345678901234567`), or more than `limit` as soon as that is sure: a walk that
 * writes nothing out.
 */
const boundOf = (value: unknown, limit: number): number => {
  switch (typeof value) {
    case "string":
      return 2 + 6 * value.length
    case "number":
      return 25
    case "boolean":
      return 5
    case "object": {
      if (value === null) return 4
      let size = 2
      if (Array.isArray(value)) {
        for (const item of value) {
          size += boundOf(item, limit - size) + 1
          if (size > limit) return size
        }
        return size
      }
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue
        size += 2 + 6 * key.length + 2 + boundOf((value as Record<string, unknown>)[key], limit - size)
        if (size > limit) return size
      }
      return size
    }
    default:
      return 4
  }
}

/**
 * Whether a result's text (see `modelText`) is longer than `maxChars`: written out only when a bound on it is not enough.
 *
 * @category utils
 * @since 0.3.0
 */
export const exceeds = (value: unknown, maxChars: number, isError: boolean): boolean => {
  if (maxChars === Number.POSITIVE_INFINITY) return false
  // A string's text is itself; a failure's is `{"error":…}` (10 more characters).
  if (typeof value === "string" && !isError) return value.length > maxChars
  if (boundOf(value, maxChars) + (isError ? 10 : 0) <= maxChars) return false
  return modelText(value, isError).length > maxChars
}

/**
 * A result (`isError`: a failure) cut to `maxChars` characters of the text the model reads, with the
 * marker (naming `kept`, where the application keeps the full result); `undefined` when it fits.
 * The model then reads at most `maxChars + markerMaxChars` characters (a failure's `{"error": …}`
 * and escaping included).
 *
 * @category utils
 * @since 0.3.0
 */
export const cut = (
  value: unknown,
  options: { readonly maxChars: number; readonly isError?: boolean | undefined; readonly kept?: string | undefined }
): Cut | undefined => {
  const isError = options.isError === true
  if (!exceeds(value, options.maxChars, isError)) return undefined
  return cutValue(value, measure(value, isError), options.maxChars, isError, options.kept)
}

/** Where a value's longest string is (the keys and indexes to it), and the string. */
interface Leaf {
  readonly path: ReadonlyArray<string | number>
  readonly text: string
}

const longestString = (value: unknown): Leaf | undefined => {
  let best: Leaf | undefined
  const walk = (node: unknown, path: ReadonlyArray<string | number>): void => {
    if (typeof node === "string") {
      if (best === undefined || node.length > best.text.length) best = { path, text: node }
    } else if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, [...path, index]))
    } else if (typeof node === "object" && node !== null) {
      for (const key of Object.keys(node)) walk((node as Record<string, unknown>)[key], [...path, key])
    }
  }
  walk(value, [])
  return best
}

/** A copy of `value` with `replacement` at `path` (copying only what lies on the way). */
const setAt = (value: unknown, path: ReadonlyArray<string | number>, replacement: string): unknown => {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((item, index) => (index === head ? setAt(item, rest, replacement) : item))
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value as object)) {
    const item = (value as Record<string, unknown>)[key]
    out[key] = key === head ? setAt(item, rest, replacement) : item
  }
  return out
}

/** How many characters `text` takes inside a JSON string. */
const jsonLength = (text: string): number => JSON.stringify(text).length - 2

/**
 * An object or array result cut inside its longest string, when that string alone holds what is too
 * much: the result keeps its shape (an MCP result stays `{ content: [{ type: "text", text }] }`), and
 * the marker ends the string. `undefined` when no one string can take the cut.
 */
const cutInside = (value: unknown, measured: Measured, maxChars: number, isError: boolean, kept: string | undefined): Cut | undefined => {
  const shownValue = isError ? { error: value } : value
  if (typeof shownValue !== "object" || shownValue === null) return undefined
  const leaf = longestString(shownValue)
  if (leaf === undefined) return undefined
  const total = measured.chars
  const length = jsonLength(leaf.text)
  // What the rest of the result takes; the string may take what is left of the cap.
  const rest = total - length
  const attempt = (budget: number) => {
    const units = prefixLength(leaf.text, budget, true)
    const prefix = leaf.text.slice(0, units)
    const mark = marker({ shown: rest + jsonLength(prefix), chars: total, maxChars, kept })
    return { prefix, mark, added: jsonLength(mark) - mark.length }
  }
  const budget = maxChars - rest
  if (budget < 0) return undefined
  let made = attempt(budget)
  if (made.added > 0) {
    // What escaping adds to the marker comes off the text shown.
    if (budget < made.added) return undefined
    made = attempt(budget - made.added)
  }
  const cut = setAt(shownValue, leaf.path, made.prefix + made.mark)
  return { value: isError ? (cut as { readonly error: unknown }).error : cut, chars: total }
}

const cutValue = (value: unknown, measured: Measured, maxChars: number, isError: boolean, kept: string | undefined): Cut =>
  cutInside(value, measured, maxChars, isError, kept) ?? cutMeasured(measured, maxChars, isError, kept)

/** A result's text as it is cut (a failure: its error, as the JSON string content it is shown as) and the length of what the model reads. */
interface Measured {
  readonly text: string
  readonly chars: number
}

const measure = (value: unknown, isError: boolean): Measured => {
  if (!isError) {
    const text = modelText(value, false)
    return { text, chars: text.length }
  }
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null"
  return { text, chars: modelText(value, true).length }
}

const cutMeasured = (measured: Measured, maxChars: number, isError: boolean, kept: string | undefined): Cut => {
  const { chars, text } = measured
  if (!isError) {
    const shown = prefixLength(text, maxChars, false)
    return { value: text.slice(0, shown) + marker({ shown, chars, maxChars, kept }), chars }
  }
  // A failure is shown inside `{"error":"…"}` (12 characters), its error escaped as a JSON string:
  // the marker too, so what escaping adds to it comes off the text shown.
  // `shown` counts what the model reads of it, in the same characters as `chars`.
  const shownOf = (units: number) => 12 + JSON.stringify(text.slice(0, units)).length - 2
  let units = prefixLength(text, Math.max(0, maxChars - 12), true)
  let mark = marker({ shown: shownOf(units), chars, maxChars, kept })
  const added = JSON.stringify(mark).length - 2 - mark.length
  if (added > 0) {
    units = prefixLength(text, Math.max(0, maxChars - 12 - added), true)
    mark = marker({ shown: shownOf(units), chars, maxChars, kept })
  }
  return { value: text.slice(0, units) + mark, chars }
}

/**
 * A result too long for the model (or whose files are over their cap), as the application's `Store` is given it.
 *
 * @category models
 * @since 0.3.0
 */
export interface FullResult {
  /** The call's id (unique within its conversation). */
  readonly id: string
  /** The call's tool. */
  readonly tool: string
  /** Whether it is a failure (the model reads it as `{"error": …}`). */
  readonly isError: boolean
  /** The result as it would have been recorded: the encoded JSON value. */
  readonly value: unknown
  /** How many characters the model would have read. */
  readonly chars: number
  /** The cap that cut it (or that it was within, when only its files were over theirs). */
  readonly maxChars: number
  /** All the files the result carries, as the tool gave them (absent when it carries none). */
  readonly files?: ReadonlyArray<FilePart> | undefined
  /** The cap on its files, in bytes (absent when it carries none). */
  readonly maxFileBytes?: number | undefined
}

/**
 * How long a `Store` may take to keep a full result: 30 seconds; past it the result counts as not kept and the turn goes on.
 *
 * @category constants
 * @since 0.3.0
 */
export const storeTimeout: Duration.Duration = Duration.seconds(30)

/**
 * Where full results too long for the model (or with files over their cap) go.
 *
 * @category models
 * @since 0.3.0
 */
export interface StoreService {
  /**
   * Keeps a full result and returns how it can be had (an id, a path, a URL: the marker names it), or
   * `undefined` when it is not kept. A failure, a defect, an interruption or no answer within
   * `storeTimeout` (30 seconds) counts as not kept; the turn goes on.
   */
  readonly keep: (full: FullResult) => Effect.Effect<string | undefined>
}

/**
 * The store of full results in use (optional: without one, what is cut is dropped).
 *
 * @category services
 * @since 0.3.0
 */
export class Store extends Context.Service<Store, StoreService>()("@chat-ts/core/ToolResult/Store") {}

/**
 * A layer providing a store of full results made from a function.
 *
 * @category layers
 * @since 0.3.0
 */
export const layerStore = (keep: StoreService["keep"]): Layer.Layer<Store> => Layer.succeed(Store, { keep })

/**
 * A store that keeps full results in memory, with `get` to read them back by reference (for tests and development: it grows without bound).
 *
 * @category constructors
 * @since 0.3.0
 */
export const makeMemoryStore: Effect.Effect<{ readonly store: StoreService; readonly get: (ref: string) => FullResult | undefined }> =
  Effect.sync(() => {
    const kept = new Map<string, FullResult>()
    return {
      store: {
        keep: (full) =>
          Effect.sync(() => {
            const ref = `tool-result:${kept.size + 1}:${full.id}`
            kept.set(ref, full)
            return ref
          })
      },
      get: (ref) => kept.get(ref)
    }
  })

/**
 * A result over its cap, cut: the full one given to `store` first (the chat's, else the `Store` in
 * the context the call runs in; none: not kept), so that the marker can name where it is; `undefined`
 * when the result is within its cap (as nearly every one is).
 *
 * @category utils
 * @since 0.3.0
 */
export const limit = (
  value: unknown,
  options: {
    readonly id: string
    readonly tool: string
    readonly maxChars: number
    readonly isError: boolean
    readonly store?: StoreService | undefined
  }
): Effect.Effect<unknown> | undefined => {
  const limited = limitResult(value, [], { ...options, maxFileBytes: Number.POSITIVE_INFINITY })
  return limited === undefined ? undefined : Effect.map(limited, (cut) => cut.value)
}

/**
 * A result and its files over their caps, cut: first its text to `maxChars` (`cut`), then its files
 * to `maxFileBytes` (`cutFiles`), whose notes are added to what is left (so none is cut away). The full result, with all its files, is given to
 * `store` first (the chat's, else the `Store` in the context the call runs in; none: not kept), so
 * that the marker and the notes can name where it is. `undefined` when both are within their caps (as
 * nearly every result is).
 *
 * @category utils
 * @since 0.3.0
 */
export const limitResult = (
  value: unknown,
  files: ReadonlyArray<FilePart>,
  options: {
    readonly id: string
    readonly tool: string
    readonly maxChars: number
    readonly maxFileBytes: number
    readonly isError: boolean
    readonly store?: StoreService | undefined
  }
): Effect.Effect<FileCut> | undefined => {
  const filesOver = filesThatFit(files, options.maxFileBytes) < files.length
  if (!filesOver && !exceeds(value, options.maxChars, options.isError)) return undefined
  const given = options.store
  const store = given === undefined
    ? Effect.map(Effect.serviceOption(Store), (found) => (found._tag === "Some" ? found.value : undefined))
    : Effect.succeed(given)
  return Effect.flatMap(store, (store) => {
    const measured = measure(value, options.isError)
    const chars = measured.chars
    const full: FullResult = {
      id: options.id,
      tool: options.tool,
      isError: options.isError,
      value,
      chars,
      maxChars: options.maxChars,
      ...(files.length === 0 ? {} : { files, maxFileBytes: options.maxFileBytes })
    }
    // A store that fails, dies, interrupts itself or does not answer in `storeTimeout` has not kept it:
    // the result is in hand, and waiting on would leave the call running (and lost to a crash).
    const keep = store === undefined
      ? Effect.succeed(undefined)
      : Effect.exit(Effect.timeoutOption(Effect.suspend(() => store.keep(full)), storeTimeout)).pipe(
        Effect.map((exit) =>
          exit._tag === "Success" && exit.value._tag === "Some" && typeof exit.value.value === "string" ? exit.value.value : undefined
        )
      )
    return Effect.map(keep, (kept): FileCut => {
      // The text first, so that the notes of the files left out are never cut away.
      const text = exceeds(value, options.maxChars, options.isError)
        ? cutValue(value, measured, options.maxChars, options.isError, kept).value
        : value
      return filesOver
        ? cutFiles(text, files, { maxFileBytes: options.maxFileBytes, isError: options.isError, kept })!
        : { value: text, files }
    })
  })
}
