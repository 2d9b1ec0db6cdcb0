/**
 * Asking a toolkit's strategy about one call, failing closed: a strategy that
 * fails, throws, or returns something that is not a valid `Action` makes the
 * call require approval, with a warning in the log. The strategy sees the live
 * grants covering the call (`call.grants`); an `Action.Granted` naming a grant
 * that does not cover it is logged (`GrantNotApplicable`), and the reducer
 * makes that call wait for a person.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Action from "../../turn/Action.js"
import * as Grant from "../../turn/GrantRules.js"
import type { Messages, ToolCallPart } from "../../turn/Messages.js"
import type * as Tool from "../../tools/Tool.js"
import type * as Toolkit from "../../tools/Toolkit.js"
import * as Turn from "../../turn/Turn.js"
import { decodeArguments } from "../../tools/ToolCodec.js"
import type { Policy as DecisionPolicy } from "../../internal/schema.js"

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
  available: string,
  messages?: Messages,
  context?: Grant.Context
): Effect.Effect<Turn.Decision, never, R> => {
  if (entry === undefined) {
    return Effect.succeed(Turn.Decision.Invalid({ message: `There is no tool named '${call.name}'. Available tools: ${available}.` }))
  }
  const params = decodeArguments(entry.tool, call.arguments)
  if (Result.isFailure(params)) return Effect.succeed(Turn.Decision.Invalid({ message: params.failure }))
  const strategy = entry.kit.strategy as AnyStrategy<R> | undefined
  if (strategy === undefined) return Effect.succeed(Turn.Decision.Execute())
  return Effect.suspend(() => {
    const metadata = entry.tool.metadata
    const grants = messages === undefined ? [] : Grant.covering(messages, call, now, context)
    const decided = strategy({ id: call.id, name: call.name, params: params.success, arguments: call.arguments, metadata, grants }, metadata)
    return Effect.isEffect(decided) ? decided : Effect.succeed(decided)
  }).pipe(
    Effect.exit,
    Effect.flatMap((exit) => {
      const toolPolicy = entry.tool.decisionPolicy
      const decision = Exit.isSuccess(exit) ? toDecision(exit.value, now, toolPolicy) : Result.fail("it failed")
      // The call waits for a person under the policy the strategy named (even with a bad time), else the tool's.
      const policy = (Exit.isSuccess(exit) ? namedPolicy(exit.value) : undefined) ?? toolPolicy
      if (Result.isSuccess(decision)) return checkGrant(decision.success, call, now, messages, context)
      return Effect.logWarning(
        `The strategy of tool '${call.name}' (call ${call.id}) could not decide: ${decision.failure}; the call now requires approval.`,
        ...(Exit.isFailure(exit) ? [exit.cause] : [])
      ).pipe(Effect.as(Turn.Decision.RequireApproval(policy === undefined ? {} : { policy })))
    })
  )
}

/** The policy an action names, if it names one (valid or not: the reducer rejects a call whose policy is not valid). */
const namedPolicy = (action: unknown): DecisionPolicy | undefined =>
  typeof action === "object" && action !== null && "policy" in action && action.policy !== undefined
    ? action.policy as DecisionPolicy
    : undefined
/** A `Granted` decision whose grant does not cover the call is logged; the reducer makes the call await approval. */
const checkGrant = (
  decision: Turn.Decision,
  call: ToolCallPart,
  now: number,
  messages: Messages | undefined,
  context: Grant.Context | undefined
): Effect.Effect<Turn.Decision> => {
  if (decision._tag !== "Granted") return Effect.succeed(decision)
  const checked = messages === undefined ? undefined : Grant.check(messages, decision.grant, call, now, context)
  if (checked !== undefined && Result.isSuccess(checked)) return Effect.succeed(decision)
  const why = checked === undefined ? "the grants were not given to the strategy" : checked.failure.message
  return Effect.logWarning(`The strategy of tool '${call.name}' (call ${call.id}) named a grant that cannot settle it: ${why}; the call now requires approval.`)
    .pipe(Effect.as(decision))
}

/**
 * The reducer's decision for a strategy's action, or why the action is not one
 * (a strategy written in JavaScript, or cast, may return anything).
 */
const toDecision = (action: unknown, now: number, policy: DecisionPolicy | undefined): Result.Result<Turn.Decision, string> => {
  if (typeof action !== "object" || action === null || !("_tag" in action)) {
    return Result.fail(`it returned ${describe(action)}, not an Action`)
  }
  const decision = Result.try(() => fromAction(action as Action.Action, now, policy))
  if (Result.isSuccess(decision) && typeof decision.success === "string") return Result.fail(decision.success)
  if (Result.isFailure(decision) || decision.success === undefined || !Turn.isValidDecision(decision.success)) {
    return Result.fail(`it returned ${describe(action)}, which is not a valid Action (unknown tag, or a time or reason that is not valid)`)
  }
  return Result.succeed(decision.success as Turn.Decision)
}

/** An instant as epoch millis, `NaN` when it reads as no number at all (so that it is refused). */
const instantMillis = (instant: Action.Instant): number => {
  const millis: unknown = Action.toMillis(instant)
  return typeof millis === "number" ? millis : Number.NaN
}

/** The decision for an action, `undefined` when it is not one, or why not when there is more to say. */
const fromAction = (action: Action.Action, now: number, toolPolicy: DecisionPolicy | undefined): Turn.Decision | string | undefined => {
  // The strategy's policy for this call, else the tool's: who may decide it.
  const policy = "policy" in action && action.policy !== undefined ? { policy: action.policy } : toolPolicy === undefined ? {} : { policy: toolPolicy }
  switch (action._tag) {
    case "Execute":
      return Turn.Decision.Execute()
    case "RequireApproval":
      // A deadline given is a deadline: one that reads as no time (a forged DateTime) is refused, never "none".
      return Turn.Decision.RequireApproval({
        expiresAt: action.expiresAt === undefined ? undefined : instantMillis(action.expiresAt),
        ...(action.review === undefined ? {} : { review: action.review }),
        ...policy
      })
    case "Defer":
      // Exactly one of `at` and `after`: a Defer that names no time has no time to run at.
      if ((action.at === undefined) === (action.after === undefined)) return undefined
      if (Duration.isDuration(action.after)) {
        return "it deferred the call by an Effect Duration, which cannot be checked (Effect reads Duration.millis(NaN) as zero): " +
          "give the delay as milliseconds, a duration string (\"10 minutes\") or object ({ minutes: 10 })"
      }
      // `deferredUntil` is NaN for a delay that is not valid (negative, infinite, NaN, unreadable): refused below.
      return Turn.Decision.Defer({ at: Action.deferredUntil(action, now), ...policy })
    case "Reject":
      return Turn.Decision.Reject({ reason: action.reason })
    case "Granted":
      return Turn.Decision.Granted({ grant: action.grant, ...policy })
    default:
      return undefined
  }
}

const describe = (u: unknown): string => {
  const text = Result.getOrUndefined(Result.try(() => JSON.stringify(u)))
  return text === undefined ? String(typeof u) : text.length > 200 ? `${text.slice(0, 200)}…` : text
}
