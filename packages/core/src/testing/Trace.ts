/**
 * Runs a `Scenario` against an `Agent` and records everything the laws need:
 * every run of a handler (the kit wraps your handlers; your `wrapHandler`
 * middleware goes over the recording), every decision taken or refused, every
 * checkpoint saved, every model request, and how each run of the turn ended.
 * One of four paths: `plain` (`complete` / `resume`, no checkpoint),
 * `stored` (every state checkpointed to the store, each resume from the stored
 * JSON, crashes played: the process dies just after a save and a new chat
 * resumes from the store), `streamed` (`stream`) and `worker` (every run
 * through `Worker.resume` under the store's leases: crashes just before or
 * after a save, the next process busy until the dead lease runs out, then
 * taking over; see `internal/workerPath.ts`). The clock is a
 * `TestClock` starting at 0 that only the scenario's clock moves advance.
 *
 * @since 0.3.0
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Chat from "../chat/Chat.js"
import type * as ChatEvent from "../chat/ChatEvent.js"
import * as ConversationStore from "../durable/ConversationStore.js"
import type * as LanguageModel from "../model/LanguageModel.js"
import * as Tool from "../tools/Tool.js"
import * as Messages from "../turn/Messages.js"
import * as Steering from "../turn/Steering.js"
import * as Agent from "./Agent.js"
import * as Governance from "./internal/governance.js"
import * as Structured from "./internal/structured.js"
import * as MockLanguageModel from "./MockLanguageModel.js"
import * as Scenario from "./Scenario.js"
import * as WorkerPath from "./internal/workerPath.js"

/**
 * How the turn is driven (see the module's header).
 *
 * @category models
 * @since 0.3.0
 */
export type Mode = "plain" | "stored" | "streamed" | "worker"

/**
 * One run of a handler. `arguments`: the parameters it got, encoded, as canonical JSON; `at`: the
 * clock when it started; `seq`: its place among everything recorded.
 *
 * @category models
 * @since 0.3.0
 */
export interface Run {
  readonly seq: number
  readonly id: string
  readonly name: string
  readonly arguments: string
  readonly attempt: number
  readonly at: number
  readonly outcome: "running" | "succeeded" | "failed" | "interrupted"
}

/**
 * A decision the scenario took: accepted, or refused with the error's tag.
 *
 * @category models
 * @since 0.3.0
 */
export interface DecisionRecord extends Agent.Decision {
  readonly seq: number
  readonly at: number
  readonly accepted: boolean
  readonly refusal?: string | undefined
}

/**
 * A checkpoint the turn saved (in the `stored` path), and the process that saved it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Saved {
  readonly seq: number
  readonly process: number
  readonly messages: Messages.Messages
}

/**
 * How one run of the turn ended: `Crashed` when its process died at a checkpoint.
 *
 * @category models
 * @since 0.3.0
 */
export interface End {
  readonly seq: number
  readonly process: number
  readonly outcome: "Complete" | "Paused" | "Failed" | "Crashed"
  readonly error?: string | undefined
  readonly messages: Messages.Messages
}

/**
 * A model request and its place among everything recorded.
 *
 * @category models
 * @since 0.3.0
 */
export interface Request {
  readonly seq: number
  readonly request: LanguageModel.Request
}

/**
 * A state of the conversation seen while the scenario ran, and its place among everything recorded.
 *
 * @category models
 * @since 0.3.0
 */
export interface State {
  readonly seq: number
  readonly messages: Messages.Messages
}

export type {
  /**
   * A grant the scenario gave (what it asked for, `expiresAt` resolved), accepted or refused.
   *
   * @category models
   * @since 0.3.0
   */
  GrantRecord,
  /**
   * A call's review: the agent's reviewer was asked about it and answered so.
   *
   * @category models
   * @since 0.3.0
   */
  ReviewRecord,
  /**
   * A revocation the scenario made, accepted or refused.
   *
   * @category models
   * @since 0.3.0
   */
  RevokeRecord,
  /**
   * A call a grant settled (its decision record names the grant), where it was first seen so.
   *
   * @category models
   * @since 0.3.0
   */
  SettledRecord
} from "./internal/governance.js"

/**
 * A structured answer (an agent with `output`): what the agent's code got at the end of a run of the
 * turn, the decoded value or the failure's tag (`typed`: a tagged error, not a defect), and the model's text.
 *
 * @category models
 * @since 0.3.0
 */
export interface Answered {
  readonly seq: number
  readonly process: number
  readonly text?: string | undefined
  readonly outcome:
    | { readonly _tag: "Value"; readonly value: unknown }
    | { readonly _tag: "Failure"; readonly error: string; readonly typed: boolean }
}

/**
 * Everything a scenario did to an agent on one path.
 *
 * @category models
 * @since 0.3.0
 */
export interface Trace {
  readonly mode: Mode
  readonly scenario: Scenario.Scenario
  readonly runs: ReadonlyArray<Run>
  readonly decisions: ReadonlyArray<DecisionRecord>
  readonly saved: ReadonlyArray<Saved>
  readonly ends: ReadonlyArray<End>
  readonly requests: ReadonlyArray<Request>
  /** Every state seen, in order: each save, each end, each state after a decision. */
  readonly states: ReadonlyArray<State>
  /** The messages at the end of the scenario. */
  readonly final: Messages.Messages
  /** What happened, one line each, for a failure's report. */
  readonly log: ReadonlyArray<string>
  /** The grants given (absent: none). */
  readonly grants?: ReadonlyArray<Governance.GrantRecord> | undefined
  /** The grants revoked (absent: none). */
  readonly revokes?: ReadonlyArray<Governance.RevokeRecord> | undefined
  /** Each time the agent's reviewer was asked about a call (absent: none). */
  readonly reviews?: ReadonlyArray<Governance.ReviewRecord> | undefined
  /** Which grant settled which call (absent: none). */
  readonly settled?: ReadonlyArray<Governance.SettledRecord> | undefined
  /** The structured answers (an agent with `output`), in order. */
  readonly structured?: ReadonlyArray<Answered> | undefined
  /** On the `worker` path: every `Worker.resume` (its lease, how it ended) and every call lost in a crash. */
  readonly worker?: WorkerPath.Record | undefined
}

/**
 * Canonical JSON: object keys sorted, so equal values give equal text.
 *
 * @category utils
 * @since 0.3.0
 */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner) ?? "null"

/** The encoded form of the parameters a handler got, as canonical JSON (their own JSON if they do not encode). */
const encodedArguments = (tool: Tool.Any, params: unknown): string => {
  try {
    return canonical(Schema.encodeUnknownSync(tool.parameters as Schema.Codec<unknown, unknown>)(params))
  } catch {
    return canonical(params)
  }
}

/**
 * Arguments text as a handler would get it, as `Run.arguments` records it: decoded with the tool's
 * parameters (keys the Schema does not know dropped) and encoded again, as canonical JSON; the
 * text's own canonical JSON when it does not decode (or is not JSON: `undefined`'s).
 *
 * @category utils
 * @since 0.3.0
 */
export const normalArguments = (tool: Tool.Any | undefined, text: string): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return "undefined"
  }
  if (tool === undefined) return canonical(parsed)
  try {
    return encodedArguments(tool, Schema.decodeUnknownSync(tool.parameters as Schema.Codec<unknown, unknown>)(parsed))
  } catch {
    return canonical(parsed)
  }
}

interface Recorder {
  readonly runs: Array<Run>
  readonly next: () => number
}

/** The agent's handlers, each recording its runs, under the agent's middleware. */
const recordingHandlers = (agent: Agent.Agent, recorder: Recorder): Layer.Layer<any, any, never> =>
  Layer.effectContext(Effect.gen(function*() {
    let context = Context.empty() as Context.Context<any>
    for (const tool of agent.tools.list) {
      const tag = Tool.handlerTag(tool.name)
      const inner = yield* tag
      const recorded: Tool.HandlerService = {
        handle: (params, call) =>
          Effect.gen(function*() {
            const run: { -readonly [K in keyof Run]: Run[K] } = {
              seq: recorder.next(),
              id: call.id,
              name: tool.name,
              arguments: encodedArguments(tool, params),
              attempt: call.attempt,
              at: yield* Clock.currentTimeMillis,
              outcome: "running"
            }
            recorder.runs.push(run)
            return yield* inner.handle(params, call).pipe(Effect.onExit((exit) =>
              Effect.sync(() => {
                run.outcome = Exit.isSuccess(exit) ? "succeeded" : Exit.hasInterrupts(exit) ? "interrupted" : "failed"
              })
            ))
          })
      }
      context = Context.add(context, tag, agent.wrapHandler === undefined ? recorded : agent.wrapHandler(recorded, tool))
    }
    return context
  })).pipe(Layer.provide(agent.handlers))

/**
 * The calls of the current turn a person may decide now, in order: awaiting approval or scheduled.
 *
 * @category utils
 * @since 0.3.0
 */
export const pending = (messages: Messages.Messages): ReadonlyArray<Messages.ToolCallPart> =>
  Messages.turnResponses(messages).flatMap((message) =>
    Messages.toolCallsOf(message).filter((call) => call.status._tag === "AwaitingApproval" || call.status._tag === "Scheduled")
  )

/** The earliest time the current turn waits on: a scheduled call's time or an approval's deadline. */
const earliestWait = (messages: Messages.Messages): number | undefined => {
  const times = pending(messages).flatMap((call) =>
    call.status._tag === "Scheduled" ? [call.status.at] : call.status._tag === "AwaitingApproval" && call.status.expiresAt !== undefined ? [call.status.expiresAt] : []
  )
  return times.length === 0 ? undefined : Math.min(...times)
}

const errorTag = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : String(error)

const messagesOf = (error: unknown): Messages.Messages | undefined =>
  typeof error === "object" && error !== null && "messages" in error && Array.isArray(error.messages) ? error.messages as Messages.Messages : undefined

const conversation = "scenario"

const failureOf = (cause: Cause.Cause<unknown>): unknown => {
  const error = cause.reasons.find((reason) => reason._tag === "Fail")
  return error?._tag === "Fail" ? error.error : cause
}

/** The chat of one process: the agent's toolkit over the scripted model and the recording handlers. */
type AnyChat = Chat.Service<any, any>

/** One scenario being played: the state of the conversation and everything recorded so far. */
class Recording {
  seq = 0
  readonly runs: Array<Run> = []
  readonly decisions: Array<DecisionRecord> = []
  readonly saved: Array<Saved> = []
  readonly ends: Array<End> = []
  readonly requests: Array<Request> = []
  readonly states: Array<State> = []
  readonly log: Array<string> = []
  readonly grants: Array<Governance.GrantRecord> = []
  readonly revokes: Array<Governance.RevokeRecord> = []
  readonly reviews: Array<Governance.ReviewRecord> = []
  readonly structured: Array<Answered> = []
  process = 1
  last: End["outcome"] = "Paused"
  version = 0
  crashed = false
  messages: Messages.Messages
  chat!: AnyChat
  readonly worker = WorkerPath.makeState()
  readonly makeChat: Effect.Effect<AnyChat>

  constructor(
    readonly agent: Agent.Agent,
    readonly scenario: Scenario.Scenario,
    readonly mode: Mode,
    readonly store: ConversationStore.Service
  ) {
    this.messages = Messages.fromUser(scenario.request, { sender: Agent.requesterOf(agent) })
    const script = Scenario.script(scenario)
    const model = MockLanguageModel.make((request, index) => {
      this.requests.push({ seq: this.next(), request })
      return typeof script === "function" ? script(request, index) : script[index]!
    })
    const handlers = recordingHandlers(agent, { runs: this.runs, next: () => this.next() })
    const services = Layer.mergeAll(model.layer, handlers, agent.layer ?? Layer.empty)
    const tools = Governance.toolsOf(agent, scenario, (review) => {
      this.reviews.push({ seq: this.next(), ...review })
      this.log.push(`reviewer on ${review.id} -> ${review.review.verdict} (confidence ${review.review.confidence})`)
    })
    this.makeChat = (Chat.make({ tools, maxSteps: scenario.maxSteps }) as Effect.Effect<AnyChat, unknown, any>).pipe(
      Effect.provide(services),
      Effect.orDie
    ) as Effect.Effect<AnyChat>
  }

  next(): number {
    return ++this.seq
  }

  see(messages: Messages.Messages): void {
    this.messages = messages
    this.states.push({ seq: this.next(), messages })
  }

  /** Saves the messages as they are (`stored` path), starting from the store's version. */
  save(): Effect.Effect<void> {
    return Effect.map(Effect.orDie(this.store.save(conversation, this.messages, { expectedVersion: this.version })), (stored) => {
      this.version = stored.version
    })
  }

  /** The stored conversation, through its JSON: a resume sees what another process would. */
  load(): Effect.Effect<Messages.Messages> {
    return Effect.gen({ self: this }, function*() {
      const stored = yield* Effect.orDie(this.store.load(conversation))
      if (Option.isNone(stored)) return yield* Effect.die(new Error("the store lost the conversation"))
      this.version = stored.value.version
      const json = yield* Effect.orDie(Effect.fromResult(Messages.toJson(stored.value.messages)))
      return yield* Effect.orDie(Effect.fromResult(Messages.fromJson(json)))
    })
  }

  /** The checkpoint of one run of the turn: saves each state; dies (interrupts the turn) after the `crashAt`-th. */
  checkpointing(crashAt: number | undefined): (state: Messages.Messages) => Effect.Effect<void> {
    let count = 0
    return (state) =>
      Effect.gen({ self: this }, function*() {
        // A dead process saves nothing more (the chat's own clean-up on interruption included).
        if (this.crashed) return yield* Effect.interrupt
        const stored = yield* Effect.orDie(this.store.save(conversation, state, { expectedVersion: this.version }))
        this.version = stored.version
        this.saved.push({ seq: this.next(), process: this.process, messages: state })
        this.states.push({ seq: this.next(), messages: state })
        count += 1
        if (count === crashAt) {
          this.crashed = true
          return yield* Effect.interrupt
        }
      })
  }

  ended(outcome: End["outcome"], state: Messages.Messages, error?: string): void {
    this.last = outcome
    this.see(state)
    this.ends.push({ seq: this.next(), process: this.process, outcome, error, messages: state })
    const on = outcome === "Paused" ? ` on ${pending(state).map((call) => call.id).join(", ")}` : ""
    this.log.push(`turn (process ${this.process}) -> ${outcome}${error === undefined ? "" : ` ${error}`}${on}`)
  }

  /** One run of the turn from the messages on the path; a crash plays the next process's recovery. */
  turn(crashAt: number | undefined, before?: boolean): Effect.Effect<void> {
    const run = this.mode === "worker"
      ? WorkerPath.turn(this, crashAt === undefined ? undefined : { checkpoint: crashAt, before: before === true })
      : this.mode === "streamed" ? this.streamed() : this.completed(crashAt)
    return run.pipe(Effect.provide(this.agent.layer ?? Layer.empty), Effect.orDie) as Effect.Effect<void>
  }

  streamed(): Effect.Effect<void, unknown, any> {
    return Effect.gen({ self: this }, function*() {
      const exit = yield* Effect.exit(Stream.runCollect(Structured.stream(this.agent, this.chat, this.messages)))
      this.answered(Exit.map(exit, (events) => ({ outcome: events[events.length - 1] ?? { _tag: "Nothing" } })))
      if (Exit.isFailure(exit)) {
        const failure = failureOf(exit.cause)
        return this.ended("Failed", messagesOf(failure) ?? this.messages, errorTag(failure))
      }
      const final = exit.value[exit.value.length - 1] as unknown as ChatEvent.ChatEvent | undefined
      if (final?._tag === "Completed" || final?._tag === "Paused") {
        return this.ended(final._tag === "Completed" ? "Complete" : "Paused", final.messages)
      }
      return this.ended("Failed", this.messages, `stream ended with ${final?._tag ?? "nothing"}`)
    })
  }

  completed(crashAt: number | undefined): Effect.Effect<void, unknown, any> {
    return Effect.gen({ self: this }, function*() {
      const stored = this.mode === "stored"
      const exit = yield* Effect.exit(Structured.complete(this.agent, this.chat, this.messages, stored ? { checkpoint: this.checkpointing(crashAt) } : {}))
      if (!this.crashed) this.answered(exit, Structured.textOf(exit))
      if (Exit.isSuccess(exit)) return this.ended(exit.value.outcome._tag, stored ? yield* this.load() : exit.value.messages)
      if (this.crashed) return yield* this.recover()
      const failure = failureOf(exit.cause)
      return this.ended("Failed", stored ? yield* this.load() : messagesOf(failure) ?? this.messages, errorTag(failure))
    })
  }

  /** The process died: another one makes its chat and resumes from the store. */
  recover(): Effect.Effect<void> {
    return Effect.gen({ self: this }, function*() {
      this.crashed = false
      this.ended("Crashed", yield* this.load())
      this.process += 1
      this.chat = yield* this.makeChat
      return yield* this.turn(undefined)
    })
  }

  /** What the agent's code got from a structured answer (an agent with `output`), if the run ended with one. */
  answered(exit: Exit.Exit<{ readonly outcome: { readonly _tag: string; readonly value?: unknown } }, unknown>, text?: string): void {
    const outcome = this.agent.output === undefined ? undefined : Structured.outcomeOf(exit)
    if (outcome === undefined) return
    this.structured.push({ seq: this.next(), process: this.process, ...(text === undefined ? {} : { text }), outcome })
    this.log.push(`structured answer -> ${outcome._tag === "Value" ? `value ${canonical(outcome.value)}` : `failed (${outcome.error})`}`)
  }

  /** An `approve-late`: the clock moves just past the call's approval deadline, if it has one not passed yet. */
  pastDeadline(call: Messages.ToolCallPart): Effect.Effect<void> {
    return Effect.gen({ self: this }, function*() {
      const deadline = call.status._tag === "AwaitingApproval" ? call.status.expiresAt : undefined
      if (deadline === undefined) return void this.log.push(`approve-late: ${call.id} has no deadline`)
      const now = yield* Clock.currentTimeMillis
      const by = Math.max(0, deadline + 1 - now)
      yield* TestClock.adjust(`${by} millis`)
      this.log.push(`clock +${by} ms -> ${now + by} (past the deadline ${deadline} of ${call.id})`)
    })
  }

  decide(step: Scenario.Decide): Effect.Effect<void> {
    return Effect.gen({ self: this }, function*() {
      const calls = pending(this.messages)
      if (this.last !== "Paused" || calls.length === 0) return void this.log.push(`${step.kind}: nothing waits for a decision`)
      const call = calls[step.call % calls.length]!
      if (step.kind === "approve-late") yield* this.pastDeadline(call)
      const deciders = Agent.decidersOf(this.agent)
      const decision: Agent.Decision = {
        kind: step.kind,
        id: call.id,
        by: deciders[step.by % deciders.length]!,
        ...(step.kind === "edit" ? { arguments: Scenario.editedArguments(step, call.name) } : {}),
        ...(step.reason === undefined ? {} : { reason: step.reason })
      }
      const at = yield* Clock.currentTimeMillis
      const exit = yield* Effect.exit((this.agent.decide ?? Agent.chatDecide)(this.chat, this.messages, decision))
      const refusal = Exit.isSuccess(exit) ? undefined : errorTag(failureOf(exit.cause))
      this.decisions.push({ ...decision, seq: this.next(), at, accepted: refusal === undefined, refusal })
      const edit = decision.arguments === undefined ? "" : ` with ${decision.arguments}`
      this.log.push(`${decision.kind} ${decision.id} by ${decision.by.id}${edit} -> ${refusal === undefined ? "accepted" : `refused (${refusal})`}`)
      if (Exit.isSuccess(exit)) this.see(exit.value)
    })
  }

  steer(step: Scenario.Steer): void {
    if (this.last !== "Paused") return void this.log.push(`steer: the turn is not paused`)
    const message = Messages.user(step.text, { sender: Agent.requesterOf(this.agent) })
    const steered = Steering.steer(this.messages, message, { rule: step.rule })
    const what = `steer (${step.rule}) ${JSON.stringify(step.text)}`
    if (Result.isFailure(steered)) return void this.log.push(`${what} -> refused (${errorTag(steered.failure)})`)
    this.see(steered.success)
    this.log.push(`${what} -> accepted`)
  }

  moveClock(step: Scenario.Clock): Effect.Effect<void> {
    return Effect.gen({ self: this }, function*() {
      const now = yield* Clock.currentTimeMillis
      const wait = this.last === "Paused" ? Governance.soonest(earliestWait(this.messages), Governance.nextExpiry(this.messages, now)) : undefined
      const target = wait === undefined || wait < now ? now + step.millis : wait + (step.to === "before" ? -1 : step.to === "at" ? 0 : 1)
      const by = Math.max(0, target - now)
      yield* TestClock.adjust(`${by} millis`)
      this.log.push(`clock +${by} ms -> ${now + by}${wait === undefined ? "" : ` (${step.to} ${wait})`}`)
    })
  }

  /** A resume: on the stored path the decisions go through the store too (saved, then loaded). */
  resume(crashAt: number | undefined, before?: boolean): Effect.Effect<void> {
    return Effect.gen({ self: this }, function*() {
      if (this.last === "Complete") return
      if (this.mode === "stored") {
        yield* this.save()
        this.messages = yield* this.load()
      }
      yield* this.turn(crashAt, before)
    })
  }

  /** The first run of the turn, then every step. */
  play(): Effect.Effect<void> {
    return Effect.gen({ self: this }, function*() {
      this.chat = yield* this.makeChat
      // Only where there is a store does a process die.
      const stores = this.mode === "stored" || this.mode === "worker"
      if (stores) yield* this.save()
      yield* this.turn(stores ? this.scenario.firstCrash : undefined)
      let crash: Scenario.Crash | undefined
      for (const step of this.scenario.steps) {
        if (step._tag === "Decide") yield* this.decide(step)
        else if (step._tag === "Clock") yield* this.moveClock(step)
        else if (step._tag === "Steer") this.steer(step)
        else if (step._tag === "Grant") yield* Governance.give(this, step, Agent.decidersOf(this.agent))
        else if (step._tag === "Revoke") yield* Governance.revoke(this, step, Agent.decidersOf(this.agent))
        else if (step._tag === "Crash") crash = stores ? step : undefined
        else {
          yield* this.resume(crash?.checkpoint, crash?.before)
          crash = undefined
        }
      }
    })
  }

  trace(): Trace {
    const { decisions, ends, grants, log, messages, mode, requests, reviews, revokes, runs, saved, scenario, states, structured } = this
    const settled = Governance.settled(states)
    return {
      mode, scenario, runs, decisions, saved, ends, requests, states, final: messages, log,
      ...(mode === "worker" ? { worker: WorkerPath.record(this.worker) } : {}),
      ...(this.agent.output === undefined ? {} : { structured }),
      ...(grants.length === 0 ? {} : { grants }),
      ...(revokes.length === 0 ? {} : { revokes }),
      ...(reviews.length === 0 ? {} : { reviews }),
      ...(settled.length === 0 ? {} : { settled })
    }
  }
}

/**
 * Runs `scenario` against `agent` on `mode` and records what happened. Provides its own `TestClock`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const record = (agent: Agent.Agent, scenario: Scenario.Scenario, mode: Mode): Effect.Effect<Trace> =>
  Effect.gen(function*() {
    const recording = new Recording(agent, scenario, mode, yield* (agent.store ?? ConversationStore.makeMemory))
    yield* recording.play()
    return recording.trace()
  }).pipe(Effect.provide(TestClock.layer()))

/**
 * The traces of one scenario: the `stored` path always; the `plain` and `streamed` paths too when
 * nothing crashes (a crash exists only where there is a store).
 *
 * @category models
 * @since 0.3.0
 */
export interface Traces {
  readonly stored: Trace
  readonly plain?: Trace | undefined
  readonly streamed?: Trace | undefined
}

/**
 * Records `scenario` on every path it can take (see `Traces`).
 *
 * @category constructors
 * @since 0.3.0
 */
export const recordAll = (agent: Agent.Agent, scenario: Scenario.Scenario): Effect.Effect<Traces> =>
  Effect.gen(function*() {
    const stored = yield* record(agent, scenario, "stored")
    if (Scenario.crashes(scenario)) return { stored }
    return { stored, plain: yield* record(agent, scenario, "plain"), streamed: yield* record(agent, scenario, "streamed") }
  })

/**
 * `record` as a promise, for code outside Effect.
 *
 * @category constructors
 * @since 0.3.0
 */
export const run = (agent: Agent.Agent, scenario: Scenario.Scenario, mode: Mode): Promise<Trace> =>
  Effect.runPromise(record(agent, scenario, mode))
