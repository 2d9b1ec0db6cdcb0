/**
 * Strategies for MCP tools, read from their annotations. The default fails
 * closed: only a tool that says it is read-only (and not open-world, not
 * destructive) runs without a person; everything else waits for approval.
 * Annotations are hints from the server: they can make a call ask, never
 * skip a rule the chat's own strategy sets (see `combine`).
 *
 * @since 0.1.0
 */
import type { Toolkit } from "@chat-ts/core"
import * as Action from "@chat-ts/core/Action"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as McpTool from "./McpTool.js"

/** The tools of an MCP toolkit, by name. */
export type Tools = Record<string, McpTool.McpTool>

/** A strategy for MCP tools. */
export type Strategy<R = never> = Toolkit.Strategy<Tools, R>

/** A strategy that may have no opinion (`undefined`): the next one in `combine` decides. */
export type Opinion<R = never> = (
  call: Toolkit.Call<Tools>,
  metadata: McpTool.Metadata
) => Action.Action | undefined | Effect.Effect<Action.Action | undefined, never, R>

/** Whether the annotations say the tool only reads (read-only, not destructive, not open-world). */
export const isReadOnly = (annotations: McpTool.Annotations): boolean =>
  annotations.readOnlyHint === true && annotations.destructiveHint !== true && annotations.openWorldHint !== true

/**
 * The default: a read-only tool runs; a destructive, open-world or
 * unannotated one requires approval.
 */
export const annotations: Strategy = (_call, metadata) =>
  isReadOnly(metadata.annotations) ? Action.Execute() : Action.RequireApproval()

/** A strategy that decides every call the same way (e.g. `always(Action.RequireApproval())`). */
export const always = (action: Action.Action): Strategy => () => action

/** Lets `first` decide, and `fallback` where it returns `undefined` (e.g. your own allow-list, then the annotations). */
export const combine: {
  <R2>(fallback: Strategy<R2>): <R>(first: Opinion<R>) => Strategy<R | R2>
  <R, R2>(first: Opinion<R>, fallback: Strategy<R2>): Strategy<R | R2>
} = dual(2, <R, R2>(first: Opinion<R>, fallback: Strategy<R2>): Strategy<R | R2> => (call, metadata) => {
  const decided = first(call, metadata as McpTool.Metadata)
  if (!Effect.isEffect(decided)) return decided ?? fallback(call, metadata)
  return Effect.flatMap(decided, (action) => {
    if (action !== undefined) return Effect.succeed(action)
    const next = fallback(call, metadata)
    return Effect.isEffect(next) ? next : Effect.succeed(next)
  })
})
