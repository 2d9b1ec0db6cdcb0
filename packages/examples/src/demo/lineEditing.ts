/**
 * Terminal line editing for the demo's text prompts. `effect/cli`'s text
 * prompt moves the cursor (arrows, Home, End, Ctrl-A, Ctrl-E), deletes back
 * (Backspace) and clears the line (Ctrl-U); `withLineEditing` keeps its
 * rendering, validation and those keys, and adds the rest of a shell's line
 * editing, as `node:readline` binds them: Ctrl-W and Alt-Backspace delete the
 * word before the cursor, Ctrl-K deletes to the end, Delete (and Ctrl-D on a
 * non-empty line) deletes forward, Alt-D deletes the next word, Ctrl-B /
 * Ctrl-F and Alt-B / Alt-F move by a character and by a word. Whatever else
 * arrives, no control character is ever inserted into the input: a chord with
 * no edit beeps, and typed or pasted text is inserted without its control
 * characters.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Prompt from "effect/cli/Prompt"
import type * as Terminal from "effect/Terminal"

/** The actions a prompt's `process` returns. */
const Action = Data.taggedEnum<Prompt.ActionDefinition>()

/** A text prompt's state: its value, the cursor in it, the validation error shown. */
export interface LineState {
  readonly value: string
  readonly cursor: number
  readonly error: Option.Option<string>
}

/** What one key does to a line: a new line, or `undefined` when the key is not an edit of this module's. */
type Edit = (state: LineState) => LineState

const at = (state: LineState, value: string, cursor: number): LineState => ({
  ...state,
  value,
  cursor: Math.max(0, Math.min(cursor, value.length)),
  error: Option.none()
})

/** Where the word before `cursor` starts (spaces before the cursor skipped, as readline's Ctrl-W). */
export const wordStart = (value: string, cursor: number): number => {
  let i = cursor
  while (i > 0 && /\s/.test(value[i - 1]!)) i--
  while (i > 0 && !/\s/.test(value[i - 1]!)) i--
  return i
}

/** Where the word after `cursor` ends (spaces after the cursor skipped). */
export const wordEnd = (value: string, cursor: number): number => {
  let i = cursor
  while (i < value.length && /\s/.test(value[i]!)) i++
  while (i < value.length && !/\s/.test(value[i]!)) i++
  return i
}

const deleteWordBack: Edit = (s) => {
  const start = wordStart(s.value, s.cursor)
  return at(s, s.value.slice(0, start) + s.value.slice(s.cursor), start)
}
const deleteWordForward: Edit = (s) => at(s, s.value.slice(0, s.cursor) + s.value.slice(wordEnd(s.value, s.cursor)), s.cursor)
const deleteToEnd: Edit = (s) => at(s, s.value.slice(0, s.cursor), s.cursor)
const deleteForward: Edit = (s) => at(s, s.value.slice(0, s.cursor) + s.value.slice(s.cursor + 1), s.cursor)
const left: Edit = (s) => at(s, s.value, s.cursor - 1)
const right: Edit = (s) => at(s, s.value, s.cursor + 1)
const wordLeft: Edit = (s) => at(s, s.value, wordStart(s.value, s.cursor))
const wordRight: Edit = (s) => at(s, s.value, wordEnd(s.value, s.cursor))

/** The edit of a key this module binds (those `effect/cli` already binds are left to it). */
export const editOf = (key: Terminal.UserInput["key"], state: LineState): Edit | undefined => {
  if (key.ctrl) {
    switch (key.name) {
      case "w":
        return deleteWordBack
      case "k":
        return deleteToEnd
      case "d":
        return state.value === "" ? undefined : deleteForward
      case "b":
        return left
      case "f":
        return right
      default:
        return undefined
    }
  }
  if (key.meta) {
    switch (key.name) {
      case "backspace":
        return deleteWordBack
      case "d":
        return deleteWordForward
      case "b":
      case "left":
        return wordLeft
      case "f":
      case "right":
        return wordRight
      default:
        return undefined
    }
  }
  return key.name === "delete" ? deleteForward : undefined
}

/** The keys `effect/cli`'s text prompt edits with itself (and submits on). */
const libraryKeys = new Set(["backspace", "left", "right", "home", "end", "enter", "return", "tab"])
const libraryCtrl = new Set(["u", "a", "e"])

/** Control characters (C0, DEL, C1): never part of a typed line. */
// eslint-disable-next-line no-control-regex
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/g

/** `text` without its control characters. */
export const printable = (text: string): string => text.replace(controlCharacters, "")

const isLineState = (state: unknown): state is LineState =>
  typeof state === "object" && state !== null && typeof (state as LineState).value === "string" &&
  typeof (state as LineState).cursor === "number" && Option.isOption((state as LineState).error)

/** The handlers of a prompt built by `Prompt.Custom` (`effect/cli` keeps them on the prompt). */
interface Loop {
  readonly _tag: "Loop"
  readonly initialState: unknown
  readonly render: Prompt.Handlers<LineState, string>["render"]
  readonly process: Prompt.Handlers<LineState, string>["process"]
  readonly clear: Prompt.Handlers<LineState, string>["clear"]
}

const isLoop = (prompt: unknown): prompt is Loop =>
  typeof prompt === "object" && prompt !== null && (prompt as Loop)._tag === "Loop" &&
  typeof (prompt as Loop).process === "function" && typeof (prompt as Loop).render === "function"

/**
 * `prompt` (a `Prompt.String`) with the line editing above: its own rendering, validation and keys
 * kept, the missing edits added, control characters never inserted.
 */
export const withLineEditing = (prompt: Prompt.Prompt<string>): Prompt.Prompt<string> => {
  if (!isLoop(prompt)) return prompt
  const base = prompt
  return Prompt.Custom<LineState, string>(base.initialState as LineState, {
    render: base.render,
    clear: base.clear,
    process: (input, state) => {
      if (!isLineState(state)) return base.process(input, state)
      const edit = editOf(input.key, state)
      if (edit !== undefined) return Effect.succeed(Action.NextFrame({ state: edit(state) }))
      if (input.key.ctrl ? libraryCtrl.has(input.key.name) : !input.key.meta && libraryKeys.has(input.key.name)) {
        return base.process(input, state)
      }
      // Anything else inserts its text without control characters (a chord with no edit: nothing).
      const text = input.key.ctrl || input.key.meta ? "" : printable(Option.getOrElse(input.input, () => ""))
      if (text === "") return Effect.succeed(Action.Beep())
      return base.process({ ...input, input: Option.some(text) }, state)
    }
  })
}
