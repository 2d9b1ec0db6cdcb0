/**
 * A scenario that drives one turn of an agent: what the model answers (a
 * `MockLanguageModel` script), then what happens while the turn is paused, in
 * order: people's decisions, steering messages, clock moves, resumes and crashes, grants and
 * revocations (and, on each call, what a reviewer answers about it). Plain data, so a
 * failing scenario found by a property (see `@chat-ts/core/testing/Properties`)
 * prints as a script to paste into a regression test, and `Trace.record`
 * replays it without fast-check.
 *
 * @since 0.3.0
 */
import type * as GrantRules from "../turn/GrantRules.js"
import type * as MockLanguageModel from "./MockLanguageModel.js"

/**
 * A tool call the model makes: `arguments` is the raw JSON text the model sends (valid or not).
 *
 * @category models
 * @since 0.3.0
 */
export interface Call {
  readonly id: string
  readonly name: string
  readonly arguments: string
  /** What the agent's reviewer answers about this call, if it is asked (absent: a confident `safe`). */
  readonly review?: Review | undefined
}

/**
 * A reviewer's answer about one call (see `Agent.reviewer`): a verdict with its confidence, or
 * `"no-answer"` (it answers something that is not a verdict).
 *
 * @category models
 * @since 0.3.0
 */
export interface Review {
  readonly verdict: "safe" | "needs-person" | "refuse" | "no-answer"
  readonly confidence: number
}

/**
 * One response of the model: text, tool calls (several: parallel calls), and how it finished.
 *
 * @category models
 * @since 0.3.0
 */
export interface Response {
  readonly text?: string | undefined
  readonly calls: ReadonlyArray<Call>
  /** `"length"`: cut short by the token limit. Absent: `"tool-calls"` with calls, else `"stop"`. */
  readonly finishReason?: "stop" | "length" | undefined
}

/**
 * A person's decision on a paused call. `call` picks the call among those waiting
 * (modulo their number, in the order of the pause); `by` picks the decider among the agent's
 * (modulo their number). `edit` approves with `arguments` (JSON text, valid or not): one text for
 * any call, or one per tool name (the text of the picked call's tool; `"{}"` when none).
 * `approve-late` first moves the clock just past the picked call's approval deadline (when it has
 * one and it has not passed), then approves.
 *
 * @category models
 * @since 0.3.0
 */
export interface Decide {
  readonly _tag: "Decide"
  readonly kind: "approve" | "edit" | "reject" | "cancel" | "approve-late"
  readonly call: number
  readonly by: number
  readonly arguments?: string | Readonly<Record<string, string>> | undefined
  readonly reason?: string | undefined
}

/**
 * The edited arguments a decision gives the call of tool `name`.
 *
 * @category utils
 * @since 0.3.0
 */
export const editedArguments = (decide: Decide, name: string): string =>
  typeof decide.arguments === "string"
    ? decide.arguments
    : decide.arguments !== undefined && Object.hasOwn(decide.arguments, name) ? decide.arguments[name]! : "{}"

/**
 * The clock moves to just before, at or just after the earliest time the paused turn waits on
 * (a scheduled call's time, an approval's deadline, a grant's expiry still ahead); by `millis` when it waits on none.
 *
 * @category models
 * @since 0.3.0
 */
export interface Clock {
  readonly _tag: "Clock"
  readonly to: "before" | "at" | "after"
  readonly millis: number
}

/**
 * The paused turn is resumed.
 *
 * @category models
 * @since 0.3.0
 */
export interface Resume {
  readonly _tag: "Resume"
}

/**
 * The next resume's process dies at its `checkpoint`-th checkpoint (counted from 1), just after the
 * store saved it; another process loads the conversation from the store and resumes it. On the
 * `worker` path, with `before`, it dies just before that save (nothing of it written); the `stored`
 * path plays every crash just after its save.
 *
 * @category models
 * @since 0.3.0
 */
export interface Crash {
  readonly _tag: "Crash"
  readonly checkpoint: number
  readonly before?: boolean | undefined
}

/**
 * The requester sends a new message while the turn is paused (`Steering.steer`): `"cancel"` withdraws
 * the calls nobody decided yet, `"queue"` holds the message until every call is resolved.
 *
 * @category models
 * @since 0.3.0
 */
export interface Steer {
  readonly _tag: "Steer"
  readonly rule: "cancel" | "queue"
  readonly text: string
}

/**
 * A decider (picked modulo their number) gives a standing permission while the turn is paused
 * (`Messages.grant`, or your `Agent.grant` path): for `tool` (a name or a pattern with `*`),
 * arguments matching `where` when given, from now for `expiresAfter` milliseconds. Its id is
 * `g<n>`, the n-th grant of the scenario.
 *
 * @category models
 * @since 0.3.0
 */
export interface Grant {
  readonly _tag: "Grant"
  readonly tool: string
  readonly where?: GrantRules.Predicate | undefined
  readonly by: number
  readonly expiresAfter: number
}

/**
 * A decider revokes one of the grants given so far (picked modulo their number), now
 * (`Messages.revokeGrant`, or your `Agent.revoke` path).
 *
 * @category models
 * @since 0.3.0
 */
export interface Revoke {
  readonly _tag: "Revoke"
  readonly grant: number
  readonly by: number
}

/**
 * What happens after the first run of the turn.
 *
 * @category models
 * @since 0.3.0
 */
export type Step = Decide | Clock | Resume | Crash | Steer | Grant | Revoke

/**
 * A scenario: the user's request, the model's responses (after them it answers `"Done."`),
 * the turn's `maxSteps`, a crash in the first run (`firstCrash`), then the steps.
 *
 * @category models
 * @since 0.3.0
 */
export interface Scenario {
  readonly request: string
  readonly responses: ReadonlyArray<Response>
  readonly maxSteps: number
  readonly firstCrash?: number | undefined
  readonly steps: ReadonlyArray<Step>
  /** The text of the model's final answer once its responses are used up (JSON for a structured answer); default `finalAnswer`. */
  readonly final?: string | undefined
}

/**
 * The final answer of the model once its responses are used up.
 *
 * @category constants
 * @since 0.3.0
 */
export const finalAnswer = "Done."

/**
 * The scripted response of a scenario's response, as `MockLanguageModel` takes it.
 *
 * @category conversions
 * @since 0.3.0
 */
export const toScripted = (response: Response): MockLanguageModel.ScriptedResponse => ({
  ...(response.text === undefined ? {} : { text: response.text }),
  ...(response.calls.length === 0 ? {} : { toolCalls: response.calls.map(({ review: _review, ...call }) => call) }),
  ...(response.finishReason === undefined ? {} : { finishReason: response.finishReason })
})

/**
 * The model's script: the responses in order, then `finalAnswer` for every later request.
 *
 * @category conversions
 * @since 0.3.0
 */
export const script = (scenario: Scenario): MockLanguageModel.Script => (_request, index) => {
  const response = scenario.responses[index]
  return response === undefined ? { text: scenario.final ?? finalAnswer } : toScripted(response)
}

/**
 * Whether the scenario crashes a process anywhere.
 *
 * @category utils
 * @since 0.3.0
 */
export const crashes = (scenario: Scenario): boolean =>
  scenario.firstCrash !== undefined || scenario.steps.some((step) => step._tag === "Crash")

const responseCode = (response: Response): string => {
  const calls = response.calls.map((call) => `{ id: ${JSON.stringify(call.id)}, name: ${JSON.stringify(call.name)}, arguments: ${JSON.stringify(call.arguments)} }`)
  const extra = [
    ...(response.text === undefined ? [] : [`text: ${JSON.stringify(response.text)}`]),
    ...(response.finishReason === undefined ? [] : [`finishReason: ${JSON.stringify(response.finishReason)}`])
  ]
  if (calls.length === 0) return `MockLanguageModel.text(${JSON.stringify(response.text ?? "")}${response.finishReason === undefined ? "" : `, { finishReason: ${JSON.stringify(response.finishReason)} }`})`
  return `MockLanguageModel.toolCalls([${calls.join(", ")}]${extra.length === 0 ? "" : `, { ${extra.join(", ")} }`})`
}

/**
 * The model's script as code for a test: `MockLanguageModel.make([...])`.
 *
 * @category conversions
 * @since 0.3.0
 */
export const scriptCode = (scenario: Scenario): string =>
  [
    "MockLanguageModel.make([",
    ...[...scenario.responses.map(responseCode), `MockLanguageModel.text(${JSON.stringify(scenario.final ?? finalAnswer)})`].map((line) => `  ${line},`),
    "])"
  ].join("\n")

/**
 * The scenario as code: the `Scenario` value, to paste into a test and replay with `Trace.record`.
 *
 * @category conversions
 * @since 0.3.0
 */
export const code = (scenario: Scenario): string => JSON.stringify(scenario, null, 2)
