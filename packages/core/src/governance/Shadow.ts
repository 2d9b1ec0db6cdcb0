/**
 * Shadow mode: a candidate strategy decides every call beside the toolkit's
 * own (the enforced one), and where the two disagree is logged and counted,
 * so a team can try a tighter (or looser) policy on real traffic before it
 * enforces it.
 *
 * What runs never changes: the toolkit returns exactly what its enforced
 * strategy returns (its failures and invalid actions included, which the shell
 * handles as it always does). The candidate runs in a detached fiber after the
 * enforced decision is made, bounded by a timeout on the Effect clock; a
 * candidate that fails, dies or is slow is reported (`Failed`, `TimedOut`) and
 * has no effect on the turn. Two decisions agree when they have the same tag
 * (`Execute`, `RequireApproval`, `Defer`, `Reject`): times and reasons are not
 * compared. Each comparison updates the `decisions` counter (attributes:
 * `tool`, `shadow`, `enforced`, `candidate`, `outcome`), writes a log line
 * annotated with the same (disagreements at Info, agreements at Debug,
 * failures at Warning), and is passed to `onComparison` when given.
 *
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { dual } from "effect/Function"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Action from "../turn/Action.js"
import type * as Tool from "../tools/Tool.js"
import * as Toolkit from "../tools/Toolkit.js"

/**
 * How one comparison came out: the two agree, disagree, or the candidate gave no decision.
 *
 * @category models
 * @since 0.3.0
 */
export type Outcome = "agree" | "disagree" | "failed" | "timed-out"

/**
 * One comparison of the enforced and the candidate decision of a call.
 *
 * @category models
 * @since 0.3.0
 */
export interface Comparison {
  /** The shadow's name (`Options.name`). */
  readonly shadow: string
  readonly tool: string
  readonly callId: string
  /** The enforced action's tag (`Invalid` for a value that is not an action). */
  readonly enforced: string
  /** The candidate action's tag, or `Failed` / `TimedOut`. */
  readonly candidate: string
  readonly outcome: Outcome
}

/**
 * Settings of a shadow.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options<R = never> {
  /** The candidate's name in logs and in the counter's `shadow` attribute (default `"candidate"`). */
  readonly name?: string
  /** How long the candidate may take, on the Effect clock (default `defaultTimeout`, 5 seconds; one that is no duration counts as zero). */
  readonly timeout?: Duration.Input
  /** Called with each comparison after it is logged and counted (its failures are logged and ignored). */
  readonly onComparison?: (comparison: Comparison) => Effect.Effect<void, unknown, R>
}

/**
 * The default timeout of a candidate: 5 seconds.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaultTimeout: Duration.Duration = Duration.seconds(5)

/**
 * The counter of comparisons, one series per `tool`, `shadow`, `enforced`, `candidate` and `outcome`.
 *
 * @category utils
 * @since 0.3.0
 */
export const decisions: Metric.Counter<number> = Metric.counter("chat_ts_shadow_decisions", {
  description: "Calls decided by an enforced strategy and a shadow candidate, by how the two decisions compared",
  incremental: true
})

/** The tag of an action, `Invalid` for anything else (a strategy in JavaScript, or cast, may return anything). */
const tagOf = (action: unknown): string => {
  const tag = typeof action === "object" && action !== null ? (action as { readonly _tag?: unknown })._tag : undefined
  return typeof tag === "string" && ["Execute", "RequireApproval", "Defer", "Reject"].includes(tag) ? tag : "Invalid"
}

/** Runs a strategy as the shell does: a throw is a defect, a plain action a success. */
const run = <A, R>(decide: () => A | Effect.Effect<A, never, R>): Effect.Effect<A, never, R> =>
  Effect.suspend(() => {
    const decided = decide()
    return Effect.isEffect(decided) ? decided : Effect.succeed(decided)
  })

/** The candidate's tag for a call, `Failed` or `TimedOut` when it gave none. */
const candidateTag = <R>(candidate: Effect.Effect<Action.Action, never, R>, timeout: Duration.Input) => {
  const duration = Option.getOrElse(Duration.fromInput(timeout), () => Duration.zero)
  return candidate.pipe(
    Effect.timeoutOption(duration),
    Effect.exit,
    Effect.map((exit) => Exit.isFailure(exit) ? "Failed" : Option.isNone(exit.value) ? "TimedOut" : tagOf(exit.value.value))
  )
}

const outcomeOf = (enforced: string, candidate: string): Outcome =>
  candidate === "Failed" ? "failed" : candidate === "TimedOut" ? "timed-out" : candidate === enforced ? "agree" : "disagree"

/** Logs, counts and reports one comparison. */
const report = <R>(comparison: Comparison, options: Options<R>): Effect.Effect<void, never, R> => {
  const { outcome } = comparison
  const text = outcome === "agree"
    ? "The shadow strategy agrees with the enforced one."
    : outcome === "disagree"
    ? "The shadow strategy disagrees with the enforced one."
    : `The shadow strategy gave no decision (${comparison.candidate}).`
  const log = outcome === "agree" ? Effect.logDebug(text) : outcome === "disagree" ? Effect.logInfo(text) : Effect.logWarning(text)
  const { callId: _, ...attributes } = comparison
  return Effect.andThen(
    log.pipe(Effect.annotateLogs({ ...comparison })),
    Metric.update(Metric.withAttributes(decisions, attributes), 1)
  ).pipe(
    Effect.andThen(options.onComparison === undefined ? Effect.void : Effect.suspend(() => options.onComparison!(comparison))),
    Effect.catchCause((cause) => Effect.logWarning("A shadow comparison could not be reported.", cause))
  )
}

/**
 * The toolkit deciding as it does (its strategy; none: every call runs), with
 * `candidate` deciding each call beside it in the background and every
 * disagreement logged and counted (see the module doc).
 *
 * @category utils
 * @since 0.3.0
 */
export const shadow: {
  <Tools extends Record<string, Tool.Any>, R2 = never, R3 = never>(
    candidate: Toolkit.Strategy<Tools, R2>,
    options?: Options<R3>
  ): <R>(self: Toolkit.Toolkit<Tools, R>) => Toolkit.Toolkit<Tools, R | R2 | R3>
  <Tools extends Record<string, Tool.Any>, R, R2 = never, R3 = never>(
    self: Toolkit.Toolkit<Tools, R>,
    candidate: Toolkit.Strategy<Tools, R2>,
    options?: Options<R3>
  ): Toolkit.Toolkit<Tools, R | R2 | R3>
} = dual(
  (args) => typeof args[0] === "object" && args[0] !== null && Toolkit.TypeId in args[0],
  <Tools extends Record<string, Tool.Any>, R, R2, R3>(
    self: Toolkit.Toolkit<Tools, R>,
    candidate: Toolkit.Strategy<Tools, R2>,
    options: Options<R3> = {}
  ): Toolkit.Toolkit<Tools, R | R2 | R3> => {
    const enforced = self.strategy
    const name = options.name ?? "candidate"
    const timeout = options.timeout ?? defaultTimeout
    const strategy: Toolkit.Strategy<Tools, R | R2 | R3> = (call, metadata) =>
      run<Action.Action, R>(() => enforced === undefined ? Action.Execute() : enforced(call, metadata)).pipe(
        Effect.tap((action) =>
          candidateTag(run(() => candidate(call, metadata)), timeout).pipe(
            Effect.flatMap((tag) =>
              report({
                shadow: name,
                tool: String(call.name),
                callId: call.id,
                enforced: tagOf(action),
                candidate: tag,
                outcome: outcomeOf(tagOf(action), tag)
              }, options)
            ),
            Effect.forkDetach
          )
        )
      )
    return Toolkit.withStrategy(self, strategy)
  }
)
