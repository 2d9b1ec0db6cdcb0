/**
 * Test support: capture what a program prints (through `Console` and the
 * `Terminal`) in one transcript, and drive `effect/cli` prompts with
 * scripted key presses through a mock `Terminal`.
 */
import type * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Terminal from "effect/Terminal"

/** Removes ANSI escape sequences (colours, cursor moves, erasing). */
export const stripAnsi = (text: string): string =>
  // eslint-disable-next-line no-control-regex
  text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[78]|\u0007/g, "")

/** A transcript that `Console` and `Terminal.display` write into. */
export interface Transcript {
  /** Everything printed so far, without ANSI codes. */
  readonly text: () => string
  /** Everything printed so far, ANSI codes included. */
  readonly raw: () => string
  readonly write: (text: string) => void
}

export const makeTranscript = (): Transcript => {
  const chunks: Array<string> = []
  return { text: () => stripAnsi(chunks.join("")), raw: () => chunks.join(""), write: (text) => void chunks.push(text) }
}

/**
 * What a terminal would show after printing `raw`: lines of text, with the
 * cursor moves and erasing the prompts use applied (cursor up, erase line,
 * erase below, go to a column); colours and other sequences are dropped.
 */
export const screenOf = (raw: string): ReadonlyArray<string> => {
  const lines: Array<string> = [""]
  let row = 0
  let column = 0
  const put = (char: string) => {
    const line = lines[row]!.padEnd(column)
    lines[row] = line.slice(0, column) + char + line.slice(column + 1)
    column++
  }
  // eslint-disable-next-line no-control-regex
  const tokens = raw.match(/\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[78]|[\s\S]/gu) ?? []
  for (const token of tokens) {
    if (token === "\n") {
      row++
      column = 0
      if (lines[row] === undefined) lines[row] = ""
    } else if (token === "\r") column = 0
    else if (token.startsWith("\u001b[")) {
      const command = token[token.length - 1]
      const n = Number(token.slice(2, -1)) || 0
      if (command === "A") row = Math.max(0, row - Math.max(n, 1))
      else if (command === "G") column = Math.max(n, 1) - 1
      else if (command === "K") lines[row] = n === 2 ? "" : lines[row]!.slice(0, column)
      else if (command === "J") {
        lines.splice(row + 1)
        lines[row] = lines[row]!.slice(0, column)
      }
    } else if (!token.startsWith("\u001b") && token !== "\u0007") put(token)
  }
  return lines.map((line) => line.trimEnd())
}

const format = (args: ReadonlyArray<unknown>): string =>
  args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" ") + "\n"

/** A `Console` writing into the transcript. */
export const consoleOf = (transcript: Transcript): Console.Console => {
  const line = (...args: ReadonlyArray<unknown>) => transcript.write(format(args))
  const noop = () => {}
  return {
    assert: noop,
    clear: noop,
    count: noop,
    countReset: noop,
    debug: line,
    dir: line,
    dirxml: line,
    error: line,
    group: noop,
    groupCollapsed: noop,
    groupEnd: noop,
    info: line,
    log: line,
    table: line,
    time: noop,
    timeEnd: noop,
    timeLog: noop,
    trace: line,
    warn: line
  }
}

/** Runs `effect` with its `Console` writing into the transcript. */
export const withConsole = (transcript: Transcript) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, Console.Console, consoleOf(transcript))

/** A key press for the mock terminal. */
export interface Key {
  readonly name: string
  readonly input?: string
  readonly ctrl?: boolean
  readonly meta?: boolean
  /** Pressed only once the transcript shows this text (a person typing in answer to what they see). */
  readonly after?: string
}

/** `keys`, pressed once the transcript shows `text` (the first of them waits; see `Key.after`). */
export const onceShown = (text: string, keys: ReadonlyArray<Key>): ReadonlyArray<Key> =>
  keys.map((key, i) => (i === 0 ? { ...key, after: text } : key))

/** Waits (up to 10 seconds, then dies) until the transcript shows `text`. */
const shown = (transcript: Transcript, text: string): Effect.Effect<void> =>
  Effect.suspend(() => (transcript.text().includes(text) ? Effect.void : Effect.andThen(Effect.sleep("2 millis"), shown(transcript, text)))).pipe(
    Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.die(new Error(`the transcript never showed ${JSON.stringify(text)}`)) })
  )

/** Key presses typing `text` (one per character). */
export const typed = (text: string): ReadonlyArray<Key> => [...text].map((char) => ({ name: char, input: char }))

export const enter: Key = { name: "return" }
export const down: Key = { name: "down" }
export const tab: Key = { name: "tab" }
/** Ctrl-U: clears a text prompt's line. */
export const clearLine: Key = { name: "u", ctrl: true }

/**
 * A Ctrl chord as Node's readline reports it (what `NodeTerminal` passes on): the key's name with
 * `ctrl`, and its control character as the input (Ctrl-U is "\u0015").
 */
export const ctrl = (name: string): Key => ({ name, ctrl: true, input: String.fromCharCode(name.charCodeAt(0) - 96) })

/** An Alt (meta) chord or an escape-sequence key (Delete, arrows) as readline reports it: a name and no input. */
export const meta = (name: string): Key => ({ name, meta: true })
export const backspace = (times: number): ReadonlyArray<Key> => Array.from({ length: times }, () => ({ name: "backspace" }))

/**
 * A mock terminal: prompts read the given key presses in order (whichever
 * prompt is showing takes the next one); when they run out the input ends,
 * as when the person presses Ctrl-C. Output goes to the transcript.
 */
export const terminalLayer = (transcript: Transcript, keys: ReadonlyArray<Key>): Layer.Layer<Terminal.Terminal> =>
  Layer.effect(
    Terminal.Terminal,
    Effect.gen(function*() {
      const input = yield* Queue.make<Terminal.UserInput, Cause.Done>()
      const press = (key: Key): Terminal.UserInput => ({
        input: Option.fromUndefinedOr(key.input),
        key: { name: key.name, ctrl: key.ctrl ?? false, meta: key.meta ?? false, shift: false }
      })
      // Keys that wait for the screen are pressed by a fiber of the layer, in order; the others at once.
      const feed = Effect.gen(function*() {
        for (const key of keys) {
          if (key.after !== undefined) yield* shown(transcript, key.after)
          yield* Queue.offer(input, press(key))
        }
        yield* Queue.end(input)
      })
      if (keys.some((key) => key.after !== undefined)) yield* Effect.forkScoped(feed)
      else yield* feed
      return Terminal.make({
        columns: Effect.succeed(120),
        rows: Effect.succeed(40),
        size: Queue.make<Terminal.Size, Cause.Done>(),
        readInput: Effect.succeed(input),
        readLine: Effect.fail(new Terminal.QuitError({})),
        display: (text) => Effect.sync(() => transcript.write(text))
      })
    })
  )

/** The transcript's `Console` and a terminal that only displays (no input). */
export const outputLayer = (transcript: Transcript): Layer.Layer<Terminal.Terminal> =>
  Layer.merge(terminalLayer(transcript, []), Layer.succeed(Console.Console, consoleOf(transcript)))
