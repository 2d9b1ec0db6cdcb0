/**
 * Small builders and assertions shared by the reducer and Messages tests.
 */
import { expect } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Messages from "../../src/turn/Messages.js"
import type { Message, ToolCallPart, ToolCallStatus } from "../../src/turn/Messages.js"
import * as Turn from "../../src/turn/Turn.js"
import type { Usage } from "../../src/data/Usage.js"

/**
 * Freezes a value and everything reachable from it, so that any attempt of
 * the code under test to mutate its input throws (test files are ES modules,
 * hence strict mode: writing to a frozen object is a TypeError).
 */
export const deepFreeze = <A>(value: A, seen: WeakSet<object> = new WeakSet()): A => {
  if (typeof value !== "object" || value === null || seen.has(value)) return value
  seen.add(value)
  for (const key of Reflect.ownKeys(value)) {
    deepFreeze((value as Record<PropertyKey, unknown>)[key], seen)
  }
  Object.freeze(value)
  return value
}

/** A deep, unfrozen copy of JSON-like data (for "nothing changed" comparisons). */
export const snapshot = <A>(value: A): A => structuredClone(value)

/** 2025-01-01T00:00:00.000Z: the clock of the unit tests. */
export const T0 = Date.UTC(2025, 0, 1)

/** A tool call with a given status. */
export const call = (
  id: string,
  status: ToolCallStatus = { _tag: "Proposed" },
  options: { readonly name?: string; readonly arguments?: string } = {}
): ToolCallPart => ({
  _tag: "ToolCall",
  id,
  name: options.name ?? `tool_${id}`,
  arguments: options.arguments ?? JSON.stringify({ id }),
  status
})

/** An assistant message (a model response) holding these parts. */
export const response = (
  parts: ReadonlyArray<Message["parts"][number]>,
  usage?: Usage
): Message => ({
  role: "assistant",
  parts,
  ...(usage === undefined ? {} : { usage })
})

/** A conversation of one user message followed by the given messages, deep frozen. */
export const conversation = (...messages: ReadonlyArray<Message>): Messages.Messages =>
  deepFreeze([Messages.user("Please help."), ...messages])

/** Steps the reducer on a deep-frozen copy of its inputs. */
export const step = (
  messages: Messages.Messages,
  event: Turn.Event,
  config: Turn.Config = Turn.defaultConfig
): Turn.Result => Turn.step(deepFreeze(messages), deepFreeze(event), deepFreeze(config))

/** The status of a call in the messages (fails the test when the call is missing). */
export const statusOf = (messages: Messages.Messages, id: string): ToolCallStatus => {
  const found = Messages.findTool(messages, id)
  expect(found, `tool call ${id}`).toBeDefined()
  return found!.status
}

/** The success of a Result, failing the test on a failure. */
export const right = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) throw new Error(`expected a success, got a failure: ${String(result.failure)}`)
  return result.success
}

/** The failure of a Result, failing the test on a success. */
export const left = <A, E>(result: Result.Result<A, E>): E => {
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got a success: ${JSON.stringify(result.success)}`)
  return result.failure
}

/** Narrows an outcome to one tag, failing the test otherwise. */
export const expectOutcome = <K extends Turn.Outcome["_tag"]>(
  outcome: Turn.Outcome,
  tag: K
): Extract<Turn.Outcome, { readonly _tag: K }> => {
  expect(outcome._tag).toBe(tag)
  return outcome as Extract<Turn.Outcome, { readonly _tag: K }>
}
