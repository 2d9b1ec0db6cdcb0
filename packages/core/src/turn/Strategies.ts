/**
 * The rules that decide a proposed call before the reducer sees it: a call whose tool is unknown,
 * or whose arguments do not decode, is `Invalid` (it fails with a message for the model); a tool
 * without a strategy is `Execute`; a strategy that fails, throws, or returns something that is not
 * a valid `Action` makes the call await approval, under the decision policy it named, else the
 * tool's (fail closed). A strategy's `Action` becomes a `Turn.Decision` with its times resolved to
 * epoch millis. A `Granted` decision whose grant cannot settle the call is kept (the reducer makes
 * that call wait for a person), and the shell is told why. The shell (`chat/internal/strategy.ts`)
 * only runs the strategy and logs what these functions say.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Result from "effect/Result"
import * as Action from "./Action.js"
import * as GrantRules from "./GrantRules.js"
import type { Messages, ToolCallPart } from "./Messages.js"
import * as Turn from "./Turn.js"
import type { Policy as DecisionPolicy } from "../internal/schema.js"

/** The decision for a call naming no tool of the chat (`available`: the names it has, for the model). */
export const unknownTool = (call: ToolCallPart, available: string): Turn.Decision =>
  Turn.Decision.Invalid({ message: `There is no tool named '${call.name}'. Available tools: ${available}.` })

/** The decision for a call whose arguments do not decode: `problem`, for the model. */
export const invalidArguments = (problem: string): Turn.Decision => Turn.Decision.Invalid({ message: problem })

/** The decision for a call of a tool without a strategy: it runs. */
export const withoutStrategy = (): Turn.Decision => Turn.Decision.Execute()

/** A strategy's decision, and why it could not decide when it could not (the decision then awaits approval). */
export interface Decided {
  readonly decision: Turn.Decision
  readonly refused?: string | undefined
}

/**
 * The decision for what a strategy gave (`given`: its action, or a failure when it failed or
 * threw), at `now`, for a tool whose decision policy is `toolPolicy`: the action checked and
 * resolved, else (with `refused`) `RequireApproval` under the policy the action named, else the tool's.
 */
export const ofStrategy = (given: Result.Result<unknown, unknown>, now: number, toolPolicy: DecisionPolicy | undefined): Decided => {
  const decision = Result.isSuccess(given) ? toDecision(given.success, now, toolPolicy) : Result.fail("it failed")
  if (Result.isSuccess(decision)) return { decision: decision.success }
  // The call waits for a person under the policy the strategy named (even with a bad time), else the tool's.
  const policy = (Result.isSuccess(given) ? namedPolicy(given.success) : undefined) ?? toolPolicy
  return { decision: Turn.Decision.RequireApproval(policy === undefined ? {} : { policy }), refused: decision.failure }
}

/**
 * Why a `Granted` decision's grant cannot settle the call (`undefined`: it can, or the decision
 * is not `Granted`). The decision stands: the reducer checks the grant again and makes the call
 * await approval; the shell logs this.
 */
export const grantRefusal = (
  decision: Turn.Decision,
  call: ToolCallPart,
  now: number,
  messages: Messages | undefined,
  context: GrantRules.Context | undefined
): string | undefined => {
  if (decision._tag !== "Granted") return undefined
  if (messages === undefined) return "the grants were not given to the strategy"
  const checked = GrantRules.check(messages, decision.grant, call, now, context)
  return Result.isSuccess(checked) ? undefined : checked.failure.message
}

/** The policy an action names, if it names one (valid or not: the reducer rejects a call whose policy is not valid). */
const namedPolicy = (action: unknown): DecisionPolicy | undefined =>
  typeof action === "object" && action !== null && "policy" in action && action.policy !== undefined
    ? action.policy as DecisionPolicy
    : undefined

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
