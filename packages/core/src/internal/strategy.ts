/**
 * Asking a toolkit's strategy about one call, failing closed: a strategy that
 * fails, throws, or returns something that is not a valid `Action` makes the
 * call require approval, with a warning in the log.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Action from "../Action.js"
import type { ToolCallPart } from "../Messages.js"
import type * as Tool from "../Tool.js"
import type * as Toolkit from "../Toolkit.js"
import * as Turn from "../Turn.js"
import { decodeArguments } from "./json.js"

/** A strategy as the shell calls it. */
type AnyStrategy<R> = (call: Toolkit.Call<Record<string, Tool.Any>>, metadata: unknown) => Action.Action | Effect.Effect<Action.Action, never, R>

/**
 * The decision for a proposed call: `Invalid` when its tool is unknown or its
 * arguments do not decode, `Execute` without a strategy, else the strategy's
 * action checked and resolved to times (`now` is when it decided).
 */
export const decide = <R>(
  entry: { readonly tool: Tool.Any; readonly kit: Toolkit.Any } | undefined,
  call: ToolCallPart,
  now: number,
  available: string
): Effect.Effect<Turn.Decision, never, R> => {
  if (entry === undefined) {
    return Effect.succeed(Turn.Decision.Invalid({ message: `There is no tool named '${call.name}'. Available tools: ${available}.` }))
  }
  const params = decodeArguments(entry.tool, call.arguments)
  if (Either.isLeft(params)) return Effect.succeed(Turn.Decision.Invalid({ message: params.left }))
  const strategy = entry.kit.strategy as AnyStrategy<R> | undefined
  if (strategy === undefined) return Effect.succeed(Turn.Decision.Execute())
  return Effect.suspend(() => {
    const metadata = entry.tool.metadata
    const decided = strategy({ id: call.id, name: call.name, params: params.right, arguments: call.arguments, metadata }, metadata)
    return Effect.isEffect(decided) ? decided : Effect.succeed(decided)
  }).pipe(
    Effect.exit,
    Effect.flatMap((exit) => {
      const decision = Exit.isSuccess(exit) ? toDecision(exit.value, now) : Either.left("it failed")
      if (Either.isRight(decision)) return Effect.succeed(decision.right)
      return Effect.logWarning(
        `The strategy of tool '${call.name}' (call ${call.id}) could not decide: ${decision.left}; the call now requires approval.`,
        ...(Exit.isFailure(exit) ? [exit.cause] : [])
      ).pipe(Effect.as(Turn.Decision.RequireApproval({})))
    })
  )
}

/**
 * The reducer's decision for a strategy's action, or why the action is not one
 * (a strategy written in JavaScript, or cast, may return anything).
 */
const toDecision = (action: unknown, now: number): Either.Either<Turn.Decision, string> => {
  if (typeof action !== "object" || action === null || !("_tag" in action)) {
    return Either.left(`it returned ${describe(action)}, not an Action`)
  }
  const decision = Either.try(() => fromAction(action as Action.Action, now))
  if (Either.isLeft(decision) || decision.right === undefined || !Turn.isValidDecision(decision.right)) {
    return Either.left(`it returned ${describe(action)}, which is not a valid Action (unknown tag, or a time or reason that is not valid)`)
  }
  return Either.right(decision.right)
}

const fromAction = (action: Action.Action, now: number): Turn.Decision | undefined => {
  switch (action._tag) {
    case "Execute":
      return Turn.Decision.Execute()
    case "RequireApproval":
      return Turn.Decision.RequireApproval({ expiresAt: action.expiresAt === undefined ? undefined : Action.toMillis(action.expiresAt) })
    case "Defer":
      // Exactly one of `at` and `after`: a Defer that names no time has no time to run at.
      if ((action.at === undefined) === (action.after === undefined)) return undefined
      if (action.after !== undefined && !isDelay(action.after)) return undefined
      return Turn.Decision.Defer({ at: Action.deferredUntil(action, now) })
    case "Reject":
      return Turn.Decision.Reject({ reason: action.reason })
    default:
      return undefined
  }
}

/** Whether a `Defer`'s `after` is a finite, non-negative duration (Duration reads `NaN` and negatives as zero). */
const isDelay = (after: Duration.DurationInput): boolean => {
  if (typeof after === "number") return Number.isFinite(after) && after >= 0
  if (typeof after === "bigint") return after >= 0n
  if (Array.isArray(after)) return after.every((n) => typeof n === "number" && Number.isFinite(n) && n >= 0)
  return Option.match(Duration.decodeUnknown(after), { onNone: () => false, onSome: Duration.isFinite })
}

const describe = (u: unknown): string => {
  const text = Either.getOrUndefined(Either.try(() => JSON.stringify(u)))
  return text === undefined ? String(typeof u) : text.length > 200 ? `${text.slice(0, 200)}…` : text
}
