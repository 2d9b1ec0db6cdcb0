/**
 * The `Chat` service: the Effect shell around the pure `Turn.step` reducer.
 *
 * It interprets the reducer's outcomes: it calls the `LanguageModel`, asks
 * each toolkit's strategy about the calls, runs the handlers (concurrently),
 * sleeps on Effect's `Clock` for scheduled calls when asked to, and returns a
 * pause or the completion. Everything a turn knows is in the messages it
 * returns, so a paused turn can be stored as JSON and resumed anywhere.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { ChatEvent, type Final, StructuredEvent } from "./ChatEvent.js"
import * as ChatError from "../data/ChatError.js"
import type * as ChatInput from "./ChatInput.js"
import * as ChatOutcome from "./ChatOutcome.js"
import type * as Grant from "../turn/GrantRules.js"
import * as Json from "../tools/ToolCodec.js"
import { PartialOutput } from "./internal/partialOutput.js"
import * as Structured from "../tools/ResponseFormat.js"
import * as SourcePull from "./internal/sourcePull.js"
import * as Strategy from "./internal/strategy.js"
import type * as Shell from "./Shell.js"
import * as Stepping from "../turn/Stepping.js"
import * as TurnRunner from "./internal/turnRunner.js"
import * as LanguageModel from "../model/LanguageModel.js"
import * as Messages from "../turn/Messages.js"
import * as Tool from "../tools/Tool.js"
import * as ToolResult from "../tools/ToolResult.js"
import type * as Toolkit from "../tools/Toolkit.js"
import * as Turn from "../turn/Turn.js"
import * as TurnEvents from "./TurnEvents.js"

/**
 * Settings of a chat.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options<Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any>> {
  /** The toolkits serving this chat; a tool name owned twice is a `DuplicateToolName` error. */
  readonly tools?: Kits
  /** The most model calls one turn may make (default 10). */
  readonly maxSteps?: number
  /** How many tool calls may run at once (default: all of a response). */
  readonly concurrency?: number | "unbounded"
  /** A system prompt sent before the conversation on every model call (not stored in the messages). */
  readonly system?: string
  /** Options of every model call (temperature, max tokens, tool choice…). */
  readonly modelOptions?: LanguageModel.Options
}

/**
 * Settings of a chat whose tools may change while it lives. `E`: what `refreshTools` may fail with.
 *
 * @category models
 * @since 0.1.0
 */
export interface RefreshOptions<Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any>, E = never> extends Options<Kits> {
  /**
   * The chat's tools as they are now, for tools that change while the chat
   * lives (an MCP server's list). Read at the start of every turn and before
   * every model call: the request declares the tools read, and the calls of
   * its response are decided and run with them (their handlers: those of the
   * `ToolSet`, else from the context of `make`). When it fails, or the tools
   * read own a name twice, cannot be declared or have no handler
   * (`MissingToolHandler`), the turn fails with that error before the model is
   * called; when it dies (throws, or gives something that is not a `ToolSet`),
   * with a `RefreshToolsDefect`. `error.messages` holds what already ran (for
   * core's errors, and yours when they have the field). A `ToolSet` with the same toolkits
   * and handlers as the last one reuses its table. `tools` are the tools
   * until the first read.
   */
  readonly refreshTools: Effect.Effect<ToolSet, E>
}

/**
 * The tools of a chat at one moment (see `RefreshOptions.refreshTools`).
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolSet {
  /** Every toolkit serving the chat now (in place of `tools` and of the toolkits read before). */
  readonly tools: ReadonlyArray<Toolkit.Any>
  /** Handler services of these tools, over those of the context `make` ran in. */
  readonly handlers?: Context.Context<never> | undefined
}

/**
 * Who decides (`chat.approve`, `approveJson`, `reject`): checked against the call's decision policy and recorded with the clock's time.
 *
 * @category models
 * @since 0.3.0
 */
export interface DeciderOptions {
  readonly decider?: Messages.Identity | undefined
}

/**
 * Who decides, under its former name.
 *
 * @deprecated Use `DeciderOptions` (`Messages.DecideOptions` is another thing: the decider and the time).
 * @category models
 * @since 0.3.0
 */
export type DecideOptions = DeciderOptions

/** The decider and the clock's time, as `Messages` takes them (nothing without a decider). */
const decidedAt = (options: DeciderOptions | undefined): Effect.Effect<Messages.DecideOptions | undefined> =>
  options?.decider === undefined
    ? Effect.succeed(undefined)
    : Effect.map(Clock.currentTimeMillis, (at) => ({ decider: options.decider!, at }))

/**
 * Settings of one call of `complete`, `resume`, `stream`, `completeStructured` or `streamStructured`.
 *
 * @category models
 * @since 0.1.0
 */
export interface TurnOptions {
  /** Sleep (on Effect's `Clock`) until scheduled calls are due instead of pausing on them. */
  readonly waitForScheduled?: boolean
  /** Overrides the chat's `maxSteps` for this call. */
  readonly maxSteps?: number
  /** Model options for this call, over the chat's. */
  readonly modelOptions?: LanguageModel.Options
  /**
   * Called with the messages after every change of state (a response added,
   * a call decided, started or finished). Store them to survive a crash: a
   * call recorded as running is never run again on resume.
   */
  readonly checkpoint?: TurnRunner.Checkpoint
  /** Whom this turn acts for (a conversation id, a user): a grant with a `scope` covers calls only when it matches (see `Grant`). */
  readonly grantContext?: Grant.Context
}

/**
 * Settings of one call of `stream`: those of a turn, and its input side.
 *
 * @category models
 * @since 0.3.0
 */
export interface StreamOptions extends TurnOptions {
  /**
   * User messages (text and files) sent while the turn runs, and `ChatInput.cancel` (see
   * `ChatInput`): a message interrupts the model's answer while it streams and the model answers
   * again with it (`AnswerInterrupted` says so); one sent while calls run or wait is held until
   * they are resolved. A message of another kind fails the turn with `InvalidSteeringMessage`.
   */
  readonly input?: Queue.Dequeue<ChatInput.ChatInput, unknown>
  /** The most model calls input may interrupt in this turn (default `Turn.defaultMaxInputRestarts`); one more fails with `InputRestartLimitReached`. */
  readonly maxInputRestarts?: number
  /** What becomes of an interrupted answer: kept as an assistant message (default) or dropped. */
  readonly interruptedAnswer?: "keep" | "drop"
}

/**
 * Settings of one call of `events`: those of a turn, a signal that stops it, and its services.
 *
 * @category models
 * @since 0.3.0
 */
export interface EventsOptions<R = never> extends TurnOptions, TurnEvents.Options<R> {}

/**
 * What a `checkpoint` may fail with (see `ChatError.CheckpointError`).
 *
 * @category errors
 * @since 0.1.0
 */
export type CheckpointError = ChatError.CheckpointError

/**
 * The errors of a turn (see `ChatError.TurnFailure`).
 *
 * @category errors
 * @since 0.1.0
 */
export type TurnError = ChatError.TurnFailure

/**
 * A chat: runs turns that may pause for people and for time. `R`: the
 * services its strategies use; `E`: what reading its tools again may fail with
 * (with `refreshTools` only).
 *
 * @category models
 * @since 0.1.0
 */
export interface Service<R = never, E = never> {
  /** The tools the model sees (with `refreshTools`: as last read). */
  readonly tools: ReadonlyArray<LanguageModel.ToolDeclaration>
  /**
   * Runs the turn to its end or its next pause. If the messages end with a
   * user message, the model is called; if they hold a paused turn, it goes on
   * (same as `resume`); if the turn is complete, its completion is returned.
   */
  readonly complete: (
    messages: Messages.Messages,
    options?: TurnOptions
  ) => Effect.Effect<ChatOutcome.Result, TurnError | E, R>
  /** Picks a paused turn back up after its calls were approved or rejected. */
  readonly resume: (
    messages: Messages.Messages,
    options?: TurnOptions
  ) => Effect.Effect<ChatOutcome.Result, TurnError | E, R>
  /**
   * Approves a pending call (like `Messages.approve`), checking edited
   * arguments against the tool's parameters now: a bad edit is an
   * `InvalidEditedArguments` at once, with the messages unchanged. `edited`
   * is the arguments as a value; a string is a JSON string, never JSON text.
   */
  readonly approve: (
    messages: Messages.Messages,
    id: string,
    edited?: unknown,
    options?: DeciderOptions
  ) => Effect.Effect<Messages.Messages, ChatError.ResolveError>
  /**
   * Approves a pending call with edited arguments given as JSON text (typed by a
   * person), like `Messages.approveJson`, checking them against the tool's
   * parameters now: text that is not JSON, gives a key twice in one object, or
   * does not match is an `InvalidEditedArguments` at once, with the messages unchanged.
   */
  readonly approveJson: (
    messages: Messages.Messages,
    id: string,
    json: string,
    options?: DeciderOptions
  ) => Effect.Effect<Messages.Messages, ChatError.ResolveError>
  /** Rejects a pending call (same as `Messages.reject`); the model sees `reason`. */
  readonly reject: (
    messages: Messages.Messages,
    id: string,
    reason?: string,
    options?: DeciderOptions
  ) => Effect.Effect<Messages.Messages, ChatError.ResolveError>
  /** Withdraws a call that has not started (same as `Messages.cancel`); the model sees who withdrew it and `reason`. */
  readonly cancel: (
    messages: Messages.Messages,
    id: string,
    options?: Messages.CancelOptions
  ) => Effect.Effect<Messages.Messages, ChatError.ResolveError>
  /** The turn as a stream of events; a pause ends the stream with a `Paused` event. */
  readonly stream: (messages: Messages.Messages, options?: StreamOptions) => Stream.Stream<ChatEvent, TurnError | E, R>
  /**
   * The events of `stream` as a plain `AsyncIterable`, for code outside Effect (see `TurnEvents`):
   * the same events and guarantees, the turn's typed errors thrown; `options.context` gives the
   * strategies' services, `options.signal` stops the turn.
   */
  readonly events: (
    messages: Messages.Messages,
    ...options: [R] extends [never] ? [options?: EventsOptions<R>] : [options: EventsOptions<R> & { readonly context: Context.Context<R> }]
  ) => TurnEvents.TurnEvents
  /** Like `complete`, asking for a JSON answer decoded with `schema`; pauses and resumes the same way. */
  readonly completeStructured: <A, I>(
    messages: Messages.Messages,
    schema: Schema.Codec<A, I>,
    options?: TurnOptions
  ) => Effect.Effect<ChatOutcome.Result<A>, TurnError | ChatError.StructuredOutputError | E, R>
  /**
   * Like `completeStructured`, as a stream (built on `stream`): `Partial` values while the answer's
   * JSON arrives, then `Completed` with the value decoded with `schema` (a bad answer fails with the
   * same `StructuredOutputError`), or `Paused` when the turn waits for people or time.
   */
  readonly streamStructured: <A, I>(
    messages: Messages.Messages,
    schema: Schema.Codec<A, I>,
    options?: TurnOptions
  ) => Stream.Stream<StructuredEvent<A>, TurnError | ChatError.StructuredOutputError | E, R>
  /**
   * The work of single outcomes, for other shells around `Turn.step` (the
   * durable `@chat-ts/workflow`). They use the tools as last read: they do not
   * call `refreshTools`.
   */
  readonly steps: Steps<R>
}

/**
 * The work one outcome of `Turn.step` asks for, done the way `Chat` does it (see `Shell.Steps`).
 *
 * @category models
 * @since 0.1.0
 */
export type Steps<R = never> = Shell.Steps<R>

/**
 * The chat in use, when provided as a service (see `layer`).
 *
 * @category services
 * @since 0.1.0
 */
export class Chat extends Context.Service<Chat, Service>()("@chat-ts/core/Chat") {}

type KitsOf<K> = K extends ReadonlyArray<infer T> ? T : K

/**
 * The services the strategies of these toolkits use.
 *
 * @category models
 * @since 0.1.0
 */
export type StrategiesContext<K> = Toolkit.StrategyContext<KitsOf<K>>

/**
 * The handler services of these toolkits.
 *
 * @category models
 * @since 0.1.0
 */
export type HandlersContext<K> = Toolkit.HandlersOfToolkit<KitsOf<K>>

/** How many events `stream` buffers ahead of a slow consumer before the turn waits. */
const streamCapacity = 64

/** A model response's stream, handed by a streamed turn to its consumer to pull (see `stream`). */
class Handover {
  constructor(
    readonly parts: Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError>,
    /** Emits a part's events (into the consumer's pull while it pulls). */
    readonly onPart: (part: LanguageModel.StreamPart) => Effect.Effect<void>,
    /** Where the consumer puts the gathered response, or the stream's failure; the turn waits on it. */
    readonly done: Deferred.Deferred<LanguageModel.Response, ChatError.ModelError>,
    /** The turn's span, the parent of the provider's spans wherever the stream is pulled. */
    readonly span: Option.Option<Tracer.AnySpan>
  ) {}
}

/**
 * The consumer's side of a handover: the response's events, pulled (one pull
 * of the model's stream per pull of the consumer); the gathered response, or
 * the stream's failure, goes back to the turn. `redirect` points the turn's
 * emits at the events of the current pull while it lasts (`undefined` after).
 */
const pullHandover = (redirect: (events: Array<ChatEvent> | undefined) => void) => (handover: Handover): Stream.Stream<ChatEvent> =>
  Stream.suspend(() => {
    const events: Array<ChatEvent> = []
    redirect(events)
    // A provider's `decodeEvents` stream: each pull reads the SDK's iterator in place (packages/bench, scenario 3).
    if (SourcePull.applies(handover)) return SourcePull.pull(handover, events, () => redirect(undefined))
    const acc = new LanguageModel.Accumulator()
    const parts = Option.isSome(handover.span)
      ? Stream.provideService(handover.parts, Tracer.ParentSpan, handover.span.value)
      : handover.parts
    const take = Effect.sync(() => events.splice(0))
    const onPart = (part: LanguageModel.StreamPart) =>
      Effect.suspend(() => {
        acc.add(part)
        return handover.onPart(part)
      })
    /** The events of one chunk of parts: emitted as `onPart` is called, and what it returns is run, in order. */
    const eventsOf = (chunk: ReadonlyArray<LanguageModel.StreamPart>): Effect.Effect<Array<ChatEvent>> => {
      for (let i = 0; i < chunk.length; i++) {
        acc.add(chunk[i]!)
        const effect = handover.onPart(chunk[i]!)
        // A delta's emits return `Effect.void` while the consumer pulls: nothing to run.
        if (effect !== Effect.void) {
          return effect.pipe(Effect.andThen(Effect.forEach(chunk.slice(i + 1), onPart, { discard: true })), Effect.andThen(take))
        }
      }
      return take
    }
    return Stream.transformPull(parts, (upstream) => {
      const next: Pull.Pull<readonly [ChatEvent, ...Array<ChatEvent>]> = Pull.matchEffect(upstream, {
        onSuccess: (chunk) =>
          Effect.flatMap(eventsOf(chunk), (out) => (out.length === 0 ? next : Effect.succeed(out as [ChatEvent, ...Array<ChatEvent>]))),
        onFailure: (cause) =>
          Effect.suspend(() => {
            redirect(undefined)
            return Effect.andThen(Deferred.failCause(handover.done, cause), Cause.done())
          }),
        onDone: () =>
          Effect.suspend(() => {
            redirect(undefined)
            return Effect.andThen(Deferred.complete(handover.done, LanguageModel.finish(acc)), Cause.done())
          })
      })
      return Effect.succeed(next)
    })
  })

/** The last event of a streamed turn. */
const finalEvent = ({ messages, outcome }: ChatOutcome.Result): Final =>
  outcome._tag === "Complete"
    ? ChatEvent.Completed({ response: outcome.response, messages, usage: outcome.usage })
    : ChatEvent.Paused({ reason: outcome.reason, messages, usage: outcome.usage })

/**
 * The errors of `Chat.make`: a tool name owned twice, a tool that cannot be declared to the model, a tool with no handler.
 *
 * @category errors
 * @since 0.1.0
 */
export type MakeError = ChatError.DuplicateToolName | ChatError.InvalidToolSchema | ChatError.MissingToolHandler

/**
 * What reading the tools again (`refreshTools`) may fail with besides its own
 * error: what `make` may (for the tools read), or a refresh that died.
 *
 * @category errors
 * @since 0.3.0
 */
export type RefreshError = MakeError | ChatError.RefreshToolsDefect

const notStrictWarning = (what: string, reasons: ReadonlyArray<string>): string =>
  `${what} is sent without strict mode, so the model may not follow its schema exactly: ${reasons.join("; ")}.`

/**
 * Builds the response format asked of the model for a structured turn.
 *
 * @category utils
 * @since 0.1.0
 */
export const responseFormat = <A, I>(schema: Schema.Codec<A, I>): LanguageModel.ResponseFormat =>
  Structured.make(schema).format

/** The tool table of a chat: its tools by name (toolkit and handler), their declarations, and what depends on them. */
interface Table<R> extends TurnRunner.Tools<R> {
  /** Why an approved call's edited arguments do not fit its tool, if they do not. */
  readonly editProblem: (call: Messages.ToolCallPart) => string | undefined
}

/** The response format of `schema`, or why it cannot be asked of a model (typed, before any request). */
const structuredOf = (
  schema: Schema.Top,
  messages: Messages.Messages
): Result.Result<Structured.Structured, ChatError.StructuredOutputError> => {
  try {
    return Result.succeed(Structured.make(schema))
  } catch (error) {
    // A schema with no JSON Schema (e.g. `Schema.Date`) cannot be asked of a model.
    return Result.fail(
      new ChatError.StructuredOutputError({
        detail: `the schema cannot be sent to the model: ${error instanceof Error ? error.message : String(error)}`,
        text: "",
        messages
      })
    )
  }
}

/** Logs why the response format is not strict, if it is not. */
const warnNotStrict = (structured: Structured.Structured): Effect.Effect<void> =>
  structured.notStrict.length === 0
    ? Effect.void
    : Effect.logWarning(notStrictWarning(`The response format '${structured.format.name}'`, structured.notStrict))

/** Decodes the final answer's text with the schema (after `fromWire`), or fails as `completeStructured` does. */
const decodeAnswer = <A, I>(
  schema: Schema.Codec<A, I>,
  structured: Structured.Structured,
  text: string,
  messages: Messages.Messages
): Effect.Effect<A, ChatError.StructuredOutputError> =>
  Result.flatMap(
    Json.parse(text, "answer's contents"),
    (json) => Result.mapError(Schema.decodeUnknownResult(schema)(structured.fromWire(json)), Json.formatParseError)
  ).pipe(
    Result.match({
      onFailure: (detail) => Effect.fail(new ChatError.StructuredOutputError({ detail, text, messages })),
      onSuccess: Effect.succeed
    })
  )

/**
 * Builds the tool table of these toolkits, each tool's handler taken from
 * `context`: a name owned twice is a `DuplicateToolName`, a tool that cannot
 * be declared to the model an `InvalidToolSchema`.
 */
const toolTable = <R>(kits: ReadonlyArray<Toolkit.Any>, context: Context.Context<never>): Effect.Effect<Table<R>, MakeError> =>
  Effect.gen(function*() {
    const entries = new Map<string, TurnRunner.Entry>()
    for (const kit of kits) {
      for (const tool of kit.list) {
        if (entries.has(tool.name)) return yield* new ChatError.DuplicateToolName({ name: tool.name })
        const wire = yield* Effect.fromResult(Tool.wire(tool))
        const kitCap = kit.resultLimits?.get(tool.name)
        if (kitCap !== undefined && !Tool.isMaxChars(kitCap)) {
          return yield* new ChatError.InvalidToolSchema({
            tool: tool.name,
            detail: `its toolkit's maxResultChars must be a whole number >= 0 or Infinity, not ${String(kitCap)}`
          })
        }
        const kitFileCap = kit.resultFileLimits?.get(tool.name)
        if (kitFileCap !== undefined && !Tool.isMaxChars(kitFileCap)) {
          return yield* new ChatError.InvalidToolSchema({
            tool: tool.name,
            detail: `its toolkit's maxResultFileBytes must be a whole number >= 0 or Infinity, not ${String(kitFileCap)}`
          })
        }
        if (wire.notStrict.length > 0) yield* Effect.logWarning(notStrictWarning(`Tool '${tool.name}'`, wire.notStrict))
        // The types ask for every handler, but a `ToolSet`'s handlers (or a cast) are not checked by them.
        const handler = Context.getOption(context as Context.Context<unknown>, Tool.handlerTag(tool.name))
        if (Option.isNone(handler)) return yield* new ChatError.MissingToolHandler({ tool: tool.name })
        entries.set(tool.name, {
          tool,
          kit,
          handler: handler.value,
          maxResultChars: ToolResult.maxCharsOf(tool, kit),
          maxResultFileBytes: ToolResult.maxFileBytesOf(tool, kit)
        })
      }
    }
    const available = [...entries.keys()].join(", ") || "(none)"

    const editProblem = (call: Messages.ToolCallPart): string | undefined => {
      if (call.status._tag !== "Approved" || call.status.editedArguments === undefined) return undefined
      const entry = entries.get(call.name)
      if (entry === undefined) return `no tool named '${call.name}' serves this chat`
      return Json.editTextProblem(entry.tool, call.status.editedArguments)
    }

    return {
      entries,
      declarations: [...entries.values()].map((entry) => entry.tool.declaration),
      decide: (call, now, messages, context, decoded) => Strategy.decide<R>(entries.get(call.name), call, now, available, messages, context, decoded),
      editProblem,
      checkEdits: (messages) =>
        Messages.lastCalls(messages).flatMap((call) => {
          const detail = editProblem(call)
          return detail === undefined ? [] : [{ id: call.id, detail }]
        }),
      // Calls left running by a worker that died whose tool is idempotent and may start again.
      rerunnable: (messages) => Stepping.rerunnable(messages, (name) => entries.get(name)?.tool)
    }
  })

/** Why a refresh's value is not a `ToolSet` (`{ tools: [toolkit…], handlers?: Context }`), or `undefined` when it is. */
const toolSetProblem = (set: unknown): string | undefined => {
  if (typeof set !== "object" || set === null) return `it gave ${set === null ? "null" : typeof set}, not a ToolSet ({ tools, handlers? })`
  const { handlers, tools } = set as { readonly tools?: unknown; readonly handlers?: unknown }
  if (!Array.isArray(tools)) return "the ToolSet it gave has no array of toolkits as tools"
  if (handlers !== undefined && !Context.isContext(handlers)) return "the ToolSet's handlers are not a Context (build them with Layer.build)"
  return undefined
}

/** A defect as text: an error's message, else the value. */
const defectText = (defect: unknown): string => ChatError.boundDetail(defect instanceof Error ? defect.message : String(defect))

/** Whether two tool sets hold the same toolkits, in the same order, and the same handlers. */
const sameToolSet = (a: ToolSet, b: ToolSet | undefined): boolean =>
  b !== undefined && a.handlers === b.handlers && a.tools.length === b.tools.length &&
  a.tools.every((kit, i) => kit === b.tools[i])

/**
 * Makes a chat from its toolkits. It needs the `LanguageModel` and the
 * handlers of every tool (from `toolkit.toLayer`); the strategies' services
 * are needed when turns run. With `refreshTools`, a turn may also fail with
 * its error, or a `DuplicateToolName` / `InvalidToolSchema` in the tools read.
 *
 * @example
 * ```ts
 * import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
 * import { Effect, Schema } from "effect"
 *
 * const GetWeather = Tool.make("get_weather", {
 *   description: "The temperature in a city, in degrees Celsius.",
 *   parameters: { city: Schema.String },
 *   success: Schema.Number
 * })
 * const WeatherTools = Toolkit.make(GetWeather)
 *
 * // Needs a LanguageModel (a provider's layer) and the handlers (`WeatherTools.toLayer`).
 * const program = Effect.gen(function*() {
 *   const chat = yield* Chat.make({ tools: WeatherTools, system: "Answer in one sentence." })
 *   const result = yield* chat.complete(Messages.fromUser("How cold is it in Oslo?"))
 *   // A turn ends Complete, or Paused on calls waiting for a person or a time (resolve, then `chat.resume`).
 *   return result.outcome._tag === "Complete" ? result.outcome.value : "paused"
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export function make<const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any> = ReadonlyArray<never>, E = never>(
  options: RefreshOptions<Kits, E>
): Effect.Effect<
  Service<StrategiesContext<Kits>, E | RefreshError>,
  MakeError,
  LanguageModel.LanguageModel | HandlersContext<Kits>
>
export function make<const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any> = ReadonlyArray<never>>(
  options?: Options<Kits>
): Effect.Effect<
  Service<StrategiesContext<Kits>>,
  MakeError,
  LanguageModel.LanguageModel | HandlersContext<Kits>
>
export function make<const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any> = ReadonlyArray<never>, E = never>(
  options: Options<Kits> & { readonly refreshTools?: Effect.Effect<ToolSet, E> } = {}
): Effect.Effect<
  Service<StrategiesContext<Kits>, E | RefreshError>,
  MakeError,
  LanguageModel.LanguageModel | HandlersContext<Kits>
> {
  return Effect.gen(function*() {
    type R = StrategiesContext<Kits>
    const model = yield* LanguageModel.LanguageModel
    const context = yield* Effect.context<never>()
    const kits: ReadonlyArray<Toolkit.Any> = options.tools === undefined
      ? []
      : Array.isArray(options.tools)
      ? options.tools
      : [options.tools as Toolkit.Any]
    /** The tools as last read (at `make`, then by `refreshTools`), and the set they were read from. */
    let table = yield* toolTable<R>(kits, context)
    let read: ToolSet | undefined
    const refreshTools = options.refreshTools
    const defaults = { maxSteps: options.maxSteps ?? Turn.defaultConfig.maxSteps }
    const concurrency = options.concurrency ?? "unbounded"

    /** The tools of a set read by `refreshTools`: the last table when the set is the same, else a new one. */
    const tableOf = (set: ToolSet): Effect.Effect<Table<R>, MakeError | ChatError.RefreshToolsDefect> => {
      const problem = toolSetProblem(set)
      if (problem !== undefined) return Effect.fail(new ChatError.RefreshToolsDefect({ detail: problem }))
      if (sameToolSet(set, read)) return Effect.succeed(table)
      return Effect.map(
        toolTable<R>(set.tools, set.handlers === undefined ? context : Context.merge(context, set.handlers)),
        (next) => {
          read = set
          table = next
          return next
        }
      )
    }

    const env: TurnRunner.Env<R, E | RefreshError> = {
      tools: () => table,
      // A refresh that dies is a typed error too, carrying what ran (an interruption stays one).
      refresh: refreshTools === undefined ? undefined : Effect.flatMap(refreshTools, tableOf).pipe(
        Effect.catchDefect((defect) => Effect.fail(new ChatError.RefreshToolsDefect({ detail: defectText(defect) })))
      ),
      model,
      system: options.system,
      concurrency,
      results: Option.getOrUndefined(yield* Effect.serviceOption(ToolResult.Store))
    }
    const checkEdits = (messages: Messages.Messages) => table.checkEdits(messages)
    const rerunnable = (messages: Messages.Messages) => table.rerunnable(messages)

    const runTurn = <A = TurnRunner.Ended>(
      input: Messages.Messages,
      turnOptions: TurnOptions,
      mode: {
        readonly stream: boolean
        readonly emit: ((event: ChatEvent) => Effect.Effect<void>) | undefined
        readonly collect?: TurnRunner.Mode["collect"]
        readonly responseFormat?: LanguageModel.ResponseFormat
        readonly input?: StreamOptions | undefined
      },
      finish?: (ended: TurnRunner.Ended) => A
    ): Effect.Effect<A, TurnError | E | RefreshError, R> =>
      TurnRunner.run(env, {
        config: {
          maxSteps: turnOptions.maxSteps ?? defaults.maxSteps,
          waitForScheduled: turnOptions.waitForScheduled ?? false,
          ...(mode.input?.maxInputRestarts === undefined ? {} : { maxInputRestarts: mode.input.maxInputRestarts }),
          ...(mode.input?.interruptedAnswer === undefined ? {} : { interruptedAnswer: mode.input.interruptedAnswer })
        },
        modelOptions: {
          ...options.modelOptions,
          ...turnOptions.modelOptions,
          ...(mode.responseFormat === undefined ? {} : { responseFormat: mode.responseFormat })
        },
        checkpoint: turnOptions.checkpoint,
        ...(turnOptions.grantContext === undefined ? {} : { grants: turnOptions.grantContext }),
        stream: mode.stream,
        emit: mode.emit ?? (() => Effect.void),
        ...(mode.collect === undefined ? {} : { collect: mode.collect }),
        ...(mode.input?.input === undefined ? {} : { input: mode.input.input })
      }, input, finish)

    const toResult = (run: TurnRunner.Ended): ChatOutcome.Result => {
      const outcome = run.outcome
      return outcome._tag === "Complete"
        ? {
          messages: run.messages,
          outcome: ChatOutcome.Complete({ response: outcome.response, value: Messages.textOf(outcome.response), usage: outcome.usage })
        }
        : { messages: run.messages, outcome: ChatOutcome.Paused({ reason: outcome.reason, usage: outcome.usage }) }
    }

    const complete = (messages: Messages.Messages, turnOptions: TurnOptions = {}) =>
      // The result made in the turn's loop, not by a step after it.
      runTurn(messages, turnOptions, { stream: false, emit: undefined }, toResult)

    /** An approval (made by `Messages`), its edit checked against the tool's parameters at once. */
    const checked = (messages: Messages.Messages, id: string, approved: Result.Result<Messages.Messages, ChatError.ResolveError>) =>
      Effect.flatMap(Effect.fromResult(approved), (next) => {
        const call = Messages.findTool(next, id)!
        const detail = table.editProblem(call)
        return detail === undefined
          ? Effect.succeed(next)
          : Effect.fail(new ChatError.InvalidEditedArguments({ id, name: call.name, detail, messages }))
      })
    const approve = (messages: Messages.Messages, id: string, edited?: unknown, options?: DeciderOptions) =>
      Effect.flatMap(decidedAt(options), (at) => checked(messages, id, Messages.approve(messages, id, edited, at)))
    const approveJson = (messages: Messages.Messages, id: string, json: string, options?: DeciderOptions) =>
      Effect.flatMap(decidedAt(options), (at) => checked(messages, id, Messages.approveJson(messages, id, json, at)))
    const reject = (messages: Messages.Messages, id: string, reason?: string, options?: DeciderOptions) =>
      Effect.flatMap(decidedAt(options), (at) => Effect.fromResult(Messages.reject(messages, id, reason, at)))

    /**
     * The turn as a stream of events. The turn runs in a fiber of its own and
     * hands its events to the consumer through a bounded queue (it waits only
     * when the consumer lags 64 events behind), except a model response's:
     * the turn hands the response's stream over and waits, and the consumer
     * pulls it in its own fiber, so every delta's events come out within the
     * consumer's pull, with no hop between fibers per event (packages/bench,
     * scenario 3). The consumer gives the gathered response, or the stream's
     * failure, back to the turn. Stopping the consumer interrupts the turn.
     */
    const streamTurn = (
      messages: Messages.Messages,
      turnOptions: StreamOptions,
      responseFormat?: LanguageModel.ResponseFormat
    ): Stream.Stream<ChatEvent, TurnError | E | RefreshError, R> =>
      Stream.unwrap(Effect.gen(function*() {
        const queue = yield* Effect.acquireRelease(
          Queue.bounded<ChatEvent | Handover, TurnError | E | RefreshError | Cause.Done>(streamCapacity),
          (queue) => Queue.shutdown(queue)
        )
        /** While the consumer pulls a model response: where the events emitted on the way go. */
        let pulled: Array<ChatEvent> | undefined
        // Called when the turn runs its emits (and, while the consumer pulls, by the parts' `onPart`).
        const emit = (event: ChatEvent): Effect.Effect<void> => {
          if (pulled === undefined) return Effect.asVoid(Queue.offer(queue, event))
          pulled.push(event)
          return Effect.void
        }
        const collect: TurnRunner.Mode["collect"] = (parts, onPart) =>
          Effect.flatMap(
            Effect.all([Deferred.make<LanguageModel.Response, ChatError.ModelError>(), Effect.serviceOption(Tracer.ParentSpan)]),
            ([done, span]) => Effect.andThen(Queue.offer(queue, new Handover(parts, onPart, done, span)), Deferred.await(done))
          )
        // With an input side the turn pulls the model's stream itself, to close it when input comes.
        const interruptible = turnOptions.input !== undefined
        yield* runTurn(messages, turnOptions, {
          stream: true,
          emit,
          ...(interruptible ? { input: turnOptions } : { collect }),
          ...(responseFormat === undefined ? {} : { responseFormat })
        }).pipe(
          Effect.flatMap((run) => {
            const result = toResult(run)
            const outcome = result.outcome
            const last = outcome._tag === "Complete"
              ? ChatEvent.Completed({ response: outcome.response, messages: result.messages, usage: outcome.usage })
              : ChatEvent.Paused({ reason: outcome.reason, messages: result.messages, usage: outcome.usage })
            return Queue.offer(queue, last)
          }),
          Effect.exit,
          Effect.flatMap((exit) => (Exit.isSuccess(exit) ? Queue.end(queue) : Queue.failCause(queue, exit.cause))),
          Effect.forkScoped
        )
        const pullOf = pullHandover((events) => void (pulled = events))
        return Stream.flatMap(Stream.fromQueue(queue), (item) => (item instanceof Handover ? pullOf(item) : Stream.succeed(item)))
      }))

    const service: Service<R, E | RefreshError> = {
      get tools() {
        return table.declarations
      },
      steps: {
        ...TurnRunner.steps(env, {
          config: { ...Turn.defaultConfig, ...defaults },
          modelOptions: options.modelOptions ?? {},
          checkpoint: undefined,
          stream: false,
          emit: () => Effect.void
        }),
        checkEdits,
        rerunnable
      },
      complete,
      resume: complete,
      approve,
      approveJson,
      reject,
      cancel: (messages, id, cancelOptions) => Effect.fromResult(Messages.cancel(messages, id, cancelOptions)),
      stream: (messages, turnOptions = {}) => streamTurn(messages, turnOptions),
      // The rest parameter's type asks for `context` when the strategies need services.
      events: ((messages: Messages.Messages, eventOptions: EventsOptions<R> = {}) =>
        TurnEvents.make(
          (emit, collect) => Effect.map(runTurn(messages, eventOptions, { stream: true, emit, collect }), (run) => finalEvent(toResult(run))),
          eventOptions
        )) as Service<R, E | RefreshError>["events"],
      completeStructured: <A, I>(messages: Messages.Messages, schema: Schema.Codec<A, I>, turnOptions: TurnOptions = {}) => {
        const made = structuredOf(schema, messages)
        if (Result.isFailure(made)) return Effect.fail(made.failure)
        const structured = made.success
        return Effect.andThen(
          warnNotStrict(structured),
          runTurn(messages, turnOptions, { stream: false, emit: undefined, responseFormat: structured.format })
        ).pipe(
          Effect.flatMap((run): Effect.Effect<ChatOutcome.Result<A>, ChatError.StructuredOutputError> => {
            const result = toResult(run)
            const outcome = result.outcome
            if (outcome._tag === "Paused") return Effect.succeed({ messages: result.messages, outcome })
            return Effect.map(decodeAnswer(schema, structured, outcome.value, result.messages), (value) => ({
              messages: result.messages,
              outcome: ChatOutcome.Complete({ response: outcome.response, value, usage: outcome.usage })
            }))
          })
        )
      },
      streamStructured: <A, I>(messages: Messages.Messages, schema: Schema.Codec<A, I>, turnOptions: TurnOptions = {}) => {
        const made = structuredOf(schema, messages)
        if (Result.isFailure(made)) return Stream.fail(made.failure)
        const structured = made.success
        const options = { ...turnOptions, modelOptions: { ...turnOptions.modelOptions, responseFormat: structured.format } }
        return Stream.unwrap(Effect.as(warnNotStrict(structured), Stream.suspend(() => {
          const partial = new PartialOutput(structured)
          return service.stream(messages, options).pipe(Stream.mapEffect((
            event
          ): Effect.Effect<ReadonlyArray<StructuredEvent<A>>, ChatError.StructuredOutputError> => {
            switch (event._tag) {
              case "TextDelta": {
                const known = partial.add(event.text)
                return Effect.succeed(known === undefined ? [] : [StructuredEvent.Partial(known)])
              }
              case "StepFinished":
                partial.reset()
                return Effect.succeed([])
              case "Paused":
                return Effect.succeed([StructuredEvent.Paused({ reason: event.reason, messages: event.messages, usage: event.usage })])
              case "Completed":
                return Effect.map(
                  decodeAnswer(schema, structured, Messages.textOf(event.response), event.messages),
                  (value) => [StructuredEvent.Completed({ value, response: event.response, messages: event.messages, usage: event.usage })]
                )
              default:
                return Effect.succeed([])
            }
          }), Stream.flattenIterable)
        })))
      }
    }
    return service
  })
}

/**
 * A layer providing `Chat` (for toolkits whose strategies need no services).
 *
 * @example
 * ```ts
 * import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
 * import { Effect, Schema } from "effect"
 *
 * const Now = Tool.make("now", { description: "The current time.", parameters: {}, success: Schema.Number })
 * const ClockTools = Toolkit.make(Now)
 *
 * // The chat as a service, for the program's other layers (needs a LanguageModel and the handlers).
 * const ChatLive = Chat.layer({ tools: ClockTools })
 *
 * const ask = (question: string) =>
 *   Effect.gen(function*() {
 *     const chat = yield* Chat.Chat
 *     return yield* chat.complete(Messages.fromUser(question))
 *   })
 *
 * const program = ask("What time is it?").pipe(Effect.provide(ChatLive))
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any> = ReadonlyArray<never>>(
  options: Options<Kits> & ([StrategiesContext<Kits>] extends [never] ? unknown : never)
): Layer.Layer<Chat, MakeError, LanguageModel.LanguageModel | HandlersContext<Kits>> =>
  Layer.effect(Chat, make(options) as Effect.Effect<Service, MakeError, LanguageModel.LanguageModel | HandlersContext<Kits>>)
