/**
 * One turn, run: the loop that feeds the reducer's outcomes to the model, the
 * strategies, the handlers and the clock. `Chat` builds the environment once
 * per chat; `run` interprets one turn in it. The state of a running turn (its
 * latest messages, a handler's defect, a failed checkpoint) lives in a `Run`.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { ChatEvent } from "../ChatEvent.js"
import * as ChatInput from "../ChatInput.js"
import * as ChatError from "../../data/ChatError.js"
import type * as GrantRules from "../../turn/GrantRules.js"
import * as LanguageModel from "../../model/LanguageModel.js"
import * as Messages from "../../turn/Messages.js"
import type { Message, ToolCallPart } from "../../turn/Messages.js"
import * as PauseReason from "../../data/PauseReason.js"
import * as Shell from "../Shell.js"
import type * as Tool from "../../tools/Tool.js"
import type * as Toolkit from "../../tools/Toolkit.js"
import * as ToolResult from "../../tools/ToolResult.js"
import * as Recording from "../../turn/Recording.js"
import * as Stepping from "../../turn/Stepping.js"
import * as Turn from "../../turn/Turn.js"
import { decodeArguments, encodeResult, formatParseError, toMessage } from "../../tools/ToolCodec.js"
import { DecodedArguments } from "./decodedArguments.js"
import { StreamedCalls } from "./streamedCalls.js"

const isFiles = Schema.is(Schema.Array(Messages.FilePart))

/** The result (or typed failure) and its files, as the tool's `splitFiles` (`splitFailureFiles`) takes them apart (none without one); a split that throws or gives no files is a failure. */
const splitFiles = (
  tool: Tool.Any,
  encoded: unknown,
  which: "splitFiles" | "splitFailureFiles" = "splitFiles"
): Result.Result<Tool.ResultFiles, string> => {
  const split = tool[which]
  if (split === undefined) return Result.succeed({ result: encoded, files: [] })
  try {
    const out = split(encoded)
    return isFiles(out.files) ? Result.succeed(out) : Result.fail(`\`${which}\` did not return an array of file parts`)
  } catch (error) {
    return Result.fail(`\`${which}\` threw: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * A result event with its files cut to its tool's cap on them, then its result (or failure) cut to
 * its cap on text (see `ToolResult`): the event itself, at once, when both fit, as nearly every one does.
 */
const capped = (entry: Entry, event: Turn.Event, store: ToolResult.StoreService | undefined): Effect.Effect<Turn.Event> =>
  asEffect(cappedNow(entry, event, store))

/** `capped`: the event itself when it fits (no Effect), else the Effect that cuts it. */
const cappedNow = (entry: Entry, event: Turn.Event, store: ToolResult.StoreService | undefined): Turn.Event | Effect.Effect<Turn.Event> => {
  if (event._tag !== "ToolSucceeded" && event._tag !== "ToolFailed") return event
  const isError = event._tag === "ToolFailed"
  const limited = ToolResult.limitResult(isError ? event.error : event.result, event.files ?? [], {
    id: event.id,
    tool: entry.tool.name,
    maxChars: entry.maxResultChars ?? ToolResult.maxCharsOf(entry.tool, entry.kit),
    maxFileBytes: entry.maxResultFileBytes ?? ToolResult.maxFileBytesOf(entry.tool, entry.kit),
    isError,
    store
  })
  if (limited === undefined) return event
  return Effect.map(limited, ({ files, value }) =>
    event._tag === "ToolSucceeded"
      ? Turn.Event.ToolSucceeded({ id: event.id, result: value, files })
      : Turn.Event.ToolFailed({ id: event.id, error: value, files }))
}

/**
 * Called with the messages after every change of state (a response added, a call decided, started
 * or finished). Store them to survive a crash: a call recorded as running is never run again on resume.
 */
export type Checkpoint = (messages: Messages.Messages) => Effect.Effect<void, ChatError.CheckpointError>

/** A tool of the chat: its toolkit and its handler. */
export interface Entry {
  readonly tool: Tool.Any
  readonly kit: Toolkit.Any
  readonly handler: Tool.HandlerService
  /** The cap on its results' text (see `ToolResult.maxCharsOf`); absent: worked out from the tool and its toolkit. */
  readonly maxResultChars?: number | undefined
  /** The cap on its results' files, in bytes (see `ToolResult.maxFileBytesOf`); absent: worked out from the tool and its toolkit. */
  readonly maxResultFileBytes?: number | undefined
}

/** The tools of a chat at one moment, and what depends on them (see `Chat.make`'s tool table); `checkEdits` and `rerunnable` as in `Shell.Steps`. */
export interface Tools<R> extends Pick<Shell.Steps<R>, "checkEdits" | "rerunnable"> {
  readonly entries: ReadonlyMap<string, Entry>
  readonly declarations: ReadonlyArray<LanguageModel.ToolDeclaration>
  readonly decide: (
    call: ToolCallPart,
    now: number,
    messages?: Messages.Messages,
    context?: GrantRules.Context,
    /** Where the decoded arguments of a call decided without a strategy are kept for its handler. */
    decoded?: DecodedArguments
  ) => Effect.Effect<Turn.Decision, never, R>
}

/** What a chat gives every turn it runs. `E`: what reading its tools again may fail with. */
export interface Env<R, E = never> {
  /** The tools a turn starts with: the chat's, as last read. */
  readonly tools: () => Tools<R>
  /** Reads the tools again (`Chat.RefreshOptions.refreshTools`): at a turn's start and before every model call. */
  readonly refresh: Effect.Effect<Tools<R>, E> | undefined
  readonly model: LanguageModel.Service
  readonly system: string | undefined
  readonly concurrency: number | "unbounded"
  /** Where results too long for the model are kept in full (the `ToolResult.Store` of `make`'s context), if anywhere. */
  readonly results?: ToolResult.StoreService | undefined
}

/** How one turn runs. */
export interface Mode {
  readonly config: Turn.Config
  readonly modelOptions: LanguageModel.Options
  readonly checkpoint: Checkpoint | undefined
  /** Whom the turn acts for, which grants' scopes must match. */
  readonly grants?: GrantRules.Context | undefined
  /** Whether the model streams (its deltas are emitted). */
  readonly stream: boolean
  readonly emit: (event: ChatEvent) => Effect.Effect<void>
  /**
   * Gathers a streamed response from its parts, running `onPart` on each as it
   * passes (it emits the part's events). Default: `LanguageModel.collect` in
   * the turn's fiber; `Chat.stream` has its consumer pull them instead.
   */
  readonly collect?: (
    parts: Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError>,
    onPart: (part: LanguageModel.StreamPart) => Effect.Effect<void>
  ) => Effect.Effect<LanguageModel.Response, ChatError.ModelError>
  /**
   * The input side of a streamed turn (see `ChatInput`): its messages interrupt the model while it
   * streams (`Turn.Event.InputArrived`), or wait until the calls are resolved; `cancel` ends the turn.
   * With it the turn pulls the model's stream in its own fiber (`collect` is not used).
   */
  readonly input?: Queue.Dequeue<ChatInput.ChatInput, unknown> | undefined
}

/** Gathers a streamed response in the turn's own fiber. */
const collectHere: NonNullable<Mode["collect"]> = (parts, onPart) => LanguageModel.collect(Stream.tap(parts, onPart))

/** How a turn ended, when it did not fail. */
export interface Ended {
  readonly messages: Messages.Messages
  readonly outcome: Extract<Turn.Outcome, { readonly _tag: "Pause" | "Complete" }>
}

/** The longest single sleep the runtime's timers take (2^31 - 1 ms, about 24.8 days); longer waits sleep in parts. */
const maxSleepMillis = 2 ** 31 - 1

/** Sleeps on the `Clock` until `until` (epoch millis), however far away: Effect never wakes a single sleep past 24.8 days. */
const sleepUntil = (until: number): Effect.Effect<void> =>
  Effect.gen(function*() {
    while (true) {
      const left = until - (yield* Clock.currentTimeMillis)
      if (!(left > 0)) return
      yield* Effect.sleep(Duration.millis(Math.min(left, maxSleepMillis)))
    }
  })

/**
 * Calls of the last response (of `before`) that became resolved between two states: that response
 * is looked up where it was, since the step may have delivered held user messages after it.
 */
const newlyResolved = (before: Messages.Messages, after: Messages.Messages): ReadonlyArray<ToolCallPart> => {
  const previous = new Map(Messages.lastCalls(before).map((call) => [call.id, call]))
  const response = after[before.length - 1]
  const calls = response !== undefined && response.role === "assistant" ? Messages.toolCallsOf(response) : []
  return calls.filter((call) => {
    if (!Messages.isResolved(call)) return false
    const old = previous.get(call.id)
    return old === undefined ? false : !Messages.isResolved(old)
  })
}

/**
 * The checkpoints of one turn, serialised: each save writes the latest state
 * (never an older one than the save before it), one at a time, so parallel
 * calls never race each other's versions and the last save is the turn's final
 * state. A checkpoint that throws or dies fails as a `StoreError`.
 */
const saver = (
  checkpoint: Checkpoint | undefined,
  initial: Messages.Messages,
  latest: () => Messages.Messages
): Effect.Effect<void, ChatError.CheckpointError> => {
  if (checkpoint === undefined) return Effect.void
  const lock = Semaphore.makeUnsafe(1)
  let saved = initial
  return lock.withPermits(1)(Effect.suspend(() => {
    const state = latest()
    if (state === saved) return Effect.void
    return Effect.suspend(() => checkpoint(state)).pipe(
      Effect.catchDefect((defect) =>
        Effect.fail(new ChatError.StoreError({ detail: `the checkpoint died: ${defect instanceof Error ? defect.message : String(defect)}` }))
      ),
      Effect.tap(() => Effect.sync(() => void (saved = state)))
    )
  }))
}

/** The state of one running turn and the steps it takes. */
class Run<R, E> {
  /** The latest state; read when the turn fails or is interrupted. */
  current: Messages.Messages
  /** The tools of this turn: the model's next request and the calls of its response use these. */
  tools: Tools<R>
  /** The first handler that died: the turn fails with it once every call of the response finished. */
  defect: Shell.Defect | undefined
  /** A checkpoint that failed while tools ran: the turn stops with it once they all finished. */
  checkpointFailure: ChatError.CheckpointError | undefined
  /** Every tool call id of the conversation, built on the turn's first model call (see `Stepping.uniqueIds`). */
  takenIds: Set<string> | undefined
  rejectionsAnnounced = false
  /** With an input side: the messages taken from it, not yet applied. */
  inputs: Queue.Queue<Message> | undefined
  /** Where the reducer stands in `current` (see `Stepping.stepAt`): an event costs the same whatever the history. */
  position: Stepping.Position | undefined
  readonly save: Effect.Effect<void, ChatError.CheckpointError>
  /** The arguments decoded at this turn's decisions, kept for the handlers (see `DecodedArguments`). */
  readonly decoded = new DecodedArguments()
  /** Nothing to announce or save between events (no stream, no checkpoint): `apply` is one synchronous step. */
  readonly quiet: boolean

  constructor(
    readonly env: Env<R, E>,
    readonly mode: Mode,
    readonly input: Messages.Messages,
    /** Whether a tracer is installed: without one, the model and tool spans are not made at all. */
    readonly traced: boolean,
    /** The turn's clock (its fiber's, read once: a turn's fiber keeps its services), read without an Effect per step. */
    readonly clock: Clock.Clock
  ) {
    this.current = input
    this.tools = env.tools()
    this.save = saver(mode.checkpoint, input, () => this.current)
    this.quiet = !mode.stream && mode.checkpoint === undefined
  }

  /** One reducer step from the latest state, which becomes the result's. */
  private stepNow(event: Turn.Event): Turn.Result {
    const [messages, outcome, position] = Stepping.stepAt(this.current, event, this.mode.config, this.position)
    this.current = messages
    // Outside the quiet mode every state is emitted or saved: the next step must not write it in place.
    this.position = this.quiet || position.unshared !== true ? position : Stepping.handedOut(position)
    return [messages, outcome]
  }

  /** The latest messages, handed out (to the model): from now on the reducer copies them before a change. */
  private shared(messages: Messages.Messages): Messages.Messages {
    if (this.position?.unshared === true) this.position = Stepping.handedOut(this.position)
    return messages
  }

  /** The clock's time now (as `Clock.currentTimeMillis` reads it). */
  now(): number {
    return this.clock.currentTimeMillisUnsafe()
  }

  /**
   * `apply` without an Effect when there is nothing to announce or save (the quiet mode): the
   * reducer's result itself. Otherwise the same Effect as `apply`.
   */
  applyNow(event: Turn.Event): Turn.Result | Effect.Effect<Turn.Result, ChatError.CheckpointError> {
    return this.quiet ? this.stepNow(event) : this.announceAndSave(event)
  }

  /** Steps the reducer, announces the calls it resolved, then checkpoints. */
  apply(event: Turn.Event): Effect.Effect<Turn.Result, ChatError.CheckpointError> {
    return this.quiet ? Effect.sync(() => this.stepNow(event)) : this.announceAndSave(event)
  }

  private announceAndSave(event: Turn.Event): Effect.Effect<Turn.Result, ChatError.CheckpointError> {
    return Effect.suspend(() => {
      const before = this.current
      const result = this.stepNow(event)
      if (result[0] === before) return Effect.succeed(result)
      return Effect.forEach(newlyResolved(before, result[0]), (call) => this.mode.emit(ChatEvent.ToolResult({ call })), {
        discard: true
      }).pipe(Effect.andThen(inputEvent(event, result[0], this.mode.emit)), Effect.andThen(this.save), Effect.as(result))
    })
  }

  /** Applies a tool's result; a failing checkpoint is kept for later, so sibling calls are not interrupted. */
  record(event: Turn.Event): Effect.Effect<void> {
    return this.apply(event).pipe(Effect.catch((error) => Effect.sync(() => void (this.checkpointFailure ??= error))))
  }

  /** `record`, done at once in the quiet mode (`undefined`: recorded), else its Effect. */
  private recordNow(event: Turn.Event): Effect.Effect<void> | undefined {
    if (!this.quiet) return this.record(event)
    this.stepNow(event)
    return undefined
  }

  /** An error that carries the latest messages when the turn changed state. */
  withState<X>(error: X): X {
    if (this.current === this.input || typeof error !== "object" || error === null || !("_tag" in error)) return error
    return ChatError.withMessages(error as X & { readonly _tag: string }, this.current)
  }

  /** Reads the chat's tools again (only with `refreshTools`); its failure fails the turn before anything else runs. */
  refreshTools(refresh: Effect.Effect<Tools<R>, E>): Effect.Effect<void, E> {
    return Effect.map(refresh, (tools) => void (this.tools = tools))
  }

  /** The model's request for `messages`, with the turn's tools and options. */
  private request(messages: Messages.Messages): LanguageModel.Request {
    const system = this.env.system
    return {
      messages: system === undefined ? this.shared(messages) : [Messages.system(system), ...messages],
      tools: this.tools.declarations,
      options: this.mode.modelOptions
    }
  }

  /** The conversation's tool call ids: the turn's only new ids are those given out to model responses, so they are collected once per turn, not per step. */
  private taken(messages: Messages.Messages): Set<string> {
    return this.takenIds ??= new Set(Messages.toolCalls(messages).map((call) => call.id))
  }

  /** Calls the model (streaming its deltas when asked) and returns its response as an assistant message. */
  callModel(
    messages: Messages.Messages,
    step: number,
    /** Sees each streamed part as it passes (the input side keeps the answer so far). */
    seen?: (part: LanguageModel.StreamPart) => void
  ): Effect.Effect<Message, ChatError.ModelError> {
    const { env, mode } = this
    const request = this.request(messages)
    const taken = () => this.taken(messages)
    const response = mode.stream
      ? Effect.suspend(() => {
        // Deltas carry the ids `Stepping.uniqueIds` gives the calls below (see `StreamedCalls`).
        const calls = new StreamedCalls(taken())
        const parts = seen === undefined ? env.model.stream(request) : Stream.tap(env.model.stream(request), (part) => Effect.sync(() => seen(part)))
        return (seen === undefined ? mode.collect ?? collectHere : collectHere)(parts, (part) => this.emitDelta(calls, part))
      })
      : env.model.generate(request)
    const message = Effect.map(response, (r) => toMessage(r, Stepping.uniqueIds(taken(), r.parts)))
    const traced = this.traced
      ? message.pipe(
        Effect.tap((message) =>
          Effect.annotateCurrentSpan({
            "gen_ai.usage.input_tokens": message.usage?.inputTokens ?? 0,
            "gen_ai.usage.output_tokens": message.usage?.outputTokens ?? 0,
            "gen_ai.response.finish_reasons": message.finishReason ?? "other"
          })
        ),
        Effect.withSpan("chat-ts.model", {
          attributes: { "gen_ai.operation.name": "chat", "chat_ts.step": step, "chat_ts.stream": mode.stream }
        }, { captureStackTrace: false })
      )
      : message
    // Nothing to emit outside a stream (the events would go nowhere).
    return mode.stream ? Effect.tap(traced, (message) => this.emitResponse(message, step)) : traced
  }

  private emitDelta(calls: StreamedCalls, part: LanguageModel.StreamPart): Effect.Effect<void> {
    if (part._tag === "TextDelta") return this.mode.emit(ChatEvent.TextDelta({ text: part.text }))
    if (part._tag === "ReasoningDelta" && part.text !== "") return this.mode.emit(ChatEvent.ReasoningDelta({ text: part.text }))
    const event = calls.event(part)
    return event === undefined ? Effect.void : this.mode.emit(event)
  }

  private emitResponse(message: Message, step: number): Effect.Effect<void> {
    return Effect.forEach(Messages.toolCallsOf(message), (call) => this.mode.emit(ChatEvent.ToolCall({ call })), {
      discard: true
    }).pipe(
      Effect.andThen(this.mode.emit(ChatEvent.StepFinished({
        step,
        usage: message.usage ?? LanguageModel.noUsage,
        finishReason: message.finishReason ?? "other"
      })))
    )
  }

  /** Runs one started call and records its result; never fails (a handler's defect is kept for later). */
  runOne(call: ToolCallPart): Effect.Effect<void> {
    return Effect.flatMap(this.toolEvent(call), (event) => this.record(event))
  }

  /** Runs one started call and returns its result event (a handler's defect is kept in `defect`). */
  toolEvent(call: ToolCallPart): Effect.Effect<Turn.Event> {
    const ready = this.prepare(call)
    if (!("handle" in ready)) return Effect.succeed(ready)
    const run = Effect.exit(ready.handle).pipe(
      Effect.flatMap((exit) => capped(ready.entry, this.resultEvent(ready.entry.tool, call, exit), this.env.results))
    )
    return this.traced
      ? Effect.withSpan(run, "chat-ts.tool", {
        attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id },
        captureStackTrace: false
      })
      : run
  }

  /**
   * A started call's handler, suspended, with its tool; or, when it cannot run (no such tool,
   * arguments that do not decode), the result event that says so.
   */
  private prepare(
    call: ToolCallPart
  ): Turn.Event | {
    readonly entry: Entry
    readonly handle: Effect.Effect<unknown, unknown>
    /** The handler called unsuspended (see `Tool.HandlerService.call`), when the service has one. */
    readonly direct: (() => unknown) | undefined
  } {
    const entry = this.tools.entries.get(call.name)
    if (entry === undefined) return Turn.Event.ToolFailed({ id: call.id, error: `There is no tool named '${call.name}'.` })
    const text = Messages.effectiveArguments(call)
    const params = this.decoded.take(entry.tool, call.id, text) ?? decodeArguments(entry.tool, text)
    if (Result.isFailure(params)) return Turn.Event.ToolFailed({ id: call.id, error: params.failure })
    const attempt = call.status._tag === "Running" ? call.status.attempt ?? 1 : 1
    const inputs: Tool.InputRecorder = {
      requested: (request) => this.record(Turn.Event.InputRequested({ id: call.id, request })),
      settled: (requestId) => this.record(Turn.Event.InputSettled({ id: call.id, requestId }))
    }
    const info: Tool.CallInfo = { id: call.id, name: call.name, attempt, inputs }
    // Suspended: a handler that throws instead of returning an Effect dies like `Effect.die`, in this call only.
    const direct = entry.handler.call
    return {
      entry,
      handle: Effect.suspend(() => entry.handler.handle(params.success, info)),
      direct: direct === undefined ? undefined : () => direct(params.success, info)
    }
  }

  /**
   * A single started call, untraced: `toolEvent`, then its result recorded and what comes after
   * the tools (`afterTools`), as one continuation of the handler's exit, not an Effect per piece
   * (what is left is a plain value when nothing else must run; the turn's loop runs an Effect it is given).
   */
  private runSingle(call: ToolCallPart): Step<R, E> {
    const ready = this.prepare(call)
    if (!("handle" in ready)) return this.recorded(ready)
    const finish = (exit: Exit.Exit<unknown, unknown>): Step<R, E> => {
      const event = cappedNow(ready.entry, this.resultEvent(ready.entry.tool, call, exit), this.env.results)
      return Effect.isEffect(event) ? Effect.flatMap(event, (event) => asEffect(this.recorded(event))) : this.recorded(event)
    }
    const direct = ready.direct
    if (direct === undefined) return Effect.map(Effect.exit(ready.handle), finish)
    // The handler called here, once: what it throws dies as `Effect.suspend` would make it; an
    // Effect that is already done (`Effect.succeed`, `Effect.fail`) is its exit, with no interpreter.
    let out: unknown
    try {
      out = direct()
    } catch (error) {
      return finish(Exit.die(error))
    }
    if (Exit.isExit(out)) return finish(out as Exit.Exit<unknown, unknown>)
    const effect = Effect.isEffect(out) ? out as Effect.Effect<unknown, unknown> : Effect.suspend(() => out as Effect.Effect<unknown, unknown>)
    return Effect.map(Effect.exit(effect), finish)
  }

  /** A single call's result recorded, then what comes after the tools: at once when nothing must run. */
  private recorded(event: Turn.Event): Turn.Result | Effect.Effect<Turn.Result, ChatError.TurnFailure> {
    const recorded = this.recordNow(event)
    if (recorded !== undefined) return Effect.andThen(recorded, Effect.suspend(() => this.afterTools()))
    if (this.checkpointFailure !== undefined || this.defect !== undefined) return this.afterTools()
    return this.resumeNow()
  }

  /** The event a handler's exit makes: its encoded result or typed failure, or a defect (kept for the turn's error). */
  private resultEvent(tool: Tool.Any, call: ToolCallPart, exit: Exit.Exit<unknown, unknown>): Turn.Event {
    const fail = (error: unknown) => Turn.Event.ToolFailed({ id: call.id, error })
    const die = (detail: string, error: string = Recording.defectText) => {
      // Cut: a defect's text (a 5 MB `Effect.die`) would otherwise ride along in full with the error.
      this.defect ??= { id: call.id, name: call.name, detail: ChatError.boundDetail(detail) }
      return fail(error)
    }
    if (Exit.isSuccess(exit)) {
      const encoded = encodeResult(tool, "success", exit.value)
      if (Result.isFailure(encoded)) return die(`its result does not match its success schema: ${formatParseError(encoded.failure)}`)
      const split = splitFiles(tool, encoded.success)
      if (Result.isFailure(split)) return die(`its files cannot be read from its result: ${split.failure}`)
      // Checked when recorded, so that the state stays writable (`Recording.success`).
      const recorded = Recording.success(call.id, split.success.result, split.success.files)
      if (Result.isSuccess(recorded)) return recorded.success
      return die(`its result cannot be recorded: ${recorded.failure}`, Recording.unrecordableText(recorded.failure))
    }
    const failure = Cause.findErrorOption(exit.cause)
    if (failure._tag === "Some") {
      const encoded = encodeResult(tool, "failure", failure.value)
      if (Result.isFailure(encoded)) return fail(Recording.failureText(failure.value))
      const split = splitFiles(tool, encoded.success, "splitFailureFiles")
      if (Result.isFailure(split)) return die(`its files cannot be read from its failure: ${split.failure}`)
      return Recording.failure(call.id, split.success.result, split.success.files, failure.value)
    }
    if (Cause.hasInterruptsOnly(exit.cause)) return fail(Turn.interruptedError)
    return die(Cause.pretty(exit.cause))
  }

  /**
   * Calls a person rejected or someone cancelled during the pause got their answer outside any
   * stream: announce them once (`undefined`: nothing to announce).
   */
  announceRejections(): Effect.Effect<void> | undefined {
    if (this.rejectionsAnnounced) return undefined
    this.rejectionsAnnounced = true
    const rejected = Messages.lastCalls(this.input).filter((call) => (call.status._tag === "Rejected" && call.status.by === "user") || call.status._tag === "Cancelled")
    if (rejected.length === 0) return undefined
    return Effect.forEach(rejected, (call) => this.mode.emit(ChatEvent.ToolResult({ call })), { discard: true })
  }

  /** Records the calls still running as interrupted (their outcome is unknown; they never run again). */
  interruptRunning(): Effect.Effect<void> {
    return Effect.suspend(() =>
      Effect.forEach(
        Messages.lastCalls(this.current).filter((call) => call.status._tag === "Running"),
        (call) => Effect.ignore(this.apply(Turn.Event.ToolFailed({ id: call.id, error: Turn.interruptedText(call) }))),
        { discard: true }
      )
    )
  }

  /**
   * Does what one outcome asks and returns the next result, or how the turn ended; an Effect of
   * it only when something must run (the model, a handler, an effectful strategy, a checkpoint,
   * an announcement): the rest of a step is plain function calls, not interpreter work.
   */
  next([messages, outcome]: Turn.Result): Step<R, E> {
    switch (outcome._tag) {
      case "CallModel": {
        // Input that came while nothing streamed (calls ran, the turn started) is applied first.
        const waiting = this.applyWaitingInput()
        if (waiting !== undefined) return waiting
        const call = () => this.modelStep(messages, outcome.step)
        // The tools are read again first, so the request and the handling of its response use the same, current ones.
        return this.env.refresh === undefined ? call() : Effect.flatMap(this.refreshTools(this.env.refresh), call)
      }
      case "Decide":
        return this.decide(messages, outcome.calls)
      case "RunTools":
        return this.runTools(outcome.calls)
      case "AwaitTools":
        // Only seen while tools run; reaching it here means the messages hold calls nobody runs.
        return this.resumeNow()
      case "Wait":
        return this.wait(messages, outcome)
      case "Pause":
      case "Complete":
        // Input that came as the turn ended: held (a pause) or answered (a completion).
        return this.applyWaitingInput() ?? { messages, outcome }
      case "StepLimit":
      case "InvalidEdits":
      case "PendingCalls":
      case "InputLimit":
        return Shell.failureOf(outcome, messages)
    }
  }

  /** The input taken and not yet applied, applied (`InputArrived`, no model call interrupted); `undefined`: none waits. */
  private applyWaitingInput(): Effect.Effect<Turn.Result, ChatError.CheckpointError> | undefined {
    const inputs = this.inputs
    if (inputs === undefined || Queue.sizeUnsafe(inputs) <= 0) return undefined
    return Effect.flatMap(Queue.takeAll(inputs), (input) => this.apply(Turn.Event.InputArrived({ input })))
  }

  /**
   * A streamed model call that input may interrupt: the model's stream races the input. Input
   * first: the stream is closed (interrupted), the burst taken (all that waits by then), and the
   * reducer gets the answer so far with it (`InputArrived`); a checkpoint and `AnswerInterrupted` follow.
   */
  private interruptibleStep(messages: Messages.Messages, step: number, inputs: Queue.Queue<Message>): Effect.Effect<Turn.Result, ChatError.TurnFailure> {
    const soFar = new LanguageModel.Accumulator()
    return Effect.raceFirst(
      Effect.map(this.callModel(messages, step, (part) => soFar.add(part)), (message) => ({ message })),
      Effect.as(Queue.peek(inputs), undefined)
    ).pipe(Effect.flatMap((won) => (won === undefined ? this.interrupted(messages, step, inputs, soFar) : this.apply(Turn.Event.ModelResponded(won)))))
  }

  private interrupted(
    messages: Messages.Messages,
    step: number,
    inputs: Queue.Queue<Message>,
    soFar: LanguageModel.Accumulator
  ): Effect.Effect<Turn.Result, ChatError.TurnFailure> {
    return Effect.flatMap(Queue.takeAll(inputs), (input) => {
      // A usage the provider sent before the cut is kept; none was reported: nothing is made up.
      soFar.add({ _tag: "Finish", usage: LanguageModel.noUsage, finishReason: "other" })
      const response = soFar.response()!
      const taken = this.taken(messages)
      const { usage: _, ...answer } = toMessage(response, Stepping.uniqueIds(taken, response.parts))
      const before = this.current.length
      return Effect.tap(this.apply(Turn.Event.InputArrived({ input, interrupted: answer })), ([after]) => {
        const kept = after[before]?.role === "assistant" ? after[before] : undefined
        return this.mode.emit(ChatEvent.AnswerInterrupted({ step, input, answer: kept })).pipe(
          Effect.andThen(this.mode.emit(ChatEvent.StepFinished({ step, usage: LanguageModel.noUsage, finishReason: "other" })))
        )
      })
    })
  }

  /** Calls the model and applies its response (after announcing the rejections of the pause, once). */
  private modelStep(messages: Messages.Messages, step: number): Effect.Effect<Turn.Result, ChatError.TurnFailure> {
    if (this.inputs !== undefined && this.mode.stream) {
      const interruptible = this.interruptibleStep(messages, step, this.inputs)
      const announced = this.announceRejections()
      return announced === undefined ? interruptible : Effect.andThen(announced, interruptible)
    }
    // Quiet and untraced: the response made a message and stepped in one continuation of the model's Effect.
    if (this.quiet && !this.traced && !this.mode.stream) {
      const generated = Effect.map(this.env.model.generate(this.request(messages)), (response) =>
        this.stepNow(Turn.Event.ModelResponded({ message: toMessage(response, Stepping.uniqueIds(this.taken(messages), response.parts)) })))
      const announced = this.announceRejections()
      return announced === undefined ? generated : Effect.andThen(announced, generated)
    }
    const message = this.callModel(messages, step)
    const responded = this.quiet
      ? Effect.map(message, (message) => this.stepNow(Turn.Event.ModelResponded({ message })))
      : Effect.flatMap(message, (message) => this.apply(Turn.Event.ModelResponded({ message })))
    const announce = this.announceRejections()
    return announce === undefined ? responded : Effect.andThen(announce, responded)
  }

  /** `Resume` at the clock's time now: the result itself in the quiet mode, else its Effect. */
  private resumeNow(): Turn.Result | Effect.Effect<Turn.Result, ChatError.CheckpointError> {
    return this.applyNow(Turn.Event.Resume({ now: this.now() }))
  }

  /** `Resume`, as an Effect that reads the clock when it runs. */
  private get resume(): Effect.Effect<Turn.Result, ChatError.CheckpointError> {
    return Effect.suspend(() => asEffect(this.resumeNow()))
  }

  /**
   * Asks the strategies about the proposed calls, then applies their decisions. A decision that
   * is already made (no strategy, an unknown tool, arguments that do not decode: `Strategy.decide`
   * gives a succeeded `Exit`) is taken at once; otherwise every call's decision runs as an Effect.
   */
  private decide(messages: Messages.Messages, calls: ReadonlyArray<ToolCallPart>): Step<R, E> {
    const now = this.now()
    const context = this.mode.grants
    const pending = calls.map((call) => this.tools.decide(call, now, messages, context, this.decoded))
    const decided = (decisions: ReadonlyArray<{ readonly id: string; readonly decision: Turn.Decision }>) =>
      Turn.Event.Decided({ now, decisions, ...(context === undefined ? {} : { grants: context }) })
    if (pending.every(isDone)) {
      return this.applyNow(decided(calls.map((call, i) => ({ id: call.id, decision: (pending[i] as Exit.Success<Turn.Decision>).value }))))
    }
    return Effect.forEach(
      calls,
      (call, i) => Effect.map(pending[i]!, (decision) => ({ id: call.id, decision })),
      // One call needs no child fiber: forking one costs more than the rest of the step.
      calls.length > 1 ? { concurrency: this.env.concurrency } : undefined
    ).pipe(Effect.flatMap((decisions) => this.apply(decided(decisions))))
  }

  /** Runs the started calls (each result recorded as it comes), then resumes, or fails with a checkpoint's failure or a handler's defect. */
  private runTools(calls: ReadonlyArray<ToolCallPart>): Step<R, E> {
    if (calls.length === 1 && !this.traced) return this.runSingle(calls[0]!)
    if (calls.length === 1) {
      return Effect.flatMap(this.toolEvent(calls[0]!), (event) => {
        const recorded = this.recordNow(event)
        return recorded === undefined ? this.afterTools() : Effect.andThen(recorded, Effect.suspend(() => this.afterTools()))
      })
    }
    return Effect.forEach(calls, (call) => this.runOne(call), { concurrency: this.env.concurrency, discard: true }).pipe(
      Effect.andThen(Effect.suspend(() => this.afterTools()))
    )
  }

  /** Once every started call finished: the failure of a checkpoint or a handler's defect, else `Resume`. */
  private afterTools(): Effect.Effect<Turn.Result, ChatError.TurnFailure> {
    if (this.checkpointFailure !== undefined) return Effect.fail(this.checkpointFailure)
    if (this.defect !== undefined) return Effect.fail(Shell.defectFailure(this.defect, this.current))
    return asEffect(this.resumeNow())
  }

  private wait(
    messages: Messages.Messages,
    outcome: Extract<Turn.Outcome, { readonly _tag: "Wait" }>
  ): Effect.Effect<Turn.Result, ChatError.CheckpointError> {
    const due = PauseReason.toolIds(outcome.reason).filter((id) => {
      const call = Messages.findTool(messages, id)
      return call?.status._tag === "Scheduled" && call.status.at <= outcome.until
    })
    return this.mode.emit(ChatEvent.Waiting({ until: outcome.until, toolIds: due })).pipe(
      Effect.andThen(sleepUntil(outcome.until)),
      Effect.andThen(this.resume)
    )
  }
}

/** The event announcing a change of a running call's input requests that `event` made in `after` (nothing otherwise). */
const inputEvent = (event: Turn.Event, after: Messages.Messages, emit: Mode["emit"]): Effect.Effect<void> => {
  if (event._tag !== "InputRequested" && event._tag !== "InputSettled") return Effect.void
  const call = Messages.findTool(after, event.id)
  if (call === undefined) return Effect.void
  if (event._tag === "InputSettled") return emit(ChatEvent.InputSettled({ call, requestId: event.requestId }))
  const request = call.status._tag === "Running" ? call.status.inputRequests?.find((known) => known.id === event.request.id) : undefined
  return request === undefined ? Effect.void : emit(ChatEvent.InputRequested({ call, request }))
}

const isEnded = (step: Turn.Result | Ended): step is Ended => !Array.isArray(step)

/** What `Run.next` gives: the next result or the end at once, or an Effect of it (which may give another Step). */
type Step<R, E> = Turn.Result | Ended | StepEffect<R, E>

/** An Effect giving a `Step`: the turn's loop runs it, and the Effect it may give, until a result or the end. */
interface StepEffect<R, E> extends Effect.Effect<Step<R, E>, ChatError.TurnFailure | E, R> {}

/** Whether an Effect has already succeeded (a succeeded `Exit`, as `Effect.succeed` makes): its value needs no interpreter. */
const isDone = <A, E, R>(effect: Effect.Effect<A, E, R>): boolean => Exit.isExit(effect) && Exit.isSuccess(effect)

/** A result, or the Effect of one, as an Effect. */
const asEffect = <A, E, R>(value: A | Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.isEffect(value) ? value : Effect.succeed(value)

/**
 * Runs one turn from `input` to its pause or completion, or its typed error (carrying the latest
 * messages). `finish` makes the turn's value of how it ended, in the turn's loop (no step after it).
 */
export const run = <R, E, A = Ended>(
  env: Env<R, E>,
  mode: Mode,
  input: Messages.Messages,
  finish: (ended: Ended) => A = (ended) => ended as A
): Effect.Effect<A, ChatError.TurnFailure | E, R> =>
  Effect.withFiber((fiber) => {
    // Spans cost about half of a step's interpreter work (packages/bench, scenario 7): made only
    // when someone records them, that is when a tracer other than Effect's built-in one is installed.
    const traced = fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer
    const turn = new Run(env, mode, input, traced, fiber.getRef(Clock.Clock))
    const loop = Effect.gen(function*() {
      if (env.refresh !== undefined) yield* turn.refreshTools(env.refresh)
      const first = turn.applyNow(Shell.start(turn.tools, input, turn.now()))
      let step: Turn.Result | Ended = Effect.isEffect(first) ? yield* first : first
      // Only what must run is an Effect (see `Run.next`); the rest of a step is done here at once.
      while (!isEnded(step)) {
        let next = turn.next(step)
        while (Effect.isEffect(next)) next = yield* next
        step = next
      }
      return finish(step)
    })
    const body = mode.input === undefined ? loop : withInput(turn, mode.input, loop)
    return (traced
      ? Effect.withSpan(body, "chat-ts.turn", {
        // No stack trace per span: capturing one (an Error per span) was a quarter of a step's cost
        // (packages/bench, scenario 1), and the call site it records is always this file.
        attributes: { "chat_ts.messages": input.length, "chat_ts.stream": mode.stream },
        captureStackTrace: false
      })
      : body).pipe(
        Effect.mapError((error) => turn.withState(error)),
        Effect.onInterrupt(() => turn.interruptRunning())
      )
  })

/**
 * `loop` with an input side: a fiber takes the caller's input (what it took is never lost
 * between the caller's queue and the turn's), keeps messages for the turn, and ends the turn on
 * `cancel` (interrupted, its running calls recorded as interrupted) or on input that is not a user
 * message of text and files (`InvalidSteeringMessage`). The caller's queue ending closes the input.
 */
const withInput = <A, E, R>(
  turn: Run<any, any>,
  source: Queue.Dequeue<ChatInput.ChatInput, unknown>,
  loop: Effect.Effect<A, E, R>
): Effect.Effect<A, E | ChatError.InvalidSteeringMessage, R> =>
  Effect.scoped(Effect.gen(function*() {
    const inputs = yield* Queue.unbounded<Message>()
    const stop = yield* Deferred.make<void, ChatError.InvalidSteeringMessage>()
    turn.inputs = inputs
    // All that waits is taken at once, so a burst sent together reaches the turn together.
    const takeOne = Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(Queue.takeAll(source)), (items): Effect.Effect<void, "stop"> => {
        for (const item of items) {
          if (ChatInput.isCancel(item)) return Effect.andThen(Deferred.succeed(stop, undefined), Effect.fail("stop" as const))
          const problem = Turn.inputProblem(item)
          if (problem !== undefined) {
            return Effect.andThen(Deferred.fail(stop, new ChatError.InvalidSteeringMessage({ detail: problem })), Effect.fail("stop" as const))
          }
          Queue.offerUnsafe(inputs, item)
        }
        return Effect.void
      })
    )
    yield* Effect.forkScoped(Effect.ignore(Effect.forever(takeOne)))
    return yield* Effect.raceFirst(
      Effect.onInterrupt(loop, () => turn.interruptRunning()),
      Effect.flatMap(Deferred.await(stop), () => Effect.interrupt)
    )
  }))

/** A run of one outcome's work in the current fiber: spans only when a tracer other than Effect's built-in one is installed. */
const runIn = <R, E>(env: Env<R, E>, mode: Mode, messages: Messages.Messages): Effect.Effect<Run<R, E>> =>
  Effect.withFiber((fiber) =>
    Effect.succeed(new Run(env, mode, messages, fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer, fiber.getRef(Clock.Clock)))
  )

/** The work of single outcomes, for shells that record each piece on its own (see `Shell.Steps`). */
export const steps = <R, E>(env: Env<R, E>, mode: Mode): Omit<Shell.Steps<R>, "checkEdits" | "rerunnable"> => ({
  callModel: (messages, step) => Effect.flatMap(runIn(env, mode, messages), (turn) => turn.callModel(messages, step)),
  decide: (calls, now, messages, context) =>
    Effect.forEach(calls, (call) => Effect.map(env.tools().decide(call, now, messages, context), (decision) => ({ id: call.id, decision })), {
      concurrency: env.concurrency
    }),
  runTool: (messages, call) =>
    Effect.flatMap(runIn(env, mode, messages), (turn) =>
      Effect.map(turn.toolEvent(call), (event) => ({ event, defect: turn.defect?.detail })))
})
