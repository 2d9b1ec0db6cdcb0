/**
 * The workflow shell: interprets the outcomes of `Turn.step` with durable
 * primitives. Every piece of work comes from `Shell.Steps` (the same model call,
 * strategies and handlers as `Chat`), recorded once as an `Activity`; a pause
 * waits on one `DurableDeferred` per call and a `DurableClock` for the earliest
 * time, raced durably. Everything the turn decides comes from the reducer.
 *
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as ConversationStore from "@chat-ts/core/ConversationStore"
import * as DecisionPolicy from "@chat-ts/core/DecisionPolicy"
import * as Messages from "@chat-ts/core/Messages"
import * as Shell from "@chat-ts/core/Shell"
import * as Steering from "@chat-ts/core/Steering"
import * as Turn from "@chat-ts/core/Turn"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as DurableClock from "effect/workflow/DurableClock"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import * as Decision from "../Decision.js"

/**
 * The deferred a person's decision about call `id` completes; under a quorum, `round` counts the
 * yeses already recorded on the call (each vote completes the deferred of its own round).
 */
export const decisionDeferred = (id: string, round = 0) =>
  DurableDeferred.make(round === 0 ? `decision/${id}` : `decision/${id}/${round}`, { success: Decision.PersonDecision })

/** Where a call's start is claimed (at most once per attempt), in the turn store. */
export const claimId = (executionId: string, callId: string, attempt: number): string =>
  `${executionId}/claim/${callId}/${attempt}`

/** Where a person's decision about call `callId` is recorded, write-once (the first decision wins), in the turn store. */
export const decisionRecordId = (executionId: string, callId: string, round = 0): string =>
  round === 0 ? `${executionId}/decision/${callId}` : `${executionId}/decision/${callId}/${round}`

/** A decision as the text of its record: the same decision (by the same decider, whenever) gives the same text. */
export const decisionText = (decision: Decision.PersonDecision): string =>
  decision._tag === "Cancel"
    ? JSON.stringify([decision._tag, decision.reason ?? null, decision.by ?? "requester"])
    : JSON.stringify([
      decision._tag,
      decision._tag === "Approve" ? decision.edited ?? null : decision.reason ?? null,
      ...(decision.decider === undefined ? [] : [decision.decider.id])
    ])

/** How many yeses a waiting call has towards its quorum: the round its next decision belongs to. */
export const roundOf = (call: Messages.ToolCallPart): number => DecisionPolicy.progress(call).votes.length

/** A person's decision applied with `Messages` (no check of edits), checked against the call's policy. */
export const applyTo = (messages: Messages.Messages, id: string, decision: Decision.PersonDecision) => {
  const by = Decision.decideOptions(decision)
  if (decision._tag === "Cancel") {
    return Messages.cancel(messages, id, {
      by: decision.by ?? "requester",
      ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      // Roles kept: under a decision policy they may be what lets this person withdraw it (its `reject` rule).
      ...(by === undefined
        ? {}
        : { cancellation: { by: by.decider.id, at: by.at, ...(by.decider.roles === undefined ? {} : { roles: by.decider.roles }) } })
    })
  }
  return decision._tag === "Approve"
    ? Messages.approve(messages, id, decision.edited, by)
    : Messages.reject(messages, id, decision.reason, by)
}

/** A user message sent to a waiting turn (see `Steering`), and the rule it follows. */
export const Steer = Schema.Struct({
  parts: Messages.QueuedMessage.fields.parts,
  /** Who sent it (four-eyes compares with it), as `Steering.steer` keeps it. */
  sender: Messages.QueuedMessage.fields.sender,
  rule: Schema.Literals(["cancel", "queue"]),
  reason: Schema.optional(Schema.String)
})
export type Steer = typeof Steer.Type

/**
 * Where the next user message of a pause goes: the paused response's index in the messages and how
 * many messages it already holds back. The same for the workflow and a client reading its published
 * state, and different for every message of every pause of the turn.
 */
export const steerSlot = (messages: Messages.Messages): string => `${messages.length - 1}/${queuedCount(messages)}`

/** The deferred the user message sent at `slot` completes. */
export const steerDeferred = (slot: string) => DurableDeferred.make(`steer/${slot}`, { success: Steer })

/** Where the user message sent at `slot` is recorded, write-once, in the turn store. */
export const steerRecordId = (executionId: string, slot: string): string => `${executionId}/steer/${slot}`

/** How many messages the last response of `messages` holds back. */
export const queuedCount = (messages: Messages.Messages): number => {
  const last = messages[messages.length - 1]
  return last !== undefined && last.role === "assistant" ? last.queued?.length ?? 0 : 0
}

/** What the turn returns when it completes. */
export const Completed = Schema.Struct({ messages: Messages.Messages, response: Messages.Message })

/** The errors a durable turn ends with (the same as `Chat`'s). */
export const TurnFailure = Schema.Union([
  ChatError.StepLimitReached,
  ChatError.ToolHandlerDefect,
  ChatError.InvalidEditedArguments,
  ChatError.PendingToolCalls,
  ChatError.InputRestartLimitReached,
  ChatError.ModelError
])

/**
 * The strategies' decisions, as recorded: each one the reducer would take it for (see
 * `Turn.validDecision`), so written with `Turn.DecisionSchema`'s shape. Read leniently: a journal of an
 * earlier version may hold a decision that schema refuses (a policy nobody could meet), and a replay
 * must take it as that version did, which `Turn.validDecision` does when it is read.
 */
export const Decided = Schema.Struct({
  now: Schema.Number,
  decisions: Schema.Array(Schema.Struct({ id: Schema.String, decision: Schema.Union([Turn.DecisionSchema, Schema.Unknown]) }))
})

/** A call's result as recorded: its event, or `Lost` when an earlier run of it started and never recorded one. */
const ToolResult = Schema.Union([
  Schema.TaggedStruct("ToolSucceeded", {
    id: Schema.String,
    result: Schema.Unknown,
    /** The files the result shows the model as files (images…), when it has any. */
    files: Schema.optional(Schema.Array(Messages.FilePart)),
    defect: Schema.optional(Schema.String)
  }),
  Schema.TaggedStruct("ToolFailed", {
    id: Schema.String,
    error: Schema.Unknown,
    /** The files the failure shows the model as files (images…), when it has any. */
    files: Schema.optional(Schema.Array(Messages.FilePart)),
    defect: Schema.optional(Schema.String)
  }),
  Schema.TaggedStruct("Lost", { id: Schema.String })
])

/** Why a pause ended: a decision about a call, or the earliest time came. */
const Wake = Schema.Union([
  Schema.TaggedStruct("Decided", { id: Schema.String, decision: Decision.PersonDecision }),
  Schema.TaggedStruct("Steered", { steer: Steer }),
  Schema.TaggedStruct("Due", {})
])

/** Store writes from activities are retried a few times: a database hiccup should not end a turn. */
const storeRetry = Schedule.max([Schedule.exponential("100 millis"), Schedule.recurs(5)])

/** The settings of the shell. */
export interface Config {
  readonly maxSteps: number
  /** How many tool calls of a response run at once. */
  readonly concurrency: number | "unbounded"
}

/** Applies a person's decision to the messages, failing closed: an edit that does not fit its tool rejects the call. */
export const applyDecision = (
  steps: Pick<Shell.Steps<never>, "checkEdits">,
  messages: Messages.Messages,
  id: string,
  decision: Decision.PersonDecision
): Messages.Messages => {
  const applied = applyTo(messages, id, decision)
  const by = Decision.decideOptions(decision)
  // A decision for a call that no longer waits (expired, or decided), or one its policy refuses, changes nothing.
  if (Result.isFailure(applied)) {
    if (applied.failure._tag !== "InvalidEditedArguments") return messages
    return Result.getOrElse(
      Messages.reject(messages, id, `The edited arguments were refused: ${applied.failure.detail}`, by),
      () => messages
    )
  }
  const problem = steps.checkEdits(applied.success).find((edit) => edit.id === id)
  if (problem === undefined) return applied.success
  return Result.getOrElse(Messages.reject(messages, id, `The edited arguments were refused: ${problem.detail}`, by), () => messages)
}

/** The earliest time a waiting turn must look again: a scheduled call due, or an approval deadline. */
const wakeAt = (calls: ReadonlyArray<Messages.ToolCallPart>): number | undefined => {
  let earliest: number | undefined
  for (const call of calls) {
    const status = call.status
    const at = status._tag === "Scheduled" ? status.at : status._tag === "AwaitingApproval" ? status.expiresAt : undefined
    if (at !== undefined && Number.isFinite(at) && (earliest === undefined || at < earliest)) earliest = at
  }
  return earliest
}

/** The body of the durable turn workflow. */
export const run = <R>(
  steps: Shell.Steps<R>,
  config: Config,
  messages: Messages.Messages,
  executionId: string
): Effect.Effect<
  typeof Completed.Type,
  typeof TurnFailure.Type,
  R | ConversationStore.ConversationStore | WorkflowEngine | WorkflowInstance
> =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const turnConfig: Turn.Config = { maxSteps: config.maxSteps, waitForScheduled: true }
    // Every name below is deterministic: a replay follows the same path and meets the same records.
    let seq = 0
    let lastNow = 0
    const now = Effect.suspend(() =>
      Activity.make({ name: `now/${++seq}`, success: Schema.Number, execute: Clock.currentTimeMillis })
    ).pipe(Effect.map((t) => {
      lastNow = t
      return t
    }))
    const publish = (state: Messages.Messages) =>
      Effect.suspend(() =>
        Activity.make({
          name: `publish/${++seq}`,
          execute: store.save(executionId, state).pipe(Effect.retry(storeRetry), Effect.orDie, Effect.asVoid)
        })
      )
    const step = (state: Messages.Messages, event: Turn.Event) => Turn.step(state, event, turnConfig)
    // The claim and decision records of this turn (a replay meets the same ones), removed when it ends.
    const records = new Set<string>()
    /** Publishes the final messages, then removes the turn's records: no call of an ended turn starts or waits again. */
    const finish = (state: Messages.Messages) =>
      Effect.andThen(
        publish(state),
        Effect.suspend(() =>
          Activity.make({
            name: `cleanup/${++seq}`,
            execute: Effect.forEach(records, (id) => store.remove(id), { discard: true }).pipe(
              Effect.retry(storeRetry),
              Effect.orDie
            )
          })
        )
      )

    const runTool = (state: Messages.Messages, call: Messages.ToolCallPart) => {
      const attempt = call.status._tag === "Running" ? call.status.attempt ?? 1 : 1
      records.add(claimId(executionId, call.id, attempt))
      return Activity.make({
        name: `tool/${call.id}/${attempt}`,
        success: ToolResult,
        // The claim makes a start at most once: a runner that died after it leaves the call `Lost`.
        execute: store.save(claimId(executionId, call.id, attempt), [], { expectedVersion: 0 }).pipe(
          Effect.retry({ schedule: storeRetry, while: (error) => error._tag === "StoreError" }),
          Effect.matchEffect({
            onFailure: (error) =>
              error._tag === "ConcurrentModification" ? Effect.succeed({ _tag: "Lost" as const, id: call.id }) : Effect.die(error),
            onSuccess: () =>
              Effect.map(steps.runTool(state, call), ({ defect, event }) =>
                event._tag === "ToolSucceeded"
                  ? {
                    _tag: "ToolSucceeded" as const,
                    id: call.id,
                    result: event.result,
                    ...(event.files === undefined || event.files.length === 0 ? {} : { files: event.files }),
                    defect
                  }
                  : event._tag === "ToolFailed"
                  ? {
                    _tag: "ToolFailed" as const,
                    id: call.id,
                    error: event.error,
                    ...(event.files === undefined || event.files.length === 0 ? {} : { files: event.files }),
                    defect
                  }
                  : { _tag: "ToolFailed" as const, id: call.id, error: null, defect })
          })
        )
      })
    }

    /** Waits durably for a decision about any waiting call, or for the earliest time; returns the messages to resume. */
    const wait = (state: Messages.Messages) =>
      Effect.gen(function*() {
        const waiting = Messages.lastCalls(state).filter(Messages.isAwaitingDecision)
        for (const call of waiting) records.add(decisionRecordId(executionId, call.id, roundOf(call)))
        const until = wakeAt(waiting)
        const name = `wake/${++seq}`
        const decisions = waiting.map((call) =>
          Effect.map(DurableDeferred.await(decisionDeferred(call.id, roundOf(call))), (decision) => ({
            _tag: "Decided" as const,
            id: call.id,
            decision
          }))
        )
        const due = until === undefined
          ? []
          : [Effect.as(
            DurableClock.sleep({ name, duration: Math.max(0, until - lastNow), inMemoryThreshold: 0 }),
            { _tag: "Due" as const }
          )]
        // A user message during the pause (see `Steering`): the next one this pause can hold.
        const slot = steerSlot(state)
        records.add(steerRecordId(executionId, slot))
        const steered = Effect.map(DurableDeferred.await(steerDeferred(slot)), (steer) => ({ _tag: "Steered" as const, steer }))
        const effects = [...decisions, ...(waiting.length === 0 ? [] : [steered]), ...due]
        if (effects.length === 0) return state
        const wake = yield* DurableDeferred.raceAll({
          name,
          success: Wake,
          error: Schema.Never,
          effects: effects as [(typeof effects)[number], ...Array<(typeof effects)[number]>]
        })
        if (wake._tag === "Steered") {
          const message: Messages.Message = {
            role: "user",
            parts: wake.steer.parts,
            ...(wake.steer.sender === undefined ? {} : { sender: wake.steer.sender })
          }
          const options = { rule: wake.steer.rule, ...(wake.steer.reason === undefined ? {} : { reason: wake.steer.reason }) }
          return Result.getOrElse(Steering.steer(state, message, options), () => state)
        }
        return wake._tag === "Decided" ? applyDecision(steps, state, wake.id, wake.decision) : state
      })

    const firstTurn = Messages.turnStart(messages)
    let result = step(messages, Shell.start(steps, messages, yield* now))
    while (true) {
      const [state, outcome] = result
      switch (outcome._tag) {
        case "CallModel": {
          const message = yield* Activity.make({
            // A message held during a pause starts a turn of its own inside this execution: its model calls get names of their own.
            name: Messages.turnStart(state) === firstTurn ? `model/${outcome.step}` : `model/${Messages.turnStart(state)}/${outcome.step}`,
            success: Messages.Message,
            error: ChatError.ModelError,
            execute: steps.callModel(state, outcome.step)
          }).pipe(Effect.tapError(() => finish(state)), Effect.mapError((error) => ChatError.withMessages(error, state)))
          result = step(state, Turn.Event.ModelResponded({ message }))
          break
        }
        case "Decide": {
          const decided = yield* Activity.make({
            name: `decide/${++seq}`,
            success: Decided,
            execute: Effect.flatMap(Clock.currentTimeMillis, (at) =>
              Effect.map(steps.decide(outcome.calls, at, state), (decisions) => ({
                now: at,
                // A decision the reducer fails closed on is recorded as the valid one it takes it for.
                decisions: decisions.map(({ decision, id }) => ({ id, decision: Turn.validDecision(decision) }))
              })))
          })
          lastNow = decided.now
          result = step(state, Turn.Event.Decided({
            now: decided.now,
            decisions: decided.decisions.map(({ decision, id }) => ({ id, decision: Turn.validDecision(decision) }))
          }))
          break
        }
        case "RunTools": {
          const results = yield* Effect.forEach(outcome.calls, (call) => runTool(state, call), { concurrency: config.concurrency })
          let next = state
          const lost: Array<string> = []
          let defect: Shell.Defect | undefined
          for (const r of results) {
            if (r._tag === "Lost") {
              lost.push(r.id)
              continue
            }
            if (r.defect !== undefined && defect === undefined) {
              defect = { id: r.id, name: Messages.findTool(next, r.id)?.name ?? "", detail: r.defect }
            }
            next = step(
              next,
              r._tag === "ToolSucceeded"
                ? Turn.Event.ToolSucceeded({ id: r.id, result: r.result, files: r.files })
                : Turn.Event.ToolFailed({ id: r.id, error: r.error, files: r.files })
            )[0]
          }
          if (defect !== undefined) {
            yield* finish(next)
            return yield* Shell.defectFailure(defect, next)
          }
          // Lost calls are failed by the reducer, or started again as their next attempt when their tool is idempotent.
          const rerun = steps.rerunnable(next).filter((id) => lost.includes(id))
          result = step(next, Turn.Event.Resume({ now: yield* now, rerun }))
          break
        }
        case "AwaitTools":
          result = step(state, Turn.Event.Resume({ now: yield* now }))
          break
        case "Wait":
        case "Pause": {
          yield* publish(state)
          const decided = yield* wait(state)
          result = step(decided, Turn.Event.Resume({ now: yield* now, invalidEdits: steps.checkEdits(decided) }))
          break
        }
        case "Complete":
          yield* finish(state)
          return { messages: state, response: outcome.response }
        case "StepLimit":
        case "InvalidEdits":
        case "PendingCalls":
        case "InputLimit":
          yield* finish(state)
          return yield* Shell.failureOf(outcome, state)
      }
    }
  })
