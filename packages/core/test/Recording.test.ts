/**
 * `turn/Recording.ts`: what a handler's outcome becomes in the conversation, whatever the shell.
 * A result JSON cannot hold is refused with the reason (the shell fails the call as a defect); a
 * failure JSON cannot hold reaches the model as text; values JSON can hold once written and read
 * back (a `Date`, a field set to `undefined`, `NaN` as `null`) are stored as that JSON.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Recording from "../src/turn/Recording.js"
import * as Turn from "../src/turn/Turn.js"

describe("Recording: a handler's result as the conversation stores it", () => {
  it("stores a plain result as it is, with its files", () => {
    const files = [{ _tag: "File" as const, mediaType: "image/png", data: { _tag: "Base64" as const, base64: "iVBORw0KGgo=" } }]
    const recorded = Recording.success("c1", { ok: true }, files)
    expect(recorded).toStrictEqual(Result.succeed(Turn.Event.ToolSucceeded({ id: "c1", result: { ok: true }, files })))
  })

  it("stores what JSON makes of a value it can write (a Date, an undefined field, undefined itself)", () => {
    const at = new Date(Date.UTC(2026, 11, 2))
    expect(Recording.success("c1", { at, gone: undefined }, undefined)).toStrictEqual(
      Result.succeed(Turn.Event.ToolSucceeded({ id: "c1", result: { at: at.toISOString() }, files: undefined }))
    )
    expect(Recording.success("c1", { f: Number.NaN }, undefined)).toStrictEqual(
      Result.succeed(Turn.Event.ToolSucceeded({ id: "c1", result: { f: null }, files: undefined }))
    )
    expect(Recording.success("c1", undefined, undefined)).toStrictEqual(
      Result.succeed(Turn.Event.ToolSucceeded({ id: "c1", result: null, files: undefined }))
    )
  })

  it("refuses a result JSON cannot hold, saying why, and the model's text names the reason", () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    for (const value of [{ n: 10n }, cyclic]) {
      const recorded = Recording.success("c1", value, undefined)
      expect(Result.isFailure(recorded)).toBe(true)
      if (Result.isFailure(recorded)) expect(Recording.unrecordableText(recorded.failure)).toContain(recorded.failure)
    }
  })

  it("records a failure JSON cannot hold as its text, and one it can as JSON", () => {
    expect(Recording.failure("c1", { code: 7 }, undefined, "orig")).toStrictEqual(
      Turn.Event.ToolFailed({ id: "c1", error: { code: 7 }, files: undefined })
    )
    expect(Recording.failure("c1", { big: 1n }, undefined, "the original")).toStrictEqual(
      Turn.Event.ToolFailed({ id: "c1", error: "the original" })
    )
  })

  it("never throws on a failure that cannot be written as text", () => {
    const hostile = Object.create(null) as object
    const throwing = { toString: () => { throw new Error("no") } }
    expect(Recording.failureText(hostile)).toBe("The tool failed with a value that cannot be written as text.")
    expect(Recording.failureText(throwing)).toBe("The tool failed with a value that cannot be written as text.")
    expect(Recording.failureText(new Error("boom"))).toBe("Error: boom")
  })
})
