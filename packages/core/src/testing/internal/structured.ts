/**
 * Structured answers in the property kit: how a scenario's turn asks an agent
 * with an `output` Schema for its answer (the agent's `answer` hook on the
 * plain and stored paths, the chat's `streamStructured` on the streamed
 * one), what the answer was (a value, or a failure and whether it is typed),
 * whether a value decodes with the Schema, and the JSON a valid answer is
 * sent as (a root that is not an object wrapped in `{ "value": … }`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as Chat from "../../chat/Chat.js"
import type * as ChatOutcome from "../../chat/ChatOutcome.js"
import * as ResponseFormat from "../../tools/ResponseFormat.js"
import * as Messages from "../../turn/Messages.js"
import * as Agent from "../Agent.js"

/** What a structured answer gave: a value, or a failure (its tag; `typed`: a tagged error, not a defect). */
export type Outcome =
  | { readonly _tag: "Value"; readonly value: unknown }
  | { readonly _tag: "Failure"; readonly error: string; readonly typed: boolean }

/** The turn of an agent, plain or stored: its `answer` hook (default the chat's `completeStructured`) when it has an `output`. */
export const complete = (
  agent: Agent.Agent,
  chat: Chat.Service<any, any>,
  messages: Messages.Messages,
  options: Chat.TurnOptions
): Effect.Effect<ChatOutcome.Result<unknown>, unknown, any> => {
  if (agent.output === undefined) return chat.complete(messages, options)
  const answer = agent.answer ?? Agent.chatAnswer
  return Effect.suspend(() => answer(chat, messages, agent.output!, options))
}

/** The final event of a streamed turn, structured or not: `Completed` (with `value` when structured) or `Paused`. */
export interface Final {
  readonly _tag: string
  readonly messages?: Messages.Messages
  readonly value?: unknown
}

/** The turn of an agent, streamed: the chat's `streamStructured` when it has an `output`, else `stream`. */
export const stream = (agent: Agent.Agent, chat: Chat.Service<any, any>, messages: Messages.Messages): Stream.Stream<Final, unknown, any> =>
  agent.output === undefined ? chat.stream(messages) : chat.streamStructured(messages, agent.output)

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : undefined

/** The outcome of an answer from its exit; `undefined` for a pause (no answer yet) or an interruption (a crash). */
export const outcomeOf = <A extends { readonly outcome: { readonly _tag: string; readonly value?: unknown } }>(exit: Exit.Exit<A, unknown>): Outcome | undefined => {
  // `Complete` from `completeStructured`, `Completed` the last event of `streamStructured`.
  if (Exit.isSuccess(exit)) return exit.value.outcome._tag === "Complete" || exit.value.outcome._tag === "Completed" ? { _tag: "Value", value: exit.value.outcome.value } : undefined
  if (Exit.hasInterrupts(exit)) return undefined
  const fail = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  const tag = fail?._tag === "Fail" ? tagOf(fail.error) : undefined
  return tag === undefined ? { _tag: "Failure", error: String(fail?._tag === "Fail" ? fail.error : exit.cause), typed: false } : { _tag: "Failure", error: tag, typed: true }
}

/** The text of the answer: the final response's, or a `StructuredOutputError`'s `text`. */
export const textOf = (exit: Exit.Exit<ChatOutcome.Result<unknown>, unknown>): string | undefined => {
  if (Exit.isSuccess(exit)) return exit.value.outcome._tag === "Complete" ? Messages.textOf(exit.value.outcome.response) : undefined
  const fail = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  const error = fail?._tag === "Fail" ? fail.error : undefined
  return typeof error === "object" && error !== null && "text" in error && typeof error.text === "string" ? error.text : undefined
}

/** Whether `value` is a value of `output`'s decoded type (what decoding a valid answer gives). */
export const decodes = (output: Schema.Top, value: unknown): boolean => {
  try {
    return Schema.is(Schema.toType(output))(value)
  } catch {
    return false
  }
}

/** The JSON a model sends for the encoded answer `encoded`: wrapped in `{ "value": … }` when the root is not an object. */
export const toWire = (output: Schema.Top, encoded: unknown): unknown => {
  try {
    return ResponseFormat.make(output).wrapped ? { [ResponseFormat.wrapKey]: encoded } : encoded
  } catch {
    return encoded
  }
}
