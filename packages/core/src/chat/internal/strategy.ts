/**
 * Asking a toolkit's strategy about one call. The rules (unknown tool or undecodable arguments:
 * `Invalid`; no strategy: `Execute`; a strategy that fails, throws, or returns something that is
 * not a valid `Action`: the call requires approval) are `turn/Strategies.ts`'s; this shell runs
 * the strategy (an Effect or a plain value) and logs a warning when it could not decide. The
 * strategy sees the live grants covering the call (`call.grants`); an `Action.Granted` naming a
 * grant that does not cover it is logged (`GrantNotApplicable`), and the reducer makes that call
 * wait for a person.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import type * as Action from "../../turn/Action.js"
import * as GrantRules from "../../turn/GrantRules.js"
import type { Messages, ToolCallPart } from "../../turn/Messages.js"
import * as Strategies from "../../turn/Strategies.js"
import type * as Tool from "../../tools/Tool.js"
import type * as Toolkit from "../../tools/Toolkit.js"
import type * as Turn from "../../turn/Turn.js"
import { decodeArguments } from "../../tools/ToolCodec.js"
import type { DecodedArguments } from "./decodedArguments.js"

/** A strategy as the shell calls it. */
type AnyStrategy<R> = (call: Toolkit.Call<Record<string, Tool.Any>>, metadata: unknown) => Action.Action | Effect.Effect<Action.Action, never, R>

/**
 * The decision for a proposed call (see `Strategies`): decided at once (a succeeded Effect) when
 * there is no strategy to ask, else the strategy's action checked and resolved to times (`now`
 * is when it decided).
 */
export const decide = <R>(
  entry: { readonly tool: Tool.Any; readonly kit: Toolkit.Any } | undefined,
  call: ToolCallPart,
  now: number,
  available: string,
  messages?: Messages,
  context?: GrantRules.Context,
  /** Where the arguments of a call decided without a strategy are kept for its handler. */
  decoded?: DecodedArguments
): Effect.Effect<Turn.Decision, never, R> => {
  if (entry === undefined) return Effect.succeed(Strategies.unknownTool(call, available))
  const params = decodeArguments(entry.tool, call.arguments)
  if (Result.isFailure(params)) return Effect.succeed(Strategies.invalidArguments(params.failure))
  const strategy = entry.kit.strategy as AnyStrategy<R> | undefined
  if (strategy === undefined) {
    // Nobody but the handler sees this value: it is kept for it.
    decoded?.keep(entry.tool, call.id, call.arguments, params)
    return Effect.succeed(Strategies.withoutStrategy())
  }
  return Effect.suspend(() => {
    const metadata = entry.tool.metadata
    const grants = messages === undefined ? [] : GrantRules.covering(messages, call, now, context)
    const decided = strategy({ id: call.id, name: call.name, params: params.success, arguments: call.arguments, metadata, grants }, metadata)
    return Effect.isEffect(decided) ? decided : Effect.succeed(decided)
  }).pipe(
    Effect.exit,
    Effect.flatMap((exit) => {
      const given = Exit.isSuccess(exit) ? Result.succeed(exit.value) : Result.fail(exit.cause)
      const { decision, refused } = Strategies.ofStrategy(given, now, entry.tool.decisionPolicy)
      if (refused !== undefined) {
        return Effect.logWarning(
          `The strategy of tool '${call.name}' (call ${call.id}) could not decide: ${refused}; the call now requires approval.`,
          ...(Exit.isFailure(exit) ? [exit.cause] : [])
        ).pipe(Effect.as(decision))
      }
      const why = Strategies.grantRefusal(decision, call, now, messages, context)
      if (why === undefined) return Effect.succeed(decision)
      return Effect.logWarning(`The strategy of tool '${call.name}' (call ${call.id}) named a grant that cannot settle it: ${why}; the call now requires approval.`)
        .pipe(Effect.as(decision))
    })
  )
}
