/**
 * What a finished call's result becomes in the conversation: the rules a shell applies to a
 * handler's outcome before it reaches the reducer, so that every shell records results the same
 * way and the state always stays writable. A result JSON cannot hold fails the call (the tool ran:
 * the model is told so, and the shell reports a defect); a failure JSON cannot hold, or that its
 * tool's failure schema does not take, reaches the model as text; a handler that died is a defect
 * the model reads as "failed unexpectedly". The codec (the tool's schemas, its files) is the
 * shell's; what the model is told, and what is stored, is here.
 *
 * @internal
 */
import * as Result from "effect/Result"
import { toStoredJson } from "../internal/jsonText.js"
import type * as Messages from "./Messages.js"
import { Event } from "./Turn.js"

/** What the model reads when a handler died (a defect): the call may have partly run. */
export const defectText = "The tool failed unexpectedly (an internal error); it may have partly run."

/** What the model reads when a tool ran but its result cannot be stored as JSON (`problem` says why). */
export const unrecordableText = (problem: string): string => `The tool ran, but its result could not be recorded: ${problem}.`

/**
 * A failure the tool's failure schema does not take, as the text the model reads: `String(value)`,
 * unless that throws (an object without a prototype, a `toString` that throws), which would kill the
 * turn with an untyped defect.
 */
export const failureText = (value: unknown): string => {
  try {
    return String(value)
  } catch {
    return "The tool failed with a value that cannot be written as text."
  }
}

/**
 * A success as recorded: `ToolSucceeded` with the result as stored JSON, or, when JSON cannot
 * hold it, why (`Failure`): the shell then fails the call with `unrecordableText` as a defect.
 */
export const success = (
  id: string,
  result: unknown,
  files: ReadonlyArray<Messages.FilePart> | undefined
): Result.Result<Event, string> => {
  const stored = toStoredJson(result)
  return Result.isFailure(stored) ? Result.fail(stored.failure) : Result.succeed(Event.ToolSucceeded({ id, result: stored.success, files }))
}

/** A typed failure as recorded: `ToolFailed` with the error as stored JSON, or as text when JSON cannot hold it. */
export const failure = (
  id: string,
  encoded: unknown,
  files: ReadonlyArray<Messages.FilePart> | undefined,
  original: unknown
): Event => {
  const stored = toStoredJson(encoded)
  return Result.isFailure(stored)
    ? Event.ToolFailed({ id, error: failureText(original) })
    : Event.ToolFailed({ id, error: stored.success, files })
}
