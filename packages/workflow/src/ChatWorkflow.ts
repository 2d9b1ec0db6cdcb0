/**
 * Durable turns: a chat turn as an `effect/workflow` workflow.
 *
 * `make` defines the workflow (its tools and settings); `layer` registers it
 * on a `WorkflowEngine` (in memory, or `ClusterWorkflowEngine` on runners
 * sharing a SQL database, as `SocketRunner.layer` builds them: many running
 * turns at once). The turn is still `Turn.step`: the workflow is one more
 * shell around the reducer. Each model call and each tool call is an
 * `Activity` (recorded once: a replay after a crash does not call the model
 * again, and a tool call starts at most once unless its tool is idempotent); a
 * pause waits on one `DurableDeferred` per waiting call and a `DurableClock`
 * for the earliest scheduled call or approval deadline, without holding a
 * fiber or a lease.
 *
 * The client side works from any process with the same engine and turn store:
 * `start` a turn (idempotent on the conversation and turn), list what `pending`
 * calls wait for a decision, `decide` one call, and `read` the messages and
 * outcome. The workflow publishes its messages to the `ConversationStore`
 * under the execution id whenever it pauses or ends: that is what a UI polls.
 *
 * @since 0.1.0
 */
import type { PauseReason, Toolkit } from "@chat-ts/core"
import * as Chat from "@chat-ts/core/Chat"
import * as ChatError from "@chat-ts/core/ChatError"
import * as ConversationStore from "@chat-ts/core/ConversationStore"
import * as DecisionPolicy from "@chat-ts/core/DecisionPolicy"
import * as Messages from "@chat-ts/core/Messages"
import * as Steering from "@chat-ts/core/Steering"
import * as Tool from "@chat-ts/core/Tool"
import * as Turn from "@chat-ts/core/Turn"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import * as Decision from "./Decision.js"
import * as EngineStorage from "./internal/engineStorage.js"
import * as Shell from "./internal/shell.js"
import { NotWaiting, TurnNotFound } from "./WorkflowError.js"

/** Settings of a durable turn. */
export interface Options<Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any>> {
  /** The workflow's name: unique among the workflows of an engine, and stable across deployments. */
  readonly name: string
  /** The toolkits serving the turn (as in `Chat.make`). */
  readonly tools?: Kits
  /** The most model calls one turn may make (default 10). */
  readonly maxSteps?: number
  /** A system prompt sent before the conversation on every model call. */
  readonly system?: string
  /** Options of every model call. */
  readonly modelOptions?: Chat.Options<Kits>["modelOptions"]
  /** How many tool calls may run at once (default: all of a response). */
  readonly concurrency?: number | "unbounded"
}

/** The payload of the workflow: a conversation, which turn of it, and its messages at the start of the turn. */
export const Payload = {
  conversationId: Schema.String,
  /** Which turn of the conversation (by default the number of messages it starts from). */
  turn: Schema.Number,
  messages: Messages.Messages
}

/** How a completed turn ends: the final messages and the model's answer. */
export const Completed = Shell.Completed

/** What a completed turn returns. */
export type Completed = typeof Completed.Type

/** The errors a durable turn may end with (those of `Chat`). */
export const TurnFailure = Shell.TurnFailure

/** The errors a durable turn may end with. */
export type TurnFailure = typeof TurnFailure.Type

/** A call waiting for a person's decision (or for its time), as `pending` lists it. */
export interface PendingCall {
  readonly id: string
  readonly name: string
  /** The arguments the model proposed (JSON text). */
  readonly arguments: string
  readonly status: Messages.ToolCallStatus
}

/** Where a durable turn stands, as `read` reports it. */
export type Status =
  | { readonly _tag: "Running" }
  | { readonly _tag: "Waiting"; readonly reason: PauseReason.PauseReason }
  | { readonly _tag: "Complete"; readonly response: Messages.Message }
  | { readonly _tag: "Failed"; readonly error: TurnFailure | undefined; readonly detail: string }

/** A durable turn's published state. */
export interface View {
  readonly executionId: string
  readonly messages: Messages.Messages
  /** The version of the published state (grows on each publish or decision). */
  readonly version: number
  readonly status: Status
}

/** Options of `start`. */
export interface StartOptions {
  /** Which turn of the conversation this is (default: the number of messages). Same conversation and turn: same execution. */
  readonly turn?: number
}

/** The errors of `decide`. */
export type DecideError =
  | ChatError.ResolveError
  | TurnNotFound
  | ChatError.StoreError
  | ChatError.CorruptConversation
  | ChatError.StateEncodeError
  | ChatError.ConversationBusy
  | ChatError.ConcurrentModification

/** The errors of `steer`. */
export type SteerError =
  | ChatError.InvalidSteeringMessage
  | ChatError.PendingToolCalls
  | ChatError.DecisionNotAllowed
  | NotWaiting
  | TurnNotFound
  | ChatError.StoreError
  | ChatError.CorruptConversation
  | ChatError.StateEncodeError
  | ChatError.ConversationBusy
  | ChatError.ConcurrentModification

/** The services the client side uses. */
export type ClientContext = WorkflowEngine | ConversationStore.ConversationStore

type KitsOf<K> = K extends ReadonlyArray<infer T> ? T : K

/** A durable turn definition: the workflow and its client side. */
export interface ChatWorkflow<Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any>> {
  readonly options: Options<Kits>
  /** The underlying workflow (for `WorkflowProxy`, annotations, or `Workflow.poll`). */
  readonly workflow: Workflow.Workflow<string, Schema.Struct<typeof Payload>, typeof Completed, typeof TurnFailure>
  /**
   * Starts the turn of `conversationId` from `messages` and returns its execution id; the same turn twice is
   * one execution. When the engine cannot store the start (a runner cut off from its database), it fails with
   * a `StoreError` whose `retryable` is true: starting again, through this runner or another, is safe (the same
   * turn, the same execution id, one execution).
   */
  readonly start: (
    conversationId: string,
    messages: Messages.Messages,
    options?: StartOptions
  ) => Effect.Effect<string, ChatError.StoreError, WorkflowEngine>
  /** The execution id of a turn, without starting it. */
  readonly executionId: (conversationId: string, messages: Messages.Messages, options?: StartOptions) => Effect.Effect<string>
  /** The calls of a turn that wait for a decision (approval or a scheduled time), from its published state. */
  readonly pending: (
    executionId: string
  ) => Effect.Effect<ReadonlyArray<PendingCall>, TurnNotFound | ChatError.StoreError | ChatError.CorruptConversation, ClientContext>
  /**
   * Decides one waiting call of a turn, from any process: checked against the published state
   * (an unknown call, a call already decided, edited arguments that do not fit the tool are typed
   * errors and nothing is sent), recorded write-once (a different decision already recorded is
   * `ToolCallAlreadyResolved`; the same one again is a retry, sent again), shown in the published
   * state, then sent to the workflow.
   */
  readonly decide: (
    executionId: string,
    callId: string,
    decision: Decision.PersonDecision
  ) => Effect.Effect<void, DecideError, ClientContext>
  /**
   * Sends a user message to a turn waiting for decisions (see `Steering`): with `rule: "cancel"`
   * (the default) its undecided calls are cancelled and the decided ones still run; with `"queue"`
   * it waits for them; either way the model answers the message once the pause is resolved,
   * inside this execution. Checked against the published state (a message that cannot steer, a turn
   * with no call waiting: typed errors, nothing sent) and recorded write-once per pause position: a
   * second message before the turn took the first is `ConcurrentModification` (send it again once
   * `read` shows the first held), the same message again is a retry.
   */
  readonly steer: (
    executionId: string,
    message: Messages.Message,
    options?: { readonly rule?: Steering.Rule; readonly reason?: string }
  ) => Effect.Effect<void, SteerError, ClientContext>
  /** The turn's published messages and where it stands. */
  readonly read: (
    executionId: string
  ) => Effect.Effect<View, TurnNotFound | ChatError.StoreError | ChatError.CorruptConversation, ClientContext>
  /** The turns with calls still pending (waiting for decisions, times, or running), one page at a time. */
  readonly list: (
    options?: ConversationStore.ListOptions
  ) => Effect.Effect<ConversationStore.PendingPage, ChatError.StoreError | ChatError.CorruptConversation, ConversationStore.ConversationStore>
  /** The toolkits' type, for `layer`. */
  readonly "~kits"?: KitsOf<Kits>
}

const kitsOf = (tools: Toolkit.Any | ReadonlyArray<Toolkit.Any> | undefined): ReadonlyArray<Toolkit.Any> =>
  tools === undefined ? [] : Array.isArray(tools) ? tools : [tools as Toolkit.Any]

/**
 * Why edited arguments (a JSON value) do not fit a tool's parameters, if they do not: as core's
 * `chat.approve`, a key the parameters do not declare is refused (unless the Schema takes extra keys).
 */
const editProblem = (tool: Tool.Any | undefined, name: string, edited: unknown): string | undefined => {
  if (tool === undefined) return `no tool named '${name}' serves this turn`
  const decode = Schema.decodeUnknownResult(tool.parameters as Schema.Codec<unknown, unknown>, { onExcessProperty: "error" })
  return Result.getFailure(decode(Tool.fromWire(tool, edited))).pipe(
    Option.map((error) => `The arguments do not match the parameters of tool '${name}': ${error.message}`),
    Option.getOrUndefined
  )
}

/** The messages with a decision applied to call `callId` (or why it does not apply), checked against its policy. */
const applyTo = Shell.applyTo

/** The status a decision leaves a call in, to tell a repeated decision from a different one. */
const sameDecision = (call: Messages.ToolCallPart, decision: Decision.PersonDecision): boolean => {
  const status = call.status
  if (decision._tag === "Cancel") {
    return status._tag === "Cancelled" && status.by === (decision.by ?? "requester") && status.reason === decision.reason &&
      status.cancellation?.by === decision.decider?.id
  }
  const decidedBy = "decision" in status ? status.decision?.by : undefined
  if (decidedBy !== decision.decider?.id) return false
  if (decision._tag === "Reject") return status._tag === "Rejected" && status.by === "user" && status.reason === decision.reason
  if (status._tag !== "Approved") return false
  return status.editedArguments === (decision.edited === undefined ? undefined : JSON.stringify(decision.edited))
}

/** The round of a decision already applied: the quorum's vote count before it (0 without a quorum). */
const appliedRound = (call: Messages.ToolCallPart): number => {
  const status = call.status
  const votes = "decision" in status ? status.decision?.votes : undefined
  return votes === undefined ? 0 : votes.length - 1
}

/** Defines a durable turn workflow. Register it with `layer`; use its client side from any process. */
export const make = <const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any> = ReadonlyArray<never>>(
  options: Options<Kits>
): ChatWorkflow<Kits> => {
  const tools = new Map<string, Tool.Any>()
  for (const kit of kitsOf(options.tools)) for (const tool of kit.list) tools.set(tool.name, tool)
  const workflow = Workflow.make(options.name, {
    payload: Payload,
    success: Completed,
    error: TurnFailure,
    idempotencyKey: (payload) => `${payload.conversationId}\u0000${payload.turn}`
  })
  const payloadOf = (conversationId: string, messages: Messages.Messages, start?: StartOptions) => ({
    conversationId,
    turn: start?.turn ?? messages.length,
    messages
  })
  const load = (executionId: string) =>
    Effect.flatMap(
      ConversationStore.ConversationStore,
      (store) =>
        Effect.flatMap(store.load(executionId), (stored) =>
          Option.match(stored, {
            onNone: () => Effect.fail(new TurnNotFound({ executionId })),
            onSome: Effect.succeed
          }))
    )
  const send = (executionId: string, callId: string, decision: Decision.PersonDecision, round: number) => {
    const deferred = Shell.decisionDeferred(callId, round)
    return DurableDeferred.done(deferred, {
      token: DurableDeferred.tokenFromExecutionId(deferred, { workflow, executionId }),
      exit: Exit.succeed(decision)
    })
  }
  /** Sends a decision again (a retry) and wakes the workflow, in case the first send reached it as it went to sleep. */
  const resend = (executionId: string, callId: string, decision: Decision.PersonDecision, round: number) =>
    Effect.andThen(send(executionId, callId, decision, round), workflow.resume(executionId))
  /** The text of the decision recorded for a call (in a quorum's round), if one is. */
  const recorded = (executionId: string, callId: string, round: number) =>
    Effect.flatMap(ConversationStore.ConversationStore, (store) =>
      Effect.map(store.load(Shell.decisionRecordId(executionId, callId, round)), (first) =>
        Option.match(first, {
          onNone: () => undefined,
          onSome: (stored) => stored.messages.length === 1 ? Messages.textOf(stored.messages[0]!) : ""
        })))
  /**
   * Records the decision about a call (in its quorum's round), once: the first decision wins; the same one
   * again (a retry) is accepted. Another person's vote that took this round first: `ConcurrentModification`
   * (read the turn again and vote in the next round).
   */
  const record = (executionId: string, callId: string, decision: Decision.PersonDecision, round: number, quorum: boolean) =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const id = Shell.decisionRecordId(executionId, callId, round)
      const text = Shell.decisionText(decision)
      const saved = yield* Effect.result(store.save(id, Messages.fromUser(text), { expectedVersion: 0 }))
      if (Result.isSuccess(saved)) return true
      if (saved.failure._tag !== "ConcurrentModification") return yield* Effect.fail(saved.failure)
      if ((yield* recorded(executionId, callId, round)) === text) return false
      if (quorum && decision._tag === "Approve") return yield* new ChatError.ConcurrentModification({ id, expectedVersion: 0 })
      return yield* new ChatError.ToolCallAlreadyResolved({ id: callId, status: "decided" })
    })
  /** Shows the decision in the published messages (for a UI), unless the workflow published it, or a later state, first. */
  const show = (executionId: string, callId: string, decision: Decision.PersonDecision) =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      for (let attempt = 1; attempt <= 5; attempt++) {
        const stored = yield* load(executionId)
        const applied = applyTo(stored.messages, callId, decision)
        if (Result.isFailure(applied)) return
        const saved = yield* Effect.result(store.save(executionId, applied.success, { expectedVersion: stored.version }))
        if (Result.isSuccess(saved)) return
        if (saved.failure._tag !== "ConcurrentModification") return yield* Effect.fail(saved.failure)
      }
    })
  const decide = (
    executionId: string,
    callId: string,
    given: Decision.PersonDecision
  ): Effect.Effect<void, DecideError, ClientContext> =>
    Effect.gen(function*() {
      const stored = yield* load(executionId)
      // A decider's decision carries its time, so that the workflow records the very same one.
      const decision = given.decider === undefined || given.at !== undefined
        ? given
        : { ...given, at: yield* Effect.clockWith((clock) => clock.currentTimeMillis) }
      const applied = applyTo(stored.messages, callId, decision)
      const found = Messages.findTool(stored.messages, callId)
      if (Result.isFailure(applied)) {
        const call = found
        // The same decision again (a retry after a crash between recording and sending): send it again.
        if (applied.failure._tag === "ToolCallAlreadyResolved" && call !== undefined && sameDecision(call, decision)) {
          const round = appliedRound(call)
          const first = yield* recorded(executionId, callId, round)
          if (first !== undefined && first !== Shell.decisionText(decision)) return yield* Effect.fail(applied.failure)
          return yield* resend(executionId, callId, decision, round)
        }
        // A quorum's vote again (a retry): send it again in the round it was recorded in.
        if (applied.failure._tag === "DuplicateVote" && call !== undefined) {
          const round = DecisionPolicy.progress(call).votes.findIndex((vote) => vote.by === decision.decider?.id)
          if (round >= 0 && (yield* recorded(executionId, callId, round)) === Shell.decisionText(decision)) {
            return yield* resend(executionId, callId, decision, round)
          }
        }
        return yield* Effect.fail(applied.failure)
      }
      if (decision._tag === "Approve" && decision.edited !== undefined) {
        const call = Messages.findTool(stored.messages, callId)!
        const detail = editProblem(tools.get(call.name), call.name, decision.edited)
        if (detail !== undefined) {
          return yield* new ChatError.InvalidEditedArguments({ id: callId, name: call.name, detail, messages: stored.messages })
        }
      }
      // The write-once record decides between two decisions, whatever the published messages say meanwhile.
      const round = Shell.roundOf(found!)
      const quorum = (DecisionPolicy.of(found!)?.quorum ?? 1) > 1
      if (yield* record(executionId, callId, decision, round, quorum)) {
        yield* show(executionId, callId, decision)
        return yield* send(executionId, callId, decision, round)
      }
      return yield* resend(executionId, callId, decision, round)
    })
  const steer: ChatWorkflow<Kits>["steer"] = (executionId, message, steerOptions = {}) =>
    Effect.gen(function*() {
      const stored = yield* load(executionId)
      if (Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision).length === 0) {
        return yield* new NotWaiting({ executionId })
      }
      // Checked as the workflow will apply it: nothing is sent for a message that cannot steer.
      yield* Effect.fromResult(Steering.steer(stored.messages, message, steerOptions))
      const payload: Shell.Steer = {
        parts: message.parts as Shell.Steer["parts"],
        ...(message.sender === undefined ? {} : { sender: message.sender }),
        rule: steerOptions.rule ?? "cancel",
        ...(steerOptions.reason === undefined ? {} : { reason: steerOptions.reason })
      }
      const slot = Shell.steerSlot(stored.messages)
      const store = yield* ConversationStore.ConversationStore
      const text = JSON.stringify(payload)
      const saved = yield* Effect.result(store.save(Shell.steerRecordId(executionId, slot), Messages.fromUser(text), { expectedVersion: 0 }))
      if (Result.isFailure(saved)) {
        if (saved.failure._tag !== "ConcurrentModification") return yield* Effect.fail(saved.failure)
        const first = Option.getOrUndefined(yield* store.load(Shell.steerRecordId(executionId, slot)))
        // Another message took this place first: this one is refused (nothing sent), unless it is the same one again.
        if (first === undefined || first.messages.length !== 1 || Messages.textOf(first.messages[0]!) !== text) {
          return yield* Effect.fail(saved.failure)
        }
      }
      const deferred = Shell.steerDeferred(slot)
      yield* DurableDeferred.done(deferred, {
        token: DurableDeferred.tokenFromExecutionId(deferred, { workflow, executionId }),
        exit: Exit.succeed(payload)
      })
      if (Result.isFailure(saved)) yield* workflow.resume(executionId)
    })
  const statusOf = (executionId: string, messages: Messages.Messages) =>
    Effect.map(workflow.poll(executionId), (polled): Status => {
      const result = Option.getOrUndefined(polled)
      if (result !== undefined && result._tag === "Complete") {
        const exit = result.exit
        if (Exit.isSuccess(exit)) return { _tag: "Complete", response: exit.value.response }
        const failure = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
        return { _tag: "Failed", error: failure, detail: failure?.message ?? Cause.pretty(exit.cause) }
      }
      const waiting = Messages.pendingTools(messages).filter(Messages.isAwaitingDecision)
      if (waiting.length === 0) return { _tag: "Running" }
      return {
        _tag: "Waiting",
        reason: Turn.pauseReason(
          waiting.filter((call) => call.status._tag === "AwaitingApproval").map((call) => call.id),
          waiting.flatMap((call) => (call.status._tag === "Scheduled" ? [{ id: call.id, at: call.status.at }] : []))
        )
      }
    })
  return {
    options,
    workflow,
    start: (conversationId, messages, start) =>
      workflow.execute(payloadOf(conversationId, messages, start), { discard: true }).pipe(EngineStorage.typed("store the start of a turn")),
    executionId: (conversationId, messages, start) => workflow.executionId(payloadOf(conversationId, messages, start)),
    pending: (executionId) =>
      Effect.map(load(executionId), (stored) =>
        Messages.pendingTools(stored.messages).filter(Messages.isAwaitingDecision).map((call) => ({
          id: call.id,
          name: call.name,
          arguments: call.arguments,
          status: call.status
        }))),
    decide,
    steer,
    read: (executionId) =>
      Effect.flatMap(load(executionId), (stored) =>
        Effect.map(statusOf(executionId, stored.messages), (status) => ({
          executionId,
          messages: stored.messages,
          version: stored.version,
          status
        }))),
    list: (list) => Effect.flatMap(ConversationStore.ConversationStore, (store) => store.listPending(list))
  }
}

/**
 * Registers the workflow on the engine: builds the chat once (its model, handlers, strategies)
 * and runs each turn's body with it. Needs the `LanguageModel`, the tools' handlers, the
 * strategies' services, the `ConversationStore` the turns publish to, and a `WorkflowEngine`.
 */
export const layer = <const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any>>(
  self: ChatWorkflow<Kits>
): Layer.Layer<
  never,
  Chat.MakeError,
  | WorkflowEngine
  | ConversationStore.ConversationStore
  | Chat.StrategiesContext<Kits>
  | Effect.Services<ReturnType<typeof Chat.make<Kits>>>
> =>
  Layer.unwrap(Effect.map(
    Chat.make<Kits>({
      ...(self.options.tools === undefined ? {} : { tools: self.options.tools }),
      ...(self.options.maxSteps === undefined ? {} : { maxSteps: self.options.maxSteps }),
      ...(self.options.system === undefined ? {} : { system: self.options.system }),
      ...(self.options.modelOptions === undefined ? {} : { modelOptions: self.options.modelOptions }),
      ...(self.options.concurrency === undefined ? {} : { concurrency: self.options.concurrency })
    } as Chat.Options<Kits>),
    (chat) =>
      self.workflow.toLayer((payload, executionId) =>
        Shell.run(chat.steps, {
          maxSteps: self.options.maxSteps ?? Turn.defaultConfig.maxSteps,
          concurrency: self.options.concurrency ?? "unbounded"
        }, payload.messages, executionId)
      )
  ))
