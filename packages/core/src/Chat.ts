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
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Action from "./Action.js"
import { ChatEvent } from "./ChatEvent.js"
import * as ChatError from "./ChatError.js"
import * as ChatOutcome from "./ChatOutcome.js"
import * as JsonSchema from "./internal/jsonSchema.js"
import * as LanguageModel from "./LanguageModel.js"
import * as Messages from "./Messages.js"
import * as PauseReason from "./PauseReason.js"
import type { Message, ToolCallPart } from "./Messages.js"
import * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"
import * as Turn from "./Turn.js"

/** Settings of a chat. */
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

/** Settings of one call of `complete`, `resume`, `stream` or `completeStructured`. */
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
  readonly checkpoint?: (messages: Messages.Messages) => Effect.Effect<void, CheckpointError>
}

/** What a `checkpoint` may fail with: the store failed, another writer saved first, or another worker took the lease. The turn then stops with it. */
export type CheckpointError = ChatError.StoreError | ChatError.ConcurrentModification | ChatError.ConversationBusy

/** The errors of a turn. */
export type TurnError = ChatError.TurnError | ChatError.PendingToolCalls | CheckpointError

/** A chat: runs turns that may pause for people and for time. `R`: the services its strategies use. */
export interface Service<R = never> {
  /** The tools the model sees. */
  readonly tools: ReadonlyArray<LanguageModel.ToolDeclaration>
  /**
   * Runs the turn to its end or its next pause. If the messages end with a
   * user message, the model is called; if they hold a paused turn, it goes on
   * (same as `resume`); if the turn is complete, its completion is returned.
   */
  readonly complete: (
    messages: Messages.Messages,
    options?: TurnOptions
  ) => Effect.Effect<ChatOutcome.Result, TurnError, R>
  /** Picks a paused turn back up after its calls were approved or rejected. */
  readonly resume: (
    messages: Messages.Messages,
    options?: TurnOptions
  ) => Effect.Effect<ChatOutcome.Result, TurnError, R>
  /** The turn as a stream of events; a pause ends the stream with a `Paused` event. */
  readonly stream: (messages: Messages.Messages, options?: TurnOptions) => Stream.Stream<ChatEvent, TurnError, R>
  /** Like `complete`, asking for a JSON answer decoded with `schema`; pauses and resumes the same way. */
  readonly completeStructured: <A, I>(
    messages: Messages.Messages,
    schema: Schema.Schema<A, I>,
    options?: TurnOptions
  ) => Effect.Effect<ChatOutcome.Result<A>, TurnError | ChatError.StructuredOutputError, R>
}

/** The chat in use, when provided as a service (see `layer`). */
export class Chat extends Context.Tag("@chat-ts/core/Chat")<Chat, Service>() {}

type KitsOf<K> = K extends ReadonlyArray<infer T> ? T : K

/** The services the strategies of these toolkits use. */
export type StrategiesContext<K> = Toolkit.StrategyContext<KitsOf<K>>

/** The handler services of these toolkits. */
export type HandlersContext<K> = Toolkit.HandlersOfToolkit<KitsOf<K>>

interface Entry {
  readonly tool: Tool.Any
  readonly kit: Toolkit.Any
  readonly handler: Tool.HandlerService
}

/** How many events `stream` buffers ahead of a slow consumer before the turn waits. */
const streamCapacity = 64

const interruptedError = "The call was interrupted while running; its outcome is unknown and it will not be run again."
const defectError = "The tool failed unexpectedly (an internal error); it may have partly run."

const formatParseError = (error: ParseResult.ParseError): string => ParseResult.TreeFormatter.formatErrorSync(error)

const parseJson = (text: string): Either.Either<unknown, string> => {
  try {
    return Either.right(JSON.parse(text === "" ? "{}" : text))
  } catch (error) {
    return Either.left(`The arguments are not valid JSON (${(error as Error).message}).`)
  }
}

/** Decodes a call's effective arguments with its tool's parameters; `Left` holds a message for the model. */
const decodeArguments = (tool: Tool.Any, text: string): Either.Either<unknown, string> =>
  Either.flatMap(parseJson(text), (json) =>
    Schema.decodeUnknownEither(tool.parameters as Schema.Schema<unknown, unknown>)(json).pipe(
      Either.mapLeft((error) =>
        `The arguments do not match the parameters of tool '${tool.name}': ${formatParseError(error)}`
      )
    ))

const lastCalls = (messages: Messages.Messages): ReadonlyArray<ToolCallPart> => {
  const last = messages[messages.length - 1]
  return last !== undefined && last.role === "assistant" ? Messages.toolCallsOf(last) : []
}

/** Calls of the last response that became resolved between two states. */
const newlyResolved = (before: Messages.Messages, after: Messages.Messages): ReadonlyArray<ToolCallPart> => {
  const previous = new Map(lastCalls(before).map((call) => [call.id, call]))
  return lastCalls(after).filter((call) => {
    if (!Messages.isResolved(call)) return false
    const old = previous.get(call.id)
    return old === undefined ? false : !Messages.isResolved(old)
  })
}

/**
 * Makes tool call ids unique within the conversation (a provider may repeat or
 * omit them). `taken` holds the ids already used; the ids given out are added.
 */
const uniqueIds = (taken: Set<string>, parts: ReadonlyArray<Messages.Part>): ReadonlyArray<Messages.Part> => {
  return parts.map((part) => {
    if (part._tag !== "ToolCall") return part
    let id = part.id === "" ? `call_${taken.size + 1}` : part.id
    for (let n = 2; taken.has(id); n++) id = `${part.id || "call"}_${n}`
    taken.add(id)
    return id === part.id ? part : { ...part, id }
  })
}

/** Builds the response format asked of the model for a structured turn. */
export const responseFormat = <A, I>(schema: Schema.Schema<A, I>): LanguageModel.ResponseFormat => {
  const json = JsonSchema.make(schema.ast)
  const identifier = schema.ast.annotations[Symbol.for("effect/annotation/Identifier")]
  return {
    type: "json",
    name: typeof identifier === "string" ? identifier : "output",
    schema: json,
    strict: Tool.isStrictCompatible(json)
  }
}

/**
 * Makes a chat from its toolkits. It needs the `LanguageModel` and the
 * handlers of every tool (from `toolkit.toLayer`); the strategies' services
 * are needed when turns run.
 */
export const make = <const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any> = ReadonlyArray<never>>(
  options: Options<Kits> = {}
): Effect.Effect<
  Service<StrategiesContext<Kits>>,
  ChatError.DuplicateToolName,
  LanguageModel.LanguageModel | HandlersContext<Kits>
> =>
  Effect.gen(function*() {
    type R = StrategiesContext<Kits>
    const model = yield* LanguageModel.LanguageModel
    const context = yield* Effect.context<never>()
    const kits: ReadonlyArray<Toolkit.Any> = options.tools === undefined
      ? []
      : Array.isArray(options.tools)
      ? options.tools
      : [options.tools as Toolkit.Any]
    const entries = new Map<string, Entry>()
    for (const kit of kits) {
      for (const tool of kit.list) {
        if (entries.has(tool.name)) return yield* new ChatError.DuplicateToolName({ name: tool.name })
        const handler = Context.unsafeGet(context as Context.Context<unknown>, Tool.handlerTag(tool.name))
        entries.set(tool.name, { tool, kit, handler })
      }
    }
    const declarations = [...entries.values()].map((entry) => entry.tool.declaration)
    const available = [...entries.keys()].join(", ") || "(none)"
    const defaults = { maxSteps: options.maxSteps ?? Turn.defaultConfig.maxSteps }
    const concurrency = options.concurrency ?? "unbounded"

    const checkEdits = (messages: Messages.Messages): ReadonlyArray<Turn.InvalidEdit> => {
      const invalid: Array<Turn.InvalidEdit> = []
      for (const call of lastCalls(messages)) {
        if (call.status._tag !== "Approved" || call.status.editedArguments === undefined) continue
        const entry = entries.get(call.name)
        const decoded = entry === undefined
          ? Either.left(`no tool named '${call.name}' serves this chat`)
          : decodeArguments(entry.tool, call.status.editedArguments)
        if (Either.isLeft(decoded)) invalid.push({ id: call.id, detail: decoded.left })
      }
      return invalid
    }

    /** Calls left running by a worker that died whose tool is idempotent and may start again. */
    const rerunnable = (messages: Messages.Messages): ReadonlyArray<string> =>
      lastCalls(messages).flatMap((call) => {
        const tool = entries.get(call.name)?.tool
        const attempt = call.status._tag === "Running" ? call.status.attempt ?? 1 : undefined
        return tool?.idempotent === true && attempt !== undefined && attempt < tool.maxAttempts ? [call.id] : []
      })

    const decideOne = (call: ToolCallPart, now: number): Effect.Effect<Turn.Decision, never, R> => {
      const entry = entries.get(call.name)
      if (entry === undefined) {
        return Effect.succeed(Turn.Decision.Invalid({
          message: `There is no tool named '${call.name}'. Available tools: ${available}.`
        }))
      }
      const params = decodeArguments(entry.tool, call.arguments)
      if (Either.isLeft(params)) return Effect.succeed(Turn.Decision.Invalid({ message: params.left }))
      const strategy = entry.kit.strategy as
        | ((call: Toolkit.Call<Record<string, Tool.Any>>, metadata: unknown) => Action.Action | Effect.Effect<Action.Action, never, R>)
        | undefined
      if (strategy === undefined) return Effect.succeed(Turn.Decision.Execute())
      return Effect.suspend(() => {
        const decided = strategy({ id: call.id, name: call.name, params: params.right, arguments: call.arguments }, entry.tool.metadata)
        return Effect.isEffect(decided) ? decided : Effect.succeed(decided)
      }).pipe(
        Effect.exit,
        Effect.flatMap((exit) => {
          if (Exit.isSuccess(exit)) return Effect.succeed(toDecision(exit.value, now))
          // Fail closed: a strategy that breaks never lets a call run without a person.
          return Effect.logWarning(`The strategy of tool '${call.name}' failed; the call now requires approval.`, exit.cause).pipe(
            Effect.as(Turn.Decision.RequireApproval({}))
          )
        })
      )
    }

    const runTurn = (
      input: Messages.Messages,
      turnOptions: TurnOptions,
      mode: {
        readonly stream: boolean
        readonly emit: ((event: ChatEvent) => Effect.Effect<void>) | undefined
        readonly responseFormat?: LanguageModel.ResponseFormat
      }
    ): Effect.Effect<{ messages: Messages.Messages; outcome: Turn.Outcome }, TurnError, R> => {
      const config: Turn.Config = {
        maxSteps: turnOptions.maxSteps ?? defaults.maxSteps,
        waitForScheduled: turnOptions.waitForScheduled ?? false
      }
      const emit = mode.emit ?? (() => Effect.void)
      const checkpoint = turnOptions.checkpoint ?? (() => Effect.void)
      const modelOptions: LanguageModel.Options = {
        ...options.modelOptions,
        ...turnOptions.modelOptions,
        ...(mode.responseFormat === undefined ? {} : { responseFormat: mode.responseFormat })
      }
      // The latest state; read when the turn fails or is interrupted.
      let current: Messages.Messages = input
      let defect: { id: string; name: string; detail: string } | undefined
      // Every tool call id of the conversation, built on the turn's first model call (see `uniqueIds`).
      let takenIds: Set<string> | undefined

      // A checkpoint that failed while tools ran: the turn stops with it once they all finished.
      let checkpointFailure: CheckpointError | undefined

      const apply = (event: Turn.Event): Effect.Effect<Turn.Result, CheckpointError> =>
        Effect.suspend(() => {
          const before = current
          const result = Turn.step(before, event, config)
          current = result[0]
          if (result[0] === before) return Effect.succeed(result)
          const resolved = newlyResolved(before, result[0])
          return Effect.forEach(resolved, (call) => emit(ChatEvent.ToolResult({ call })), { discard: true }).pipe(
            Effect.zipRight(checkpoint(result[0])),
            Effect.as(result)
          )
        })

      const withState = <E extends { readonly _tag: string }>(error: E): E =>
        current === input ? error : ChatError.withMessages(error, current)

      const callModel = (messages: Messages.Messages, step: number): Effect.Effect<Message, ChatError.ModelError> => {
        const request: LanguageModel.Request = {
          messages: options.system === undefined ? messages : [Messages.system(options.system), ...messages],
          tools: declarations,
          options: modelOptions
        }
        const response: Effect.Effect<LanguageModel.Response, ChatError.ModelError> = mode.stream
          ? LanguageModel.collect(
            model.stream(request).pipe(
              Stream.tap((part) =>
                part._tag === "TextDelta"
                  ? emit(ChatEvent.TextDelta({ text: part.text }))
                  : part._tag === "ReasoningDelta" && part.text !== ""
                  ? emit(ChatEvent.ReasoningDelta({ text: part.text }))
                  : Effect.void
              )
            )
          )
          : model.generate(request)
        return Effect.map(response, (r): Message => ({
          role: "assistant",
          // The turn's only new ids are those given out here: collect the conversation's once per turn, not per step.
          parts: uniqueIds(takenIds ??= new Set(Messages.toolCalls(messages).map((call) => call.id)), r.parts),
          usage: r.usage,
          finishReason: r.finishReason,
          ...(r.providerMetadata === undefined ? {} : { providerMetadata: r.providerMetadata })
        })).pipe(
          Effect.tap((message) =>
            Effect.annotateCurrentSpan({
              "gen_ai.usage.input_tokens": message.usage?.inputTokens ?? 0,
              "gen_ai.usage.output_tokens": message.usage?.outputTokens ?? 0,
              "gen_ai.response.finish_reasons": message.finishReason ?? "other"
            })
          ),
          Effect.withSpan("chat-ts.model", {
            attributes: { "gen_ai.operation.name": "chat", "chat_ts.step": step, "chat_ts.stream": mode.stream },
            captureStackTrace: false
          }),
          Effect.tap((message) =>
            Effect.forEach(Messages.toolCallsOf(message), (call) => emit(ChatEvent.ToolCall({ call })), { discard: true }).pipe(
              Effect.zipRight(emit(ChatEvent.StepFinished({
                step,
                usage: message.usage ?? LanguageModel.noUsage,
                finishReason: message.finishReason ?? "other"
              })))
            )
          )
        )
      }

      /** Applies a tool's result; a failing checkpoint is kept for later, so sibling calls are not interrupted. */
      const record = (event: Turn.Event): Effect.Effect<void> =>
        apply(event).pipe(Effect.catchAll((error) => Effect.sync(() => void (checkpointFailure ??= error))))

      const runOne = (call: ToolCallPart): Effect.Effect<void> =>
        Effect.gen(function*() {
          const entry = entries.get(call.name)
          if (entry === undefined) {
            yield* record(Turn.Event.ToolFailed({ id: call.id, error: `There is no tool named '${call.name}'.` }))
            return
          }
          const params = decodeArguments(entry.tool, Messages.effectiveArguments(call))
          if (Either.isLeft(params)) {
            yield* record(Turn.Event.ToolFailed({ id: call.id, error: params.left }))
            return
          }
          const attempt = call.status._tag === "Running" ? call.status.attempt ?? 1 : 1
          const exit = yield* Effect.exit(entry.handler.handle(params.right, { id: call.id, name: call.name, attempt }))
          if (Exit.isSuccess(exit)) {
            const encoded = Schema.encodeUnknownEither(entry.tool.success as Schema.Schema<unknown, unknown>)(exit.value)
            if (Either.isRight(encoded)) {
              yield* record(Turn.Event.ToolSucceeded({ id: call.id, result: encoded.right ?? null }))
            } else {
              defect ??= { id: call.id, name: call.name, detail: `its result does not match its success schema: ${formatParseError(encoded.left)}` }
              yield* record(Turn.Event.ToolFailed({ id: call.id, error: defectError }))
            }
            return
          }
          const failure = Cause.failureOption(exit.cause)
          if (failure._tag === "Some") {
            const encoded = Schema.encodeUnknownEither(entry.tool.failure as Schema.Schema<unknown, unknown>)(failure.value)
            yield* record(Turn.Event.ToolFailed({
              id: call.id,
              error: Either.isRight(encoded) ? encoded.right : String(failure.value)
            }))
            return
          }
          if (Cause.isInterruptedOnly(exit.cause)) {
            yield* record(Turn.Event.ToolFailed({ id: call.id, error: interruptedError }))
            return
          }
          defect ??= { id: call.id, name: call.name, detail: Cause.pretty(exit.cause) }
          yield* record(Turn.Event.ToolFailed({ id: call.id, error: defectError }))
        }).pipe(
          Effect.withSpan("chat-ts.tool", {
            attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id },
            captureStackTrace: false
          })
        )

      // Calls a person rejected during the pause got their answer outside any
      // stream: announce them once, when the turn moves past their response.
      let rejectionsAnnounced = false
      const announceRejections = Effect.suspend(() => {
        rejectionsAnnounced = true
        const rejected = lastCalls(input).filter((call) => call.status._tag === "Rejected" && call.status.by === "user")
        return Effect.forEach(rejected, (call) => emit(ChatEvent.ToolResult({ call })), { discard: true })
      })

      const loop = Effect.gen(function*() {
        let state = yield* apply(
          Turn.Event.Resume({ now: yield* Clock.currentTimeMillis, invalidEdits: checkEdits(input), rerun: rerunnable(input) })
        )
        while (true) {
          const [messages, outcome] = state
          switch (outcome._tag) {
            case "CallModel": {
              if (!rejectionsAnnounced) yield* announceRejections
              const message = yield* callModel(messages, outcome.step)
              state = yield* apply(Turn.Event.ModelResponded({ message }))
              break
            }
            case "Decide": {
              const now = yield* Clock.currentTimeMillis
              const decisions = yield* Effect.forEach(
                outcome.calls,
                (call) => Effect.map(decideOne(call, now), (decision) => ({ id: call.id, decision })),
                // One call needs no child fiber: forking one costs more than the rest of the step.
                outcome.calls.length > 1 ? { concurrency } : undefined
              )
              state = yield* apply(Turn.Event.Decided({ now, decisions }))
              break
            }
            case "RunTools": {
              yield* Effect.forEach(
                outcome.calls,
                runOne,
                outcome.calls.length > 1 ? { concurrency, discard: true } : { discard: true }
              )
              if (checkpointFailure !== undefined) return yield* Effect.fail(checkpointFailure)
              if (defect !== undefined) {
                return yield* new ChatError.ToolHandlerDefect({ ...defect, messages: current })
              }
              state = yield* apply(Turn.Event.Resume({ now: yield* Clock.currentTimeMillis }))
              break
            }
            case "AwaitTools":
              // Only seen while tools run; reaching it here means the messages hold calls nobody runs.
              state = yield* apply(Turn.Event.Resume({ now: yield* Clock.currentTimeMillis }))
              break
            case "Wait": {
              const now = yield* Clock.currentTimeMillis
              const due = PauseReason.toolIds(outcome.reason).filter((id) => {
                const call = Messages.findTool(messages, id)
                return call?.status._tag === "Scheduled" && call.status.at <= outcome.until
              })
              yield* emit(ChatEvent.Waiting({ until: outcome.until, toolIds: due }))
              yield* Effect.sleep(Duration.millis(Math.max(0, outcome.until - now)))
              state = yield* apply(Turn.Event.Resume({ now: yield* Clock.currentTimeMillis }))
              break
            }
            case "Pause":
            case "Complete":
              return { messages, outcome }
            case "StepLimit":
              return yield* new ChatError.StepLimitReached({ maxSteps: outcome.maxSteps, messages })
            case "InvalidEdits": {
              const first = outcome.edits[0]!
              return yield* new ChatError.InvalidEditedArguments({
                id: first.id,
                name: first.name,
                detail: outcome.edits.map((edit) => `${edit.id}: ${edit.detail}`).join("; "),
                messages
              })
            }
            case "PendingCalls":
              return yield* new ChatError.PendingToolCalls({ ids: outcome.ids })
          }
        }
      })

      return loop.pipe(
        // No stack trace per span: capturing one (an Error per span) was a quarter of a step's cost
        // (packages/bench, scenario 1), and the call site it records is always this file.
        Effect.withSpan("chat-ts.turn", {
          attributes: { "chat_ts.messages": input.length, "chat_ts.stream": mode.stream },
          captureStackTrace: false
        }),
        Effect.mapError(withState),
        Effect.onInterrupt(() =>
          Effect.suspend(() => {
            const running = lastCalls(current).filter((call) => call.status._tag === "Running")
            return Effect.forEach(
              running,
              (call) => Effect.ignore(apply(Turn.Event.ToolFailed({ id: call.id, error: interruptedError }))),
              { discard: true }
            )
          })
        )
      )
    }

    const toResult = (run: { messages: Messages.Messages; outcome: Turn.Outcome }): ChatOutcome.Result => {
      const outcome = run.outcome
      if (outcome._tag === "Complete") {
        return {
          messages: run.messages,
          outcome: ChatOutcome.Complete({
            response: outcome.response,
            value: Messages.textOf(outcome.response),
            usage: outcome.usage
          })
        }
      }
      if (outcome._tag === "Pause") {
        return { messages: run.messages, outcome: ChatOutcome.Paused({ reason: outcome.reason, usage: outcome.usage }) }
      }
      throw new Error(`unexpected final outcome ${outcome._tag}`)
    }

    const complete = (messages: Messages.Messages, turnOptions: TurnOptions = {}) =>
      Effect.map(runTurn(messages, turnOptions, { stream: false, emit: undefined }), toResult)

    const service: Service<R> = {
      tools: declarations,
      complete,
      resume: complete,
      // The events go through a bounded mailbox: offering is an ordinary effect (the turn waits
      // only when the consumer lags 64 events behind) and the consumer takes whatever has arrived
      // in one chunk. Stream.asyncScoped ran a fiber and a promise per event: on a 10,000-delta
      // response that cost more than twice the CPU time this does (packages/bench, scenario 3).
      stream: (messages, turnOptions = {}) =>
        Stream.unwrapScoped(Effect.gen(function*() {
          const mailbox = yield* Effect.acquireRelease(
            Mailbox.make<ChatEvent, TurnError>(streamCapacity),
            (mailbox) => mailbox.shutdown
          )
          yield* runTurn(messages, turnOptions, {
            stream: true,
            emit: (event) => Effect.asVoid(mailbox.offer(event))
          }).pipe(
            Effect.flatMap((run) => {
              const result = toResult(run)
              const outcome = result.outcome
              const last = outcome._tag === "Complete"
                ? ChatEvent.Completed({ response: outcome.response, messages: result.messages, usage: outcome.usage })
                : ChatEvent.Paused({ reason: outcome.reason, messages: result.messages, usage: outcome.usage })
              return mailbox.offer(last)
            }),
            Effect.exit,
            Effect.flatMap((exit) => mailbox.done(Exit.asVoid(exit))),
            Effect.forkScoped
          )
          return Mailbox.toStream(mailbox)
        })),
      completeStructured: <A, I>(messages: Messages.Messages, schema: Schema.Schema<A, I>, turnOptions: TurnOptions = {}) =>
        runTurn(messages, turnOptions, { stream: false, emit: undefined, responseFormat: responseFormat(schema) }).pipe(
          Effect.flatMap((run): Effect.Effect<ChatOutcome.Result<A>, ChatError.StructuredOutputError> => {
            const result = toResult(run)
            const outcome = result.outcome
            if (outcome._tag === "Paused") return Effect.succeed({ messages: result.messages, outcome })
            const text = outcome.value
            return Either.flatMap(
              parseJson(text),
              (json) => Either.mapLeft(Schema.decodeUnknownEither(schema)(json), formatParseError)
            ).pipe(
              Either.match({
                onLeft: (detail) => Effect.fail(new ChatError.StructuredOutputError({ detail, text, messages: result.messages })),
                onRight: (value) =>
                  Effect.succeed({
                    messages: result.messages,
                    outcome: ChatOutcome.Complete({ response: outcome.response, value, usage: outcome.usage })
                  })
              })
            )
          })
        )
    }
    return service
  })

const toDecision = (action: Action.Action, now: number): Turn.Decision => {
  switch (action._tag) {
    case "Execute":
      return Turn.Decision.Execute()
    case "RequireApproval":
      return Turn.Decision.RequireApproval({
        expiresAt: action.expiresAt === undefined ? undefined : Action.toMillis(action.expiresAt)
      })
    case "Defer":
      return Turn.Decision.Defer({ at: Action.deferredUntil(action, now) })
    case "Reject":
      return Turn.Decision.Reject({ reason: action.reason })
  }
}

/** A layer providing `Chat` (for toolkits whose strategies need no services). */
export const layer = <const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any> = ReadonlyArray<never>>(
  options: Options<Kits> & ([StrategiesContext<Kits>] extends [never] ? unknown : never)
): Layer.Layer<Chat, ChatError.DuplicateToolName, LanguageModel.LanguageModel | HandlersContext<Kits>> =>
  Layer.effect(Chat, make(options) as Effect.Effect<Service, ChatError.DuplicateToolName, LanguageModel.LanguageModel | HandlersContext<Kits>>)
