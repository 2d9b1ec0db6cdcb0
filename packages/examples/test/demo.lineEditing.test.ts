/**
 * The demo's line editing, key by key (the interactive demo test drives the same keys through the
 * prompts): word bounds as readline's, each edit's result and cursor, control characters stripped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import * as LineEditing from "../src/demo/lineEditing.js"

const state = (value: string, cursor: number): LineEditing.LineState => ({ value, cursor, error: Option.some("old error") })
const key = (name: string, mods: { readonly ctrl?: boolean; readonly meta?: boolean } = {}) => ({
  name,
  ctrl: mods.ctrl ?? false,
  meta: mods.meta ?? false,
  shift: false
})

/** The line after one key (`undefined`: not an edit of this module's, left to effect/cli). */
const after = (k: ReturnType<typeof key>, s: LineEditing.LineState) => {
  const edit = LineEditing.editOf(k, s)
  return edit === undefined ? undefined : [edit(s).value, edit(s).cursor, Option.isNone(edit(s).error)] as const
}

describe("the demo's line editing", () => {
  it("finds word bounds as readline does (spaces next to the cursor skipped first)", () => {
    expect(LineEditing.wordStart("rm -rf  everything", 18)).toBe(8)
    expect(LineEditing.wordStart("rm -rf  ", 8)).toBe(3)
    expect(LineEditing.wordStart("", 0)).toBe(0)
    expect(LineEditing.wordEnd("what  is", 4)).toBe(8)
    expect(LineEditing.wordEnd("what", 4)).toBe(4)
  })

  it("each edit gives the line and the cursor a shell gives, and clears the shown error", () => {
    const line = "delete the old logs"
    expect(after(key("w", { ctrl: true }), state(line, 14))).toEqual(["delete the  logs", 11, true])
    expect(after(key("backspace", { meta: true }), state(line, 19))).toEqual(["delete the old ", 15, true])
    expect(after(key("k", { ctrl: true }), state(line, 10))).toEqual(["delete the", 10, true])
    expect(after(key("delete"), state(line, 0))).toEqual(["elete the old logs", 0, true])
    expect(after(key("delete"), state(line, 19))).toEqual([line, 19, true])
    expect(after(key("d", { ctrl: true }), state(line, 6))).toEqual(["deletethe old logs", 6, true])
    expect(after(key("d", { meta: true }), state(line, 6))).toEqual(["delete old logs", 6, true])
    expect(after(key("b", { meta: true }), state(line, 19))).toEqual([line, 15, true])
    expect(after(key("f", { meta: true }), state(line, 0))).toEqual([line, 6, true])
    expect(after(key("b", { ctrl: true }), state(line, 0))).toEqual([line, 0, true])
    expect(after(key("f", { ctrl: true }), state(line, 19))).toEqual([line, 19, true])
  })

  it("leaves effect/cli's own keys to it, and Ctrl-D on an empty line (no edit)", () => {
    for (const k of [key("u", { ctrl: true }), key("a", { ctrl: true }), key("left"), key("home"), key("backspace"), key("return")]) {
      expect(after(k, state("abc", 1))).toBeUndefined()
    }
    expect(after(key("d", { ctrl: true }), state("", 0))).toBeUndefined()
  })

  it("strips every control character (C0, DEL, C1) from text to insert", () => {
    expect(LineEditing.printable("a\u0000b\u001bc\u007fd\u009be\tf\u0015")).toBe("abcdef")
    expect(LineEditing.printable("héllo ✓")).toBe("héllo ✓")
  })
})
