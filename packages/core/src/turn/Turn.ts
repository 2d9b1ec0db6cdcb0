/**
 * The turn reducer: a pure, total state machine for one chat turn.
 *
 * `step(messages, event, config)` returns the next messages and an `Outcome`
 * telling the shell what to do next (call the model, ask the strategies, run
 * tools, wait, pause, complete, or stop). It performs no I/O, reads no clock
 * and makes no ids: the time, the model's response, the strategies' decisions
 * and the tools' results all arrive in events. The `Chat` service is the shell
 * that interprets the outcomes.
 *
 * Rules it enforces:
 * - A step is one model call; `maxSteps` bounds the model calls of a turn
 *   (counted from the messages: the assistant messages after the last user
 *   message), and reaching it is the `StepLimit` outcome.
 * - Every call of a response is decided; `Execute` calls run, `Reject`s are
 *   recorded, and when any call awaits approval or a time the turn pauses
 *   after the runnable calls finished. The model is not called again until
 *   every call of its last response is resolved.
 * - Approved calls run without asking the strategy again; scheduled calls run
 *   once their time has come; a call whose approval request's deadline passed
 *   (decided or not) is `Expired`, never run.
 * - A paused response may hold user messages that came during the pause
 *   (`queued`, see `Steering`): once every call of it is resolved they are
 *   delivered (appended as user messages) and the model answers them.
 * - A call left `Running` by a crash is never run again: it is recorded as
 *   failed (its outcome is unknown), unless `Resume` lists it in `rerun` (its
 *   tool is idempotent): then it runs again as its next `attempt`.
 * - Nothing from a response cut short (finish reason `length`,
 *   `content-filter` or `error`) runs: its calls fail with a message saying
 *   why, and the model may try again within `maxSteps`.
 * - It fails closed on bad input: a decision it does not know, or a time that
 *   is not finite epoch milliseconds, makes the call await approval; an
 *   approval deadline that is not a valid time counts as passed.
 * - A model's arguments that give a key twice enter as the canonical text of
 *   their value (the text as sent kept in `rawArguments`), so every reader sees
 *   the value the handler gets.
 * - A call's decision record (`decision { by, at }`) stays on it through every
 *   change of status, unless its approval is undone (a refused edit).
 * - A call sent to a person under a decision policy has that policy fixed on
 *   it (`decidedUnder`, with the time it was deferred to, if it was), where no
 *   status written later drops it. Every status that claims an approval
 *   (`Approved`, a `Running` call to run again) runs only if its approvals meet
 *   that policy (enough distinct approvers, each allowed, none a requester
 *   under four-eyes, each naming the text that runs: the arguments, or the
 *   edited arguments' canonical text for an edit), else the call waits again;
 *   a scheduled time it was not deferred to does not run it (see
 *   `DecisionPolicy`). A model response never carries `decidedUnder`.
 * - A running call may wait on requests for a person's input (`InputRequested`,
 *   `InputSettled`: an MCP server's elicitation); they live on its `Running`
 *   status and change nothing else. Its result ends them; after a crash they
 *   are lost with the connection that held them, and the call fails as
 *   interrupted, saying which request was lost (never run again).
 * - A grant settles a call only if `Grant.check` allows it at the decision's
 *   time: made before the call was proposed, live (not revoked or expired),
 *   covering the call; otherwise the call awaits approval, whatever the
 *   strategy said. A model response never carries grants.
 *
 * Where each rule lives (all under `turn/`): the step, the statuses and
 * `advance` here; approval expiry in `internal/expiry.ts`; delivering queued
 * user messages in `internal/queued.ts`; decision policies and votes in
 * `internal/policy.ts`; whether a grant may settle a call in `GrantRules.ts`
 * (its predicates in `internal/grantPredicate.ts`); a person's approve, edit,
 * reject, cancel and grant in `Messages.ts`; canonical arguments in
 * `internal/jsonText.ts` (`canonicalCall`, the shared bottom layer). The rules
 * a shell applies before an event reaches the reducer are pure functions here
 * too, which the shells call: the decision for a proposed call (unknown tool,
 * arguments that do not decode, no strategy, a strategy that fails) in
 * `Strategies.ts`; the unique ids of a response's calls and which calls left
 * running may run again (`Resume`'s `rerun`) in `Stepping.ts`; what a
 * handler's result becomes when recorded (a result JSON cannot hold fails the
 * call; what the model reads of a failure or a defect) in `Recording.ts`.
 *
 * What makes a step fast is beside this module, not in it: the written-out
 * constructors in `internal/constructors.ts`, positions and array ownership
 * in `internal/position.ts`. The positioned step below (`stepAt`) is not
 * exported: the shells reach it through `Stepping.ts`, by the door in
 * `internal/position.ts`, so this module's API is `step` and `run`, both pure.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as EffectResult from "effect/Result"
import * as Schema from "effect/Schema"
import * as Constructors from "./internal/constructors.js"
import * as Expiry from "./internal/expiry.js"
import * as GrantRules from "./GrantRules.js"
import { canonicalCall } from "../internal/jsonText.js"
import * as Policy from "./internal/policy.js"
import { appendOne, door, markUnshared, type Position, type Positioned as PositionedOf, positionOf, replaceMessage } from "./internal/position.js"
import * as Interruption from "./internal/interruption.js"
import * as Queued from "./internal/queued.js"
import { isMillis, jsonProblem, Millis, Policy as PolicySchema, Review } from "../internal/schema.js"
import * as Messages from "./Messages.js"
import type { Message, ToolCallPart } from "./Messages.js"
import type * as PauseReason from "../data/PauseReason.js"
import * as Usage from "../data/Usage.js"

// ---------------------------------------------------------------------------
// The types: settings, decisions, events, outcomes
// ---------------------------------------------------------------------------

/**
 * Settings of the reducer.
 *
 * @category models
 * @since 0.1.0
 */
export interface Config {
  /** The most model calls one turn may make. */
  readonly maxSteps: number
  /** Instead of pausing when only scheduled calls remain, return `Wait` until the earliest is due. */
  readonly waitForScheduled: boolean
  /**
   * The most model calls input may interrupt in one turn (`InputArrived` with `interrupted`;
   * default `defaultMaxInputRestarts`): one more is the `InputLimit` outcome.
   */
  readonly maxInputRestarts?: number | undefined
  /**
   * What becomes of an answer input interrupted (default `"keep"`): kept as an assistant message
   * (what the model had said, its calls failed with `interruptedByInputError`), or dropped.
   */
  readonly interruptedAnswer?: "keep" | "drop" | undefined
}

/**
 * The default settings: 10 model calls per turn, pause on scheduled calls.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultConfig: Config = { maxSteps: 10, waitForScheduled: false }

/**
 * How many model calls input may interrupt in one turn when `Config.maxInputRestarts` is not set.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaultMaxInputRestarts = 8

/**
 * What the model reads for a call of an answer that input interrupted: it never ran.
 *
 * @category constants
 * @since 0.3.0
 */
export const interruptedByInputError =
  "The user sent a new message while this response was being written, so this call did not run (its arguments may be incomplete). Answer the new message; call the tool again if it is still needed."

/**
 * Why `message` cannot be input while the model answers (`InputArrived`), or `undefined` when it
 * can: only user messages with text and file parts can.
 *
 * @category utils
 * @since 0.3.0
 */
export const inputProblem = (message: unknown): string | undefined => Interruption.inputProblem(message)

/**
 * The key of the mark the reducer puts on the first user message of each burst of input, in its
 * `providerMetadata`: `{ interrupted, usage? }` (see `InputArrived`). Never sent to a model.
 *
 * @category constants
 * @since 0.3.0
 */
export const inputMarkKey = Interruption.markKey

/**
 * How many model calls input interrupted in the turn the messages end in (read from the marks).
 *
 * @category utils
 * @since 0.3.0
 */
export const inputRestarts = (messages: Messages.Messages): number => Interruption.restartsOf(messages, positionOf(messages).turnStart)

/**
 * A decision for one proposed call: a strategy's action (times resolved to epoch millis), or invalid.
 *
 * @category models
 * @since 0.1.0
 */
export type Decision = Data.TaggedEnum<{
  Execute: {}
  /** `policy`: who may decide it (see `DecisionPolicy`); `review`: a reviewer model's verdict. */
  RequireApproval: {
    readonly expiresAt?: number | undefined
    readonly review?: Messages.Review | undefined
    readonly policy?: Messages.DecisionPolicy | undefined
  }
  /** `policy`: who may run it early or cancel it. */
  Defer: { readonly at: number; readonly policy?: Messages.DecisionPolicy | undefined }
  Reject: { readonly reason: string }
  /** The call cannot run (unknown tool, invalid arguments): it fails with `message` for the model. */
  Invalid: { readonly message: string }
  /**
   * Run the call on the authority of grant `grant`, if `Grant.check` allows it (else it awaits approval).
   * `policy`: the tool's or strategy's decision policy; a call under one is never settled by a grant.
   */
  Granted: { readonly grant: string; readonly policy?: Messages.DecisionPolicy | undefined }
}>

const decisionEnum = Data.taggedEnum<Decision>()
/**
 * Constructors of decisions (written out for speed: see `internal/constructors.ts`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const Decision: Data.TaggedEnum.Constructor<Decision> = {
  $is: decisionEnum.$is,
  $match: decisionEnum.$match,
  ...Constructors.decision
}

/**
 * An invalid edit found by the shell when it checked approved calls' edited arguments.
 *
 * @category models
 * @since 0.1.0
 */
export interface InvalidEdit {
  readonly id: string
  readonly detail: string
}

/**
 * Everything that can happen to a turn.
 *
 * @category models
 * @since 0.1.0
 */
export type Event = Data.TaggedEnum<{
  /**
   * Start or resume the turn at time `now`; `invalidEdits` lists approved edits that failed validation,
   * `rerun` the calls left running (by a worker that died) that may run again.
   */
  Resume: {
    readonly now: number
    readonly invalidEdits?: ReadonlyArray<InvalidEdit> | undefined
    readonly rerun?: ReadonlyArray<string> | undefined
  }
  /** The model answered; `message` is the assistant message (its tool calls are taken as proposed). */
  ModelResponded: { readonly message: Message }
  /** The strategies decided the proposed calls at time `now`; `grants` is whom the turn acts for (a grant's scope must match it). */
  Decided: {
    readonly now: number
    readonly decisions: ReadonlyArray<{ readonly id: string; readonly decision: Decision }>
    readonly grants?: GrantRules.Context | undefined
  }
  /** A running call finished with a (JSON) result, and the files it shows the model as files (images…), if any. */
  ToolSucceeded: { readonly id: string; readonly result: unknown; readonly files?: ReadonlyArray<Messages.FilePart> | undefined }
  /** A running call failed with a (JSON) error the model will see, and the files it shows the model as files (images…), if any. */
  ToolFailed: { readonly id: string; readonly error: unknown; readonly files?: ReadonlyArray<Messages.FilePart> | undefined }
  /** Running call `id` waits on a request for a person's input (recorded on its status until settled or the call ends). */
  InputRequested: { readonly id: string; readonly request: Messages.InputRequest }
  /** Running call `id`'s request `requestId` was answered (or cancelled, or timed out): it no longer waits on it. */
  InputSettled: { readonly id: string; readonly requestId: string }
  /**
   * User messages arrived while the turn runs (a burst, in order). `interrupted`: the model call
   * they cut short, as it stood (what it had streamed, its usage if known); absent when no model
   * call was streaming. See `onInputArrived` for the rules.
   */
  InputArrived: { readonly input: ReadonlyArray<Message>; readonly interrupted?: Message | undefined }
}>

const eventEnum = Data.taggedEnum<Event>()
/**
 * Constructors of events (written out for speed: see `internal/constructors.ts`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const Event: Data.TaggedEnum.Constructor<Event> = {
  $is: eventEnum.$is,
  $match: eventEnum.$match,
  ...Constructors.event
}

/**
 * What the shell must do next.
 *
 * @category models
 * @since 0.1.0
 */
export type Outcome = Data.TaggedEnum<{
  /** Call the model with the messages; this is model call number `step` of the turn. */
  CallModel: { readonly step: number }
  /** Ask the strategies about these proposed calls, then send `Decided`. */
  Decide: { readonly calls: ReadonlyArray<ToolCallPart> }
  /** Run these calls (now marked `Running`) with their effective arguments; send one result event each. */
  RunTools: { readonly calls: ReadonlyArray<ToolCallPart> }
  /** Some calls still run: wait for their results. */
  AwaitTools: { readonly ids: ReadonlyArray<string> }
  /** Only scheduled calls remain: wait until `until`, then send `Resume`. */
  Wait: { readonly until: number; readonly reason: PauseReason.PauseReason }
  /** The turn waits for people or times: return to the caller. */
  Pause: { readonly reason: PauseReason.PauseReason; readonly usage: Usage.Usage }
  /** The turn is over: `response` is the model's final message. */
  Complete: { readonly response: Message; readonly usage: Usage.Usage }
  /** The turn used `maxSteps` model calls without a final answer. */
  StepLimit: { readonly maxSteps: number }
  /** Approved edits do not match their tools' parameters; nothing ran, and those calls await approval again. */
  InvalidEdits: { readonly edits: ReadonlyArray<InvalidEdit & { readonly name: string }> }
  /** Tool calls of an earlier response are still pending while new input follows them. */
  PendingCalls: { readonly ids: ReadonlyArray<string> }
  /** Input interrupted more than `maxInputRestarts` model calls of this turn: the input is in the messages, the model is not called. */
  InputLimit: { readonly maxInputRestarts: number }
}>

const outcomeEnum = Data.taggedEnum<Outcome>()
/**
 * Constructors of outcomes (written out for speed: see `internal/constructors.ts`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const Outcome: Data.TaggedEnum.Constructor<Outcome> = {
  $is: outcomeEnum.$is,
  $match: outcomeEnum.$match,
  ...Constructors.outcome
}

/**
 * The result of one step: the next messages and what to do.
 *
 * @category models
 * @since 0.1.0
 */
export type Result = readonly [Messages.Messages, Outcome]

// ---------------------------------------------------------------------------
// Reading and changing calls
// ---------------------------------------------------------------------------

const isProposed = (call: ToolCallPart): boolean => call.status._tag === "Proposed"
const isRunning = (call: ToolCallPart): boolean => call.status._tag === "Running"

/** Flags of what a message's calls are (see `callKinds`). */
const Kind = { Call: 1, Proposed: 2, Running: 4, Unresolved: 8 } as const

/** What the calls of `message` are, as `Kind` flags: 0 when it has none. */
const callKinds = (message: Message): number => {
  let kinds = 0
  for (const part of message.parts) {
    if (part._tag !== "ToolCall") continue
    const tag = part.status._tag
    kinds |= Kind.Call | (tag === "Proposed" ? Kind.Proposed : tag === "Running" ? Kind.Running : 0) |
      (Messages.isResolved(part) ? 0 : Kind.Unresolved)
  }
  return kinds
}

/** Index of the last message, when it is an assistant message (then it is of this turn). */
const lastResponseIndex = (messages: Messages.Messages): number | undefined => {
  const last = messages.length - 1
  return last >= 0 && messages[last]!.role === "assistant" ? last : undefined
}

/** The result of one step with the position of its messages (see `internal/position.ts`). */
type Positioned = PositionedOf<Outcome>

const mapCalls = (
  message: Message,
  f: (call: ToolCallPart) => ToolCallPart
): Message => {
  // The parts are copied only once a call changes: most events leave most messages as they are.
  const source = message.parts
  let parts: Array<Messages.Part> | undefined
  for (let i = 0; i < source.length; i++) {
    const part = source[i]!
    if (part._tag !== "ToolCall") continue
    const next = f(part)
    if (next !== part) (parts ??= source.slice())[i] = next
  }
  return parts === undefined ? message : { ...message, parts }
}

/**
 * The decision record of a call, to carry into its next status: who decided it stays on the call
 * through every transition (a rejection by policy after the approval included). The one place it
 * is dropped is `unapproved`: an approval undone, the call waits for a new decision.
 */
const decided = (call: ToolCallPart): { decision?: Messages.Decision } => Messages.decisionOf(call)

/** What a call carries into its next status once it was approved: its edited arguments and its decision record. */
const edited = (call: ToolCallPart): { editedArguments?: string; decision?: Messages.Decision } => {
  const status = call.status
  return "editedArguments" in status && status.editedArguments !== undefined
    ? { editedArguments: status.editedArguments, ...decided(call) }
    : decided(call)
}

/**
 * What the model reads for a call interrupted while it ran (a crash, the turn interrupted, its
 * handler interrupted): the same text from the reducer (a call found `Running` on `Resume`) and
 * from the shells.
 *
 * @category errors
 * @since 0.3.0
 */
export const interruptedError =
  "The call was interrupted while running; its outcome is unknown, and it was not run again to avoid repeating its effects."

/**
 * The most input requests one running call records at once (more are ignored: a flood cannot grow the state).
 *
 * @category constants
 * @since 0.3.0
 */
export const maxInputRequests = 16

/**
 * Why a call left running failed: `interruptedError`, or, when it waited on requests for a
 * person's input, which requests were lost with the connection that held them.
 *
 * @category utils
 * @since 0.3.0
 */
export const interruptedText = (call: ToolCallPart): string => {
  const requests = call.status._tag === "Running" ? call.status.inputRequests ?? [] : []
  if (requests.length === 0) return interruptedError
  const asked = requests.map((request) => `${JSON.stringify(request.message)} (${request.id}, from ${request.from})`).join("; ")
  return `The call was interrupted while it waited for a person's answer to ${asked}; that request was lost with the connection that held it and was never answered. The call's outcome is unknown, and it was not run again to avoid repeating its effects.`
}

/**
 * Whether a call's final status holds its result alone: no files, and nothing `edited` carries
 * (edited arguments, a decision record). Such a status is then built as a plain literal: V8 sizes
 * a literal to its keys, while one built with spreads keeps room for more (16 bytes a status,
 * measured by packages/bench scenario 11). Same keys in the same order either way.
 */
const carriesNothing = (call: ToolCallPart, files: ReadonlyArray<Messages.FilePart> | undefined): boolean => {
  const status = call.status
  return (files === undefined || files.length === 0) &&
    !("editedArguments" in status && status.editedArguments !== undefined) &&
    !("decision" in status && status.decision !== undefined)
}

/**
 * A running call finished: `Completed` with its result or `Failed` with its error, with the files
 * it shows the model and what it carries from its approval (edited arguments, decision record).
 */
const finished = (
  call: ToolCallPart,
  tag: "Completed" | "Failed",
  value: unknown,
  files: ReadonlyArray<Messages.FilePart> | undefined
): ToolCallPart => {
  // Nothing to carry: a plain literal, sized to its keys (see `carriesNothing`).
  if (carriesNothing(call, files)) {
    return { ...call, status: tag === "Completed" ? { _tag: "Completed", result: value } : { _tag: "Failed", error: value } }
  }
  const carried = { ...(files === undefined || files.length === 0 ? {} : { files }), ...edited(call) }
  return {
    ...call,
    status: tag === "Completed" ? { _tag: "Completed", result: value, ...carried } : { _tag: "Failed", error: value, ...carried }
  }
}

/**
 * Whether a value is an input request the state may hold (the shape of `Messages.InputRequest`, plain JSON schema).
 *
 * @category guards
 * @since 0.3.0
 */
export const isValidInputRequest = (request: unknown): request is Messages.InputRequest => {
  if (typeof request !== "object" || request === null) return false
  const r = request as { readonly [key: string]: unknown }
  return typeof r.id === "string" && r.id !== "" && typeof r.from === "string" && typeof r.message === "string" &&
    isMillis(r.deadline) && typeof r.requestedSchema === "object" && r.requestedSchema !== null &&
    !Array.isArray(r.requestedSchema) && jsonProblem(r.requestedSchema) === undefined
}

/** A running call with `request` added to the requests it waits on (unchanged if invalid, known, or over the limit). */
const withInput = (call: ToolCallPart, request: unknown): ToolCallPart => {
  const status = call.status
  if (status._tag !== "Running" || !isValidInputRequest(request)) return call
  const requests = status.inputRequests ?? []
  if (requests.length >= maxInputRequests || requests.some((known) => known.id === request.id)) return call
  const { deadline, from, id, message, requestedSchema } = request
  return { ...call, status: { ...status, inputRequests: [...requests, { id, from, message, requestedSchema, deadline }] } }
}

/** A running call no longer waiting on request `requestId` (unchanged if it did not). */
const withoutInput = (call: ToolCallPart, requestId: string): ToolCallPart => {
  const status = call.status
  if (status._tag !== "Running" || status.inputRequests === undefined) return call
  const requests = status.inputRequests.filter((request) => request.id !== requestId)
  if (requests.length === status.inputRequests.length) return call
  const { inputRequests: _, ...rest } = status
  return { ...call, status: requests.length === 0 ? rest : { ...rest, inputRequests: requests } }
}

const noIds: ReadonlyArray<string> = []

/** Pending calls in `messages` from `from` up to `upTo` (before the current response: stranded by new input); none is `noIds`, with no garbage. */
const strandedIds = (messages: Messages.Messages, from: number, upTo: number): ReadonlyArray<string> => {
  let ids: Array<string> | undefined
  for (let i = from; i < upTo; i++) {
    for (const part of messages[i]!.parts) {
      if (part._tag === "ToolCall" && !Messages.isResolved(part)) (ids ??= []).push(part.id)
    }
  }
  return ids ?? noIds
}

/** `position` with what was learnt: no call before `upTo` is pending. */
const settledTo = (position: Position, upTo: number): Position =>
  upTo > position.settled ? { of: position.of, turnStart: position.turnStart, steps: position.steps, settled: upTo } : position

/** The usage of every model response of the turn starting at `turnStart`, added up (as `Messages.turnUsage`). */
const usageFrom = (messages: Messages.Messages, turnStart: number): Usage.Usage => {
  // A turn that input restarted began before its last user message: its usage is counted from its origin.
  const origin = turnStart > 0 && messages[turnStart - 1]!.providerMetadata?.[Interruption.markKey] !== undefined
    ? Interruption.originOf(messages, turnStart)
    : turnStart
  let usage = origin === turnStart ? Usage.empty : Interruption.droppedUsage(messages, origin, turnStart) ?? Usage.empty
  for (let i = origin; i < messages.length; i++) {
    const message = messages[i]!
    if (message.role === "assistant" && message.usage) usage = Usage.add(usage, message.usage)
  }
  return usage
}

// ---------------------------------------------------------------------------
// What comes next (`advance`): every step ends here
// ---------------------------------------------------------------------------

/**
 * From a state with no event pending, works out what comes next. With `now`
 * (on `Resume` and `Decided`), expired approvals become `Expired` and
 * scheduled calls that are due run. `owned`: this step made `position.of` itself.
 */
const advance = (start: Position, config: Config, now: number | undefined, owned: boolean): Positioned => {
  const messages = start.of
  const lastIndex = lastResponseIndex(messages)
  const steps = start.steps
  // Calls before the current response (or before new input) can no longer be
  // resolved by this turn: never call the model or complete past them.
  const upTo = lastIndex ?? messages.length
  const stranded = strandedIds(messages, start.settled, upTo)
  if (stranded.length > 0) return [messages, Outcome.PendingCalls({ ids: stranded }), start]
  const position = settledTo(start, upTo)
  if (lastIndex === undefined) {
    return steps >= config.maxSteps
      ? [messages, Outcome.StepLimit({ maxSteps: config.maxSteps }), position]
      : [messages, Outcome.CallModel({ step: steps + 1 }), position]
  }
  let response = messages[lastIndex]!
  // What the response's calls are, read without making a list of them (this runs on every event).
  const kinds = callKinds(response)
  if (kinds === 0) {
    const delivered = Queued.deliver(messages, lastIndex)
    if (delivered !== undefined) return advance(positionOf(delivered), config, now, true)
    return [messages, Outcome.Complete({ response, usage: usageFrom(messages, position.turnStart) }), position]
  }
  // `some` first: the lists are made only when there is one to give (no garbage per event otherwise).
  if ((kinds & Kind.Proposed) !== 0) {
    return [messages, Outcome.Decide({ calls: Messages.toolCallsOf(response).filter(isProposed) }), position]
  }
  if ((kinds & Kind.Running) !== 0) {
    return [messages, Outcome.AwaitTools({ ids: Messages.toolCallsOf(response).filter(isRunning).map((call) => call.id) }), position]
  }
  // Every call resolved (each step's state after its results): nothing to expire, start or wait for.
  if ((kinds & Kind.Unresolved) === 0) return afterResolved(position, lastIndex, config, now)

  // Expire approvals and start what may run.
  const started: Array<ToolCallPart> = []
  response = mapCalls(response, (given) => {
    // A scheduled time the call's fixed policy does not allow (written past it) does not count.
    const lawful = Policy.lawfulSchedule(given)
    const call = lawful === undefined ? given : { ...given, status: lawful }
    const status = call.status
    // A time that is not a valid instant (state built by hand) never counts as "not yet": fail closed.
    if (status._tag === "Scheduled" && !isMillis(status.at)) {
      return { ...call, status: { _tag: "AwaitingApproval", ...(status.policy === undefined ? {} : { policy: status.policy }) } }
    }
    if (status._tag === "AwaitingApproval" && status.expiresAt !== undefined && !isMillis(status.expiresAt)) {
      return Expiry.expired(call, status.expiresAt, false)
    }
    if (
      now !== undefined && status._tag === "AwaitingApproval" && status.expiresAt !== undefined &&
      status.expiresAt <= now
    ) {
      return Expiry.expired(call, status.expiresAt, false)
    }
    if (
      status._tag === "Approved" && status.expiresAt !== undefined &&
      (!isMillis(status.expiresAt) || (now !== undefined && status.expiresAt <= now))
    ) {
      // Fail closed: an approval only counts if the turn resumes before the request's deadline.
      // Who approved (too late) stays on the record.
      return Expiry.expired(call, status.expiresAt, true)
    }
    // An approval that does not meet the decision policy fixed on the call does not count: the call waits again.
    if (status._tag === "Approved" && !Policy.satisfied(messages, call)) return { ...call, status: Policy.unmet(call) }
    // A call approved by a grant runs only while that grant may still settle it (revoked or expired since: a person decides).
    if (status._tag === "Approved" && status.decision?.grant !== undefined && !grantHolds(messages, status.decision.grant, now)) {
      return { ...call, status: { _tag: "AwaitingApproval" } }
    }
    if (status._tag === "Approved" || (now !== undefined && status._tag === "Scheduled" && status.at <= now)) {
      // A call run at its time runs the model's arguments: only an approval carries an edit.
      const next: ToolCallPart = { ...call, status: { _tag: "Running", ...(status._tag === "Approved" ? edited(call) : decided(call)) } }
      started.push(next)
      return next
    }
    return call
  })
  const next = response === messages[lastIndex] ? position : replaceMessage(position, lastIndex, response, owned)
  const nextMessages = next.of
  if (started.length > 0) return [nextMessages, Outcome.RunTools({ calls: started }), next]

  const approvals: Array<string> = []
  const scheduled: Array<{ id: string; at: number }> = []
  for (const call of Messages.toolCallsOf(response)) {
    if (call.status._tag === "AwaitingApproval") approvals.push(call.id)
    else if (call.status._tag === "Scheduled") scheduled.push({ id: call.id, at: call.status.at })
  }
  if (approvals.length === 0 && scheduled.length === 0) {
    return afterResolved(next, lastIndex, config, now)
  }
  const reason = pauseReason(approvals, scheduled)
  if (approvals.length === 0 && config.waitForScheduled) {
    return [nextMessages, Outcome.Wait({ until: Math.min(...scheduled.map((s) => s.at)), reason }), next]
  }
  return [nextMessages, Outcome.Pause({ reason, usage: usageFrom(nextMessages, next.turnStart) }), next]
}

/**
 * What comes next once every call of the last response (at `lastIndex`) is resolved: user
 * messages held during the pause (see `Steering`) are answered now, else the model is called
 * again, within the step limit.
 */
const afterResolved = (position: Position, lastIndex: number, config: Config, now: number | undefined): Positioned => {
  const messages = position.of
  const delivered = Queued.deliver(messages, lastIndex)
  if (delivered !== undefined) return advance(positionOf(delivered), config, now, true)
  return position.steps >= config.maxSteps
    ? [messages, Outcome.StepLimit({ maxSteps: config.maxSteps }), position]
    : [messages, Outcome.CallModel({ step: position.steps + 1 }), position]
}

// ---------------------------------------------------------------------------
// Deciding a call: decisions, grants, decision policies
// ---------------------------------------------------------------------------

/** Whether the grant that approved `call` still holds: not revoked, and (with a time) not expired; its other conditions were checked when it settled the call. */
const grantHolds = (messages: Messages.Messages, id: string, now: number | undefined): boolean => {
  const located = GrantRules.find(messages, id)
  if (located === undefined || located.grant.revoked !== undefined || !isMillis(located.grant.expiresAt)) return false
  return now === undefined || now < located.grant.expiresAt
}

/**
 * Builds the pause reason from the calls awaiting approval and the scheduled calls.
 *
 * @category utils
 * @since 0.1.0
 */
export const pauseReason = (
  approvals: ReadonlyArray<string>,
  scheduled: ReadonlyArray<{ readonly id: string; readonly at: number }>
): PauseReason.PauseReason => {
  if (scheduled.length === 0) return { _tag: "AwaitingApproval", toolIds: approvals }
  if (approvals.length === 0) {
    return { _tag: "Scheduled", toolIds: scheduled.map((s) => s.id), earliest: Math.min(...scheduled.map((s) => s.at)) }
  }
  return { _tag: "Mixed", approvals, scheduled }
}

/** Whether a value is a reviewer's verdict the state may hold. */
const isReview = Schema.is(Review)

/** A review's own fields only (a strategy may hand over an object holding more). */
const ownReview = (review: Messages.Review): Messages.Review => ({
  verdict: review.verdict,
  reason: review.reason,
  ...(review.confidence === undefined ? {} : { confidence: review.confidence })
})

/**
 * Whether a decision is one the reducer knows, with valid times and texts (else the call fails closed).
 *
 * @category guards
 * @since 0.1.0
 */
export const isValidDecision = (decision: unknown): decision is Decision => {
  if (typeof decision !== "object" || decision === null) return false
  const d = decision as { readonly _tag?: unknown; readonly [key: string]: unknown }
  switch (d._tag) {
    case "Execute":
      return true
    case "RequireApproval":
      return (d.expiresAt === undefined || isMillis(d.expiresAt)) && (d.review === undefined || isReview(d.review)) &&
        (d.policy === undefined || Policy.isValid(d.policy))
    case "Defer":
      return isMillis(d.at) && (d.policy === undefined || Policy.isValid(d.policy))
    case "Reject":
      return typeof d.reason === "string"
    case "Invalid":
      return typeof d.message === "string"
    case "Granted":
      return typeof d.grant === "string" && (d.policy === undefined || Policy.isValid(d.policy))
    default:
      return false
  }
}

/** A decision policy as a decision may carry it: the stored `Policy`, its ids and roles canonical (see `DecisionPolicy`). */
const ValidPolicy = PolicySchema.check(Schema.makeFilter((policy) => Policy.policyIdsProblem(policy)))

/**
 * `Decision` as a Schema, for shells that record decisions (`@chat-ts/workflow`): it takes exactly
 * the decisions `isValidDecision` takes (valid times, reviews and policies).
 *
 * @category schemas
 * @since 0.3.0
 */
export const DecisionSchema: Schema.Codec<Decision> = Schema.Union([
  Schema.TaggedStruct("Execute", {}),
  Schema.TaggedStruct("RequireApproval", {
    expiresAt: Schema.optional(Millis),
    review: Schema.optional(Review),
    policy: Schema.optional(ValidPolicy)
  }),
  Schema.TaggedStruct("Defer", { at: Millis, policy: Schema.optional(ValidPolicy) }),
  Schema.TaggedStruct("Reject", { reason: Schema.String }),
  Schema.TaggedStruct("Invalid", { message: Schema.String }),
  Schema.TaggedStruct("Granted", { grant: Schema.String, policy: Schema.optional(ValidPolicy) })
])

/** What a call given a decision that is not valid is rejected with, when the decision names a policy. */
const invalidPolicyReason = "Its decision policy is not valid, so nobody could approve it."

/**
 * The valid decision the reducer takes `decision` for: itself when valid, else the one it fails
 * closed with (`RequireApproval`; a `Reject` by policy when it names a policy). A shell that records
 * decisions (with `DecisionSchema`) records this one: replayed, it changes the call the same way.
 *
 * @category utils
 * @since 0.3.0
 */
export const validDecision = (decision: unknown): Decision =>
  isValidDecision(decision)
    ? decision
    : hasPolicy(decision)
    ? Decision.Reject({ reason: invalidPolicyReason })
    : Decision.RequireApproval({})

/** A grant's decision, if the grant may settle the call (`Grant.check`); else the call awaits approval. */
const applyGrant = (
  messages: Messages.Messages,
  call: ToolCallPart,
  decision: Extract<Decision, { _tag: "Granted" }>,
  now: number,
  context: GrantRules.Context | undefined
): ToolCallPart => {
  // A grant stands for one person's yes: it never replaces the people a decision policy names.
  if (decision.policy !== undefined) return { ...call, status: { _tag: "AwaitingApproval", policy: decision.policy } }
  const checked = GrantRules.check(messages, decision.grant, call, now, context)
  return EffectResult.isSuccess(checked)
    ? { ...call, status: { _tag: "Approved", decision: { by: checked.success.by, at: now, grant: checked.success.id } } }
    : { ...call, status: { _tag: "AwaitingApproval" } }
}

const applyDecision = (call: ToolCallPart, decision: Decision, now: number): ToolCallPart => {
  // Fail closed: whatever the reducer cannot read makes the call wait for a person; a policy it
  // cannot read would leave nobody, or anybody, to decide: the call is rejected by policy.
  if (!isValidDecision(decision)) return hasPolicy(decision) ? invalidPolicy(call) : { ...call, status: { _tag: "AwaitingApproval" } }
  switch (decision._tag) {
    case "Execute":
      return { ...call, status: { _tag: "Approved" } }
    case "RequireApproval":
      return {
        ...call,
        // Nothing to add: a plain literal, sized to its one key (see `carriesNothing`).
        status: decision.expiresAt === undefined && decision.review === undefined && decision.policy === undefined ? { _tag: "AwaitingApproval" } : {
          _tag: "AwaitingApproval",
          ...(decision.expiresAt === undefined ? {} : { expiresAt: decision.expiresAt }),
          ...(decision.review === undefined ? {} : { review: ownReview(decision.review) }),
          ...(decision.policy === undefined ? {} : { policy: decision.policy })
        }
      }
    case "Defer":
      return {
        ...call,
        status: isMillis(now) && decision.at <= now
          ? { _tag: "Approved" }
          : { _tag: "Scheduled", at: decision.at, ...(decision.policy === undefined ? {} : { policy: decision.policy }) }
      }
    case "Reject":
      return { ...call, status: { _tag: "Rejected", by: "policy", reason: decision.reason } }
    case "Invalid":
      return { ...call, status: { _tag: "Failed", error: decision.message } }
    case "Granted":
      // Only `onDecided` can check a grant (it needs the messages): anywhere else it is not enough to run.
      return { ...call, status: { _tag: "AwaitingApproval", ...(decision.policy === undefined ? {} : { policy: decision.policy }) } }
  }
}

/**
 * A call just decided, with the decision policy it now waits under fixed on it (`decidedUnder`:
 * the policy, and the time it is deferred to): from now on every approval of it is judged by that
 * rule, whatever status is written later. A policy fixed earlier (a call decided again) is kept.
 */
const fixPolicy = (call: ToolCallPart): ToolCallPart => {
  if (call.decidedUnder !== undefined) return call
  const status = call.status
  if (status._tag === "AwaitingApproval" && status.policy !== undefined) return { ...call, decidedUnder: { policy: status.policy } }
  if (status._tag === "Scheduled" && status.policy !== undefined) return { ...call, decidedUnder: { policy: status.policy, at: status.at } }
  return call
}

/** Whether a decision (not a valid one) names a policy. */
const hasPolicy = (decision: unknown): boolean =>
  typeof decision === "object" && decision !== null && "policy" in decision && decision.policy !== undefined

const invalidPolicy = (call: ToolCallPart): ToolCallPart => ({
  ...call,
  status: { _tag: "Rejected", by: "policy", reason: invalidPolicyReason }
})

// ---------------------------------------------------------------------------
// The events: one handler each
// ---------------------------------------------------------------------------

/** The status an approved call had before the person approved it (the approval undone: no decision record). */
const unapproved = (call: ToolCallPart): ToolCallPart["status"] => {
  const status = call.status
  if (status._tag !== "Approved") return status
  // Its decision policy stays: the new decision is judged by the same rule.
  if (Policy.decidedUnderOf(call) !== undefined) return Policy.unmet(call)
  if (status.scheduledAt !== undefined) return { _tag: "Scheduled", at: status.scheduledAt }
  return status.expiresAt === undefined ? { _tag: "AwaitingApproval" } : { _tag: "AwaitingApproval", expiresAt: status.expiresAt }
}

const onResume = (position: Position, event: Extract<Event, { _tag: "Resume" }>, config: Config): Positioned => {
  const messages = position.of
  const lastIndex = lastResponseIndex(messages)
  if (lastIndex !== undefined) {
    const response = messages[lastIndex]!
    const invalid = event.invalidEdits ?? []
    if (invalid.length > 0) {
      const edits: Array<InvalidEdit & { name: string }> = []
      for (const edit of invalid) {
        const call = Messages.toolCallsOf(response).find((c) => c.id === edit.id)
        const status = call?.status
        // An approval past its deadline is `Expired` below, whatever its edit.
        if (
          call !== undefined && status?._tag === "Approved" && status.editedArguments !== undefined &&
          (status.expiresAt === undefined || (isMillis(status.expiresAt) && status.expiresAt > event.now))
        ) {
          edits.push({ ...edit, name: call.name })
        }
      }
      if (edits.length > 0) {
        // Nothing runs; the refused calls are put back exactly as they were before the
        // approval (deadline or scheduled time included) and wait for a new decision.
        const refused = new Set(edits.map((edit) => edit.id))
        const reverted = mapCalls(response, (call) => refused.has(call.id) ? { ...call, status: unapproved(call) } : call)
        const next = replaceMessage(position, lastIndex, reverted, false)
        return [next.of, Outcome.InvalidEdits({ edits }), next]
      }
    }
    // A call left running by a crash or an interruption is never run again, unless it may (`rerun`).
    // Made when a running call is met (rarely): a resume with none needs no set.
    let rerun: ReadonlySet<string> | undefined
    const restarted: Array<ToolCallPart> = []
    const recovered = mapCalls(response, (call) => {
      if (call.status._tag !== "Running") return call
      rerun ??= new Set(event.rerun ?? [])
      // A run claims an approval: under a decision policy it starts again only if that approval meets it.
      if (!rerun.has(call.id) || !Policy.mayRerun(messages, call, event.now)) {
        return { ...call, status: { _tag: "Failed", error: interruptedText(call), ...edited(call) } }
      }
      const next: ToolCallPart = { ...call, status: { _tag: "Running", ...edited(call), attempt: (call.status.attempt ?? 1) + 1 } }
      restarted.push(next)
      return next
    })
    if (restarted.length > 0) {
      const next = replaceMessage(position, lastIndex, recovered, false)
      return [next.of, Outcome.RunTools({ calls: restarted }), next]
    }
    if (recovered !== response) return advance(replaceMessage(position, lastIndex, recovered, false), config, event.now, true)
  }
  return advance(position, config, event.now, false)
}

const onModelResponded = (
  position: Position,
  event: Extract<Event, { _tag: "ModelResponded" }>,
  config: Config
): Positioned => {
  const current = advance(position, config, undefined, false)
  // A response is only taken when the model was due to be called.
  if (current[1]._tag !== "CallModel") return current
  const cut = cutShort(event.message.finishReason)
  // Whatever status a response claims, its calls start undecided: nothing runs without a decision.
  // A response cut short may hold calls whose arguments are incomplete or unchecked: none of them runs.
  // Arguments that give a key twice enter as the canonical text of their value (see `rawArguments`).
  const parts: Message["parts"] = event.message.parts.map((part): Messages.Part =>
    part._tag !== "ToolCall"
      ? part
      : { ...canonicalCall(undecided(part)), status: cut === undefined ? { _tag: "Proposed" } : { _tag: "Failed", error: cut } }
  )
  const message: Message = { ...withoutGrants(event.message), role: "assistant", parts }
  const before = current[2]
  const appended = appendOne(before.of, message)
  return advance(
    { of: appended, turnStart: before.turnStart, steps: before.steps + 1, settled: before.settled },
    config,
    undefined,
    true
  )
}

/**
 * A response without the grants it claims (only the turn's own records hold grants): the message
 * itself when it has no such key, as a model's never does (an object rest would copy it every step).
 */
const withoutGrants = (message: Message): Omit<Message, "grants"> => {
  if (!("grants" in message)) return message
  const { grants: _forged, ...response } = message
  return response
}

/** A call of a model response without a decision policy it claims (only the reducer fixes one, when the call is decided). */
const undecided = (part: ToolCallPart): ToolCallPart => {
  if (part.decidedUnder === undefined) return part
  const { decidedUnder: _, ...rest } = part
  return rest
}

/** Why calls of a response that ended this way do not run, or `undefined` when they may. */
const cutShort = (reason: Message["finishReason"]): string | undefined => {
  switch (reason) {
    case "length":
      return "The response was cut off at the output token limit, so this call did not run: its arguments may be incomplete. Call the tool again if it is still needed."
    case "content-filter":
      return "The response was stopped by the provider's content filter, so this call did not run."
    case "error":
      return "The response ended with an error, so this call did not run."
    default:
      return undefined
  }
}

/** What `decisionLookup` gives for a call no decision names. */
const noDecision: unique symbol = Symbol("noDecision")

/** The decision of each call by its id (the last one given when an id comes twice); one decision needs no `Map`. */
const decisionLookup = (
  decisions: Extract<Event, { _tag: "Decided" }>["decisions"]
): (id: string) => Decision | typeof noDecision => {
  const only = decisions.length === 1 ? decisions[0] : undefined
  if (only !== undefined) return (id) => (id === only.id ? only.decision : noDecision)
  const byId = new Map(decisions.map((d) => [d.id, d.decision]))
  return (id) => (byId.has(id) ? byId.get(id)! : noDecision)
}

const onDecided = (
  position: Position,
  event: Extract<Event, { _tag: "Decided" }>,
  config: Config,
  owned: boolean
): Positioned => {
  const messages = position.of
  const lastIndex = lastResponseIndex(messages)
  if (lastIndex === undefined) return advance(position, config, event.now, false)
  const decisionOf = decisionLookup(event.decisions)
  const response = mapCalls(messages[lastIndex]!, (call) => {
    // A call given a decision that is not one (even `undefined`) fails closed in `applyDecision`.
    if (call.status._tag !== "Proposed") return call
    const decision = decisionOf(call.id)
    if (decision === noDecision) return call
    return fixPolicy(
      isValidDecision(decision) && decision._tag === "Granted"
        ? applyGrant(messages, call, decision, event.now, event.grants)
        : applyDecision(call, decision, event.now)
    )
  })
  return advance(replaceMessage(position, lastIndex, response, owned), config, event.now, true)
}

const onToolResult = (
  position: Position,
  id: string,
  finish: (call: ToolCallPart) => ToolCallPart,
  config: Config,
  owned: boolean
): Positioned => {
  const messages = position.of
  const lastIndex = lastResponseIndex(messages)
  if (lastIndex === undefined) return advance(position, config, undefined, false)
  const response = mapCalls(messages[lastIndex]!, (call) =>
    call.id === id && call.status._tag === "Running" ? finish(call) : call)
  return response === messages[lastIndex]
    ? advance(position, config, undefined, false)
    : advance(replaceMessage(position, lastIndex, response, owned), config, undefined, true)
}

/**
 * Input while the turn runs (a burst of user messages, in order). While the model is due (it was
 * streaming: `interrupted` is what it had said), the input ends that call: the answer so far is kept
 * as an assistant message whose calls (whole or begun) fail with `interruptedByInputError` (or is
 * dropped, by `interruptedAnswer`), the burst is appended (merged per sender), and the model is
 * called again: not a step (the step count starts again after the input, as after any user message),
 * but a restart, at most `maxInputRestarts` per turn, then `InputLimit`. While calls are pending
 * (undecided, running, waiting for a person or a time) nothing is interrupted and no decision is
 * skipped: the input is held on the response (`queued`) and answered once every call is resolved.
 * After a final answer (or at the step limit) the input is appended and answered. Input that is not
 * user messages of text and files, or that comes with calls of an earlier response pending, changes nothing.
 */
const onInputArrived = (position: Position, event: Extract<Event, { _tag: "InputArrived" }>, config: Config): Positioned => {
  const current = advance(position, config, undefined, false)
  const input = event.input
  if (!Array.isArray(input) || input.length === 0 || input.some((message) => Interruption.inputProblem(message) !== undefined)) {
    return current
  }
  const [messages, outcome, at] = current
  switch (outcome._tag) {
    case "PendingCalls":
    case "InvalidEdits":
    case "InputLimit":
      return current
    case "CallModel":
      return event.interrupted === undefined || !Array.isArray(event.interrupted.parts)
        ? advance(positionOf([...messages, ...Interruption.burst(input, { interrupted: false })]), config, undefined, true)
        : restart(messages, at, input, event.interrupted, config)
    case "Complete":
    case "StepLimit":
      return advance(positionOf([...messages, ...Interruption.burst(input, { interrupted: false })]), config, undefined, true)
    default: {
      // Calls are pending: held on the response, delivered (in order) once they are all resolved.
      const lastIndex = messages.length - 1
      const response = messages[lastIndex]!
      const held: Array<Messages.QueuedMessage> = input.map((message) => ({
        parts: message.parts as Messages.QueuedMessage["parts"],
        ...(message.sender === undefined ? {} : { sender: message.sender })
      }))
      const next = replaceMessage(at, lastIndex, { ...response, queued: [...(response.queued ?? []), ...held] }, false)
      return [next.of, outcome, next]
    }
  }
}

/** The model call `interrupted` was cut short by `input`: the answer kept or dropped, the input appended, the model called again (within the limit). */
const restart = (
  messages: Messages.Messages,
  at: Position,
  input: ReadonlyArray<Message>,
  interrupted: Message,
  config: Config
): Positioned => {
  const max = config.maxInputRestarts
  const limit = max !== undefined && Number.isInteger(max) && max >= 0 ? max : defaultMaxInputRestarts
  const restarts = Interruption.restartsOf(messages, at.turnStart)
  const kept = config.interruptedAnswer === "drop" ? undefined : Interruption.keptAnswer(interrupted, interruptedByInputError)
  // A dropped answer's usage stays counted: on the mark of the input that cut it.
  const usage = kept === undefined ? interrupted.usage : undefined
  const next = [
    ...messages,
    ...(kept === undefined ? [] : [kept]),
    ...Interruption.burst(input, { interrupted: true, usage })
  ]
  const nextPosition = positionOf(next)
  return restarts + 1 > limit
    ? [next, Outcome.InputLimit({ maxInputRestarts: limit }), nextPosition]
    : advance(nextPosition, config, undefined, true)
}

// ---------------------------------------------------------------------------
// Entry points: `step` and `run` (and `stepAt`, for the shells, not exported)
// ---------------------------------------------------------------------------

/**
 * `step` for shells that apply many events: `position` is what the previous
 * `stepAt` returned for `messages` (ignored, and worked out again, when it
 * describes another array). Same result as `step`, plus the position of the
 * next messages, so that an event costs O(1) whatever the history's length.
 * Pure like `step`, with one exception the caller opts into: a position marked
 * `unshared` lets this step write that array in place instead of copying it
 * (see `internal/position.ts`), so a shell copies the history once per model
 * call, not once per event. Not exported: `Stepping.stepAt` is its door.
 */
const stepAt = (
  messages: Messages.Messages,
  event: Event,
  config: Config = defaultConfig,
  position?: Position
): Positioned => {
  const at = position !== undefined && position.of === messages ? position : positionOf(messages)
  const owned = at.unshared === true
  const result = dispatch(at, event, config, owned)
  const next = result[2]
  // Whatever this step made is the caller's alone until it hands it out.
  return next.of !== messages || owned ? [result[0], result[1], markUnshared(next, true)] : result
}

const dispatch = (at: Position, event: Event, config: Config, owned: boolean): Positioned => {
  switch (event._tag) {
    case "Resume":
      return onResume(at, event, config)
    case "ModelResponded":
      return onModelResponded(at, event, config)
    case "Decided":
      return onDecided(at, event, config, owned)
    case "ToolSucceeded":
      return onToolResult(at, event.id, (call) => finished(call, "Completed", event.result, event.files), config, owned)
    case "ToolFailed":
      return onToolResult(at, event.id, (call) => finished(call, "Failed", event.error, event.files), config, owned)
    case "InputRequested":
      return onToolResult(at, event.id, (call) => withInput(call, event.request), config, owned)
    case "InputSettled":
      return onToolResult(at, event.id, (call) => withoutInput(call, event.requestId), config, owned)
    case "InputArrived":
      return onInputArrived(at, event, config)
  }
}

/**
 * One step of the turn: applies `event` to `messages` and says what to do
 * next. Pure and total: the input is never mutated, and what an event that
 * does not fit the state carries (a result for a call that is not running, a
 * response when the model was not due) is dropped; the outcome is then what the
 * state itself calls for (which may start calls a person already approved).
 *
 * @example
 * ```ts
 * import { Messages, Turn } from "@chat-ts/core"
 *
 * // A fresh turn: call the model (step 1); the messages are unchanged.
 * const [start, first] = Turn.step(Messages.fromUser("Hi"), Turn.Event.Resume({ now: Date.now() }))
 *
 * // The model answered with text only: the turn is Complete, with the response appended.
 * const [end, second] = Turn.step(start, Turn.Event.ModelResponded({ message: Messages.assistant("Hello!") }))
 * ```
 *
 * @category reducer
 * @since 0.1.0
 */
export const step = (messages: Messages.Messages, event: Event, config: Config = defaultConfig): Result => {
  const [next, outcome] = stepAt(messages, event, config)
  return [next, outcome]
}

/**
 * Applies events one after another from `messages`, returning the last result.
 * The position is carried from event to event (see `stepAt`), and the arrays
 * made on the way, which nobody else sees, are written in place.
 *
 * @category reducer
 * @since 0.1.0
 */
export const run = (messages: Messages.Messages, events: Iterable<Event>, config: Config = defaultConfig): Result => {
  // No event, no step: the messages as given, and an outcome that asks the shell for nothing
  // (no call runs, none is waited for). A shell steps at least one event (`Resume`) to learn more.
  let result: Result = [messages, Outcome.AwaitTools({ ids: [] })]
  let position: Position | undefined
  for (const event of events) {
    const [next, outcome, at] = stepAt(result[0], event, config, position)
    result = [next, outcome]
    position = at
  }
  return result
}

// The shells' door to the positioned step (see `internal/position.ts`).
door.stepAt = stepAt as NonNullable<typeof door.stepAt>
