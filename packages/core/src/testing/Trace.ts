/**
 * Runs a `Scenario` against an `Agent` and records everything the laws need:
 * every run of a handler (the kit wraps your handlers; your `wrapHandler`
 * middleware goes over the recording), every decision taken or refused, every
 * checkpoint saved, every model request, and how each run of the turn ended.
 * One of three paths: `plain` (`complete` / `resume`, no checkpoint),
 * `stored` (every state checkpointed to the store, each resume from the stored
 * JSON, crashes played: the process dies just after a save and a new chat
 * resumes from the store) and `streamed` (`stream`). The clock is a
 * `TestClock` starting at 0 that only the scenario's clock moves advance.
 *
 * @since 0.3.0
 */
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
import * as MockLanguageModel from "./MockLanguageModel.js"
import * as Scenario from "./Scenario.js"

/**
 * How the turn is driven (see the module's header).
 *
 * @category models
 * @since 0.3.0
 */
export type Mode = "plain" | "stored" | "streamed"

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

/**
 * Runs `scenario` against `agent` on `mode` and records what happened. Provides its own `TestClock`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const record = (agent: Agent.Agent, scenario: Scenario.Scenario, mode: Mode): Effect.Effect<Trace> =>
  Effect.gen(function*() {
    let seq = 0
    const next = () => ++seq
    const runs: Array<Run> = []
    const decisions: Array<DecisionRecord> = []
    const saved: Array<Saved> = []
    const ends: Array<End> = []
    const requests: Array<Request> = []
    const states: Array<State> = []
    const log: Array<string> = []
    const script = Scenario.script(scenario)
    const model = MockLanguageModel.make((request, index) => {
      requests.push({ seq: next(), request })
      return typeof script === "function" ? script(request, index) : script[index]!
    })
    const store = yield* (agent.store ?? ConversationStore.makeMemory)
    const handlers = recordingHandlers(agent, { runs, next })
    const services = Layer.mergeAll(model.layer, handlers, agent.layer ?? Layer.empty)
    const makeChat = (Chat.make({ tools: agent.tools, maxSteps: scenario.maxSteps }) as Effect.Effect<Chat.Service<any, any>, unknown, any>).pipe(
      Effect.provide(services),
      Effect.orDie
    ) as Effect.Effect<Chat.Service<any, any>>
    const deciders = Agent.decidersOf(agent)
    const decide = agent.decide ?? Agent.chatDecide

    let process = 1
    let chat = yield* makeChat
    let messages: Messages.Messages = Messages.fromUser(scenario.request, { sender: Agent.requesterOf(agent) })
    let last = "Paused" as End["outcome"]
    let version = mode === "stored" ? (yield* Effect.orDie(store.save(conversation, messages))).version : 0

    const load = Effect.gen(function*() {
      const stored = yield* Effect.orDie(store.load(conversation))
      if (Option.isNone(stored)) return yield* Effect.die(new Error("the store lost the conversation"))
      version = stored.value.version
      // The stored JSON, decoded: a resume sees what another process would.
      const json = yield* Effect.orDie(Effect.fromResult(Messages.toJson(stored.value.messages)))
      return yield* Effect.orDie(Effect.fromResult(Messages.fromJson(json)))
    })

    let crashed = false
    const checkpointing = (crashAt: number | undefined) => {
      let count = 0
      return (state: Messages.Messages) =>
        Effect.gen(function*() {
          // A dead process saves nothing more (the chat's own clean-up on interruption included).
          if (crashed) return yield* Effect.interrupt
          const stored = yield* Effect.orDie(store.save(conversation, state, { expectedVersion: version }))
          version = stored.version
          saved.push({ seq: next(), process, messages: state })
          states.push({ seq: next(), messages: state })
          count += 1
          // The process dies: the turn stops where it is, nothing after this save happens.
          if (count === crashAt) {
            crashed = true
            return yield* Effect.interrupt
          }
        })
    }

    const ended = (outcome: End["outcome"], state: Messages.Messages, error?: string) => {
      last = outcome
      messages = state
      states.push({ seq: next(), messages: state })
      ends.push({ seq: next(), process, outcome, error, messages: state })
      log.push(`turn (process ${process}) -> ${outcome}${error === undefined ? "" : ` ${error}`}${outcome === "Paused" ? ` on ${pending(state).map((call) => call.id).join(", ")}` : ""}`)
    }

    /** One run of the turn from `messages` on the path; a crash plays the next process's recovery. */
    const turn = (crashAt: number | undefined): Effect.Effect<void> =>
      turnWith(crashAt).pipe(Effect.provide(agent.layer ?? Layer.empty), Effect.orDie) as Effect.Effect<void>
    const turnWith = (crashAt: number | undefined): Effect.Effect<void, unknown, any> =>
      Effect.gen(function*() {
        if (mode === "streamed") {
          const exit = yield* Effect.exit(Stream.runCollect(chat.stream(messages)))
          if (Exit.isSuccess(exit)) {
            const final = exit.value[exit.value.length - 1] as ChatEvent.ChatEvent | undefined
            if (final?._tag === "Completed" || final?._tag === "Paused") {
              return ended(final._tag === "Completed" ? "Complete" : "Paused", final.messages)
            }
            return ended("Failed", messages, `stream ended with ${final?._tag ?? "nothing"}`)
          }
          const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
          const failure = error?._tag === "Fail" ? error.error : exit.cause
          return ended("Failed", messagesOf(failure) ?? messages, errorTag(failure))
        }
        const options = mode === "stored" ? { checkpoint: checkpointing(crashAt) } : {}
        const exit = yield* Effect.exit(chat.complete(messages, options))
        if (Exit.isSuccess(exit)) {
          return ended(exit.value.outcome._tag, mode === "stored" ? yield* load : exit.value.messages)
        }
        if (crashed) {
          crashed = false
          ended("Crashed", yield* load)
          process += 1
          chat = yield* makeChat
          return yield* turn(undefined)
        }
        const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
        const failure = error?._tag === "Fail" ? error.error : exit.cause
        return ended("Failed", mode === "stored" ? yield* load : messagesOf(failure) ?? messages, errorTag(failure))
      })

    const applyDecision = (step: Scenario.Decide) =>
      Effect.gen(function*() {
        const calls = pending(messages)
        if (last !== "Paused" || calls.length === 0) return log.push(`${step.kind}: nothing waits for a decision`)
        const call = calls[step.call % calls.length]!
        const decision: Agent.Decision = {
          kind: step.kind,
          id: call.id,
          by: deciders[step.by % deciders.length]!,
          ...(step.kind === "edit" ? { arguments: Scenario.editedArguments(step, call.name) } : {}),
          ...(step.reason === undefined ? {} : { reason: step.reason })
        }
        const at = yield* Clock.currentTimeMillis
        const exit = yield* Effect.exit(decide(chat, messages, decision))
        const accepted = Exit.isSuccess(exit)
        const refusal = Exit.isSuccess(exit) ? undefined : errorTag(exit.cause.reasons.find((reason) => reason._tag === "Fail")?._tag === "Fail"
          ? (exit.cause.reasons.find((reason) => reason._tag === "Fail") as { readonly error: unknown }).error
          : exit.cause)
        decisions.push({ ...decision, seq: next(), at, accepted, refusal })
        log.push(`${decision.kind} ${decision.id} by ${decision.by.id}${decision.arguments === undefined ? "" : ` with ${decision.arguments}`} -> ${accepted ? "accepted" : `refused (${refusal})`}`)
        if (Exit.isSuccess(exit)) {
          messages = exit.value
          states.push({ seq: next(), messages })
        }
      })

    const steer = (step: Scenario.Steer) => {
      if (last !== "Paused") return log.push(`steer: the turn is not paused`)
      const steered = Steering.steer(messages, Messages.user(step.text, { sender: Agent.requesterOf(agent) }), { rule: step.rule })
      if (Result.isFailure(steered)) return log.push(`steer (${step.rule}) ${JSON.stringify(step.text)} -> refused (${errorTag(steered.failure)})`)
      messages = steered.success
      states.push({ seq: next(), messages })
      return log.push(`steer (${step.rule}) ${JSON.stringify(step.text)} -> accepted`)
    }

    const moveClock = (step: Scenario.Clock) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const wait = last === "Paused" ? earliestWait(messages) : undefined
        const target = wait === undefined || wait < now ? now + step.millis : wait + (step.to === "before" ? -1 : step.to === "at" ? 0 : 1)
        const by = Math.max(0, target - now)
        yield* TestClock.adjust(`${by} millis`)
        log.push(`clock +${by} ms -> ${now + by}${wait === undefined ? "" : ` (${step.to} ${wait})`}`)
      })

    let crashAt: number | undefined = mode === "stored" ? scenario.firstCrash : undefined
    yield* turn(crashAt)
    crashAt = undefined
    for (const step of scenario.steps) {
      switch (step._tag) {
        case "Decide":
          yield* applyDecision(step)
          break
        case "Clock":
          yield* moveClock(step)
          break
        case "Crash":
          if (mode === "stored") crashAt = step.checkpoint
          break
        case "Steer":
          steer(step)
          break
        case "Resume":
          if (last === "Complete") break
          if (mode === "stored") {
            // The decisions go through the store too: save, then resume from what it holds.
            version = (yield* Effect.orDie(store.save(conversation, messages, { expectedVersion: version }))).version
            messages = yield* load
          }
          yield* turn(crashAt)
          crashAt = undefined
      }
    }
    return { mode, scenario, runs, decisions, saved, ends, requests, states, final: messages, log }
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
