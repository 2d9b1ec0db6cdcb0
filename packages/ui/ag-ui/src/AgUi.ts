/**
 * The AG-UI agent: runs a turn of a stored conversation (thread id =
 * conversation id) and gives it as AG-UI 1.x events.
 *
 * A run either adds the client's new user message (the last of
 * `RunAgentInput.messages`; the rest of the client's history is never read),
 * sent by the identity, steering calls that wait (see `Options.steering`),
 * or records the answers of `resume` to the interrupts of the last run, each
 * with the identity as the decider (the call's decision policy is enforced), then
 * runs the turn through `Worker.resume`: under the conversation's lease,
 * saving every state. Everything is decided from the store's copy under that
 * lease, so two tabs answering the same interrupt cannot both win, and a
 * request repeated by a retrying client (the same message id, or answers the
 * store already holds) runs nothing: it reports the conversation as it is.
 *
 * A request refused before the turn starts fails with an `AgUiError.Refused`
 * (an HTTP status); a turn that fails once started ends its events with a
 * `RUN_ERROR`.
 *
 * @since 0.2.0
 */
import * as Chat from "@chat-ts/core/Chat"
import * as ChatEvent from "@chat-ts/core/ChatEvent"
import * as ChatOutcome from "@chat-ts/core/ChatOutcome"
import * as ConversationStore from "@chat-ts/core/ConversationStore"
import * as Messages from "@chat-ts/core/Messages"
import * as Worker from "@chat-ts/core/Worker"
import { Approver } from "@chat-ts/inbox"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as AgUiError from "./AgUiError.js"
import type * as AgUiProtocol from "./AgUiProtocol.js"
import * as Decisions from "./internal/decisions.js"
import { RunEvents, runError } from "./internal/events.js"
import { interruptsOf } from "./internal/interrupts.js"
import { snapshotOf } from "./internal/snapshot.js"

/** The agent. */
export interface Service {
  /**
   * Runs `input` as `identity`: the run's events (from `RUN_STARTED` to `RUN_FINISHED` or `RUN_ERROR`),
   * or a refusal before anything was stored or run.
   */
  readonly run: (
    input: AgUiProtocol.RunAgentInput,
    identity: Approver.Identity
  ) => Effect.Effect<Stream.Stream<AgUiProtocol.Event>, AgUiError.Refused>
}

/** The agent in use. */
export class AgUi extends Context.Service<AgUi, Service>()("@chat-ts/ag-ui/AgUi") {}

/** What a new user message does while calls wait: steer by core's `"cancel"` (default) or `"queue"` rule, or be refused (`"refuse"`). */
export type SteeringRule = Decisions.SteeringRule

/** Settings of the agent. */
export interface Options<R> {
  /** The chat whose turns run (its tools check edits; their strategies decide calls). */
  readonly chat: Chat.Service<R>
  /**
   * Whether `identity` may use conversation `conversationId` at all (send messages to it, answer its
   * interrupts, read its runs); `false` is `forbidden` (403) before anything is read or stored.
   * Default: everyone identified may, so thread ids must then be unguessable. The `Approver` still
   * decides each answer. (The same option as `@chat-ts/ai-sdk-ui`'s `UiChat.Options.access`.)
   */
  readonly access?: (identity: Approver.Identity, conversationId: string) => Effect.Effect<boolean>
  /** @deprecated Use `access` (now asked for every run, not only for new messages); read when `access` is not given. */
  readonly mayRun?: (identity: Approver.Identity, conversationId: string) => Effect.Effect<boolean>
  /** Settings of the runs (lease length, owner, max steps…). */
  readonly resume?: Worker.Options
  /**
   * What a new user message does while calls wait (steering, see `Steering` in @chat-ts/core):
   * `"cancel"` (default) withdraws the calls nobody decided yet (`Cancelled` by `user-message`),
   * lets decided ones run, then answers the message; `"queue"` holds the message until every call is
   * resolved; `"refuse"` answers `interrupts_pending` (409): the client must resume first.
   */
  readonly steering?: SteeringRule
}

/** Why a run of a turn that started failed, as a refusal (its code goes into the `RUN_ERROR`). */
const refusalOf = (error: unknown): AgUiError.Refused => {
  if (error instanceof AgUiError.Refused) return error
  // `undefined` when the run died (a defect, no typed error): a `turn_failed` like any unknown failure.
  const tagged = (error ?? {}) as { readonly _tag?: string; readonly message?: string }
  switch (tagged._tag) {
    case "ConversationBusy":
    case "ConcurrentModification":
      return AgUiError.refuse("conversation_busy", "another run holds this conversation: try again when it ended")
    case "StoreError":
    case "CorruptConversation":
    case "StateEncodeError":
    case "ConversationNotFound":
      return AgUiError.refuse("store_failure", `the store failed (${tagged._tag})`)
    case "InvalidEditedArguments":
      return AgUiError.refuse("invalid_edit", tagged.message ?? "the edited arguments do not fit the tool")
    case "PendingToolCalls":
      return AgUiError.refuse("interrupts_pending", "calls wait for a decision")
    default:
      return AgUiError.refuse("turn_failed", `the turn failed: ${tagged._tag ?? "defect"}${tagged.message ? `: ${tagged.message}` : ""}`)
  }
}

/** The calls `after` runs with edited arguments that `before` did not have (call id -> the arguments that run). */
const editedCalls = (before: Messages.Messages, after: Messages.Messages): ReadonlyMap<string, string> =>
  new Map(Messages.toolCalls(after).flatMap((call) => {
    const edited = "editedArguments" in call.status ? call.status.editedArguments : undefined
    const earlier = Messages.findTool(before, call.id)?.status
    const was = earlier !== undefined && "editedArguments" in earlier ? earlier.editedArguments : undefined
    return edited !== undefined && edited !== was ? [[call.id, edited] as const] : []
  }))

/** A request seen before: nothing to run (internal signal out of `Worker.resume`'s decisions). */
class Replayed {
  readonly _tag = "Replayed"
}

/** Makes the agent over the store in context; decisions ask the `Approver`. */
export const make = <R>(
  options: Options<R>
): Effect.Effect<Service, never, ConversationStore.ConversationStore | Approver.Approver | R> =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const approver = yield* Approver.Approver
    const context = yield* Effect.context<ConversationStore.ConversationStore | R>()
    const chat = options.chat
    const access = options.access ?? options.mayRun ?? (() => Effect.succeed(true))

    /** The stored conversation, or an empty one not stored yet when the thread is new. */
    const load = (id: string): Effect.Effect<ConversationStore.Stored, AgUiError.Refused> =>
      store.load(id).pipe(
        Effect.map(Option.getOrElse((): ConversationStore.Stored => ({ id, messages: Messages.empty, version: 0, updatedAt: 0 }))),
        Effect.mapError(refusalOf)
      )

    /** Stores a new thread's empty conversation (for `Worker.resume` to take its lease); one stored meanwhile is kept. */
    const create = (id: string): Effect.Effect<void, AgUiError.Refused> =>
      store.save(id, Messages.empty, { expectedVersion: 0 }).pipe(
        Effect.asVoid,
        Effect.catchTag("ConcurrentModification", () => Effect.void),
        Effect.mapError(refusalOf)
      )

    /**
     * The events of a run that changes nothing: the conversation as the store holds it, paused or
     * complete. One whose turn is under way (another run holds it) is `conversation_busy`.
     */
    const replay = (events: RunEvents, id: string) =>
      Effect.flatMap(load(id), (stored) => {
        const interrupts = interruptsOf(stored.messages, chat.tools)
        const last = stored.messages[stored.messages.length - 1]
        const complete = last !== undefined && last.role === "assistant" && Messages.toolCallsOf(last).length === 0
        if (interrupts.length === 0 && !complete) {
          return Effect.fail(AgUiError.refuse("conversation_busy", "a run of this conversation is under way: try again when it ended"))
        }
        return Effect.succeed(Stream.fromIterable([
          events.started(),
          ...(interrupts.length > 0 ? events.paused(interrupts) : events.completed(Messages.textOf(last!)))
        ]))
      })

    /**
     * The events of a client connecting to a thread (no message, no resume; `access` asked first): the stored messages as a
     * `MESSAGES_SNAPSHOT`, and the interrupts still pending again as the run's interrupt outcome.
     */
    const connect = (events: RunEvents, id: string) =>
      Effect.gen(function*() {
        const stored = yield* load(id)
        const last = stored.messages[stored.messages.length - 1]
        const answered = last !== undefined && last.role === "assistant" && Messages.toolCallsOf(last).length === 0
        const interrupts = interruptsOf(stored.messages, chat.tools)
        // Neither paused nor answered: a run may be under way (its answer not stored yet), which a success would hide
        // from the page. A lease held is `conversation_busy` (retryable); a free one (a turn that failed) is let go at once.
        if (interrupts.length === 0 && !answered && stored.version > 0) {
          yield* store.acquire(id, "chat-ts:ag-ui-connect", "1 second").pipe(
            Effect.flatMap((lease) => store.release(lease)),
            Effect.catchTag("ConversationNotFound", () => Effect.void),
            Effect.mapError(refusalOf)
          )
        }
        return Stream.fromIterable([
          events.started(),
          events.snapshot(snapshotOf(id, stored.messages)),
          ...events.connected(interrupts, answered ? Messages.textOf(last) : undefined)
        ])
      })

    const run: Service["run"] = (input, identity) =>
      Effect.gen(function*() {
        const id = input.threadId
        const events = new RunEvents(id, input.runId)
        if (!(yield* access(identity, id))) {
          return yield* AgUiError.refuse("forbidden", `${identity.id} may not use conversation '${id}'`)
        }
        if (Decisions.isConnect(input)) return yield* connect(events, id)
        const planContext: Decisions.Context = { chat, approver, identity, steering: options.steering ?? "cancel" }
        // A first look without the lease: refusals and repeats answer at once, with a status.
        const stored = yield* load(id)
        const first = yield* Decisions.plan(planContext, stored, input)
        if (first._tag === "Replay") return yield* replay(events, id)
        if (stored.version === 0) yield* create(id)

        const queue = yield* Queue.unbounded<ReadonlyArray<AgUiProtocol.Event>, Cause.Done>()
        const offer = (out: ReadonlyArray<AgUiProtocol.Event>) => out.length === 0 ? Effect.void : Effect.asVoid(Queue.offer(queue, out))
        const accepted = yield* Deferred.make<void, AgUiError.Refused | Replayed>()
        // The chat as `Worker.resume` sees it: its turn is streamed into the run's events.
        const streamed: Chat.Service<R> = {
          ...chat,
          resume: (messages, turnOptions) =>
            Effect.gen(function*() {
              let last: ChatEvent.Final | undefined
              yield* Stream.runForEach(chat.stream(messages, turnOptions), (event) => {
                if (ChatEvent.isFinal(event)) return Effect.sync(() => void (last = event))
                return offer(events.of(event))
              })
              const final = last!
              yield* offer(events.unreported(messages, final.messages))
              return final._tag === "Completed"
                ? {
                  messages: final.messages,
                  outcome: ChatOutcome.Complete({ response: final.response, value: Messages.textOf(final.response), usage: final.usage })
                }
                : { messages: final.messages, outcome: ChatOutcome.Paused({ reason: final.reason, usage: final.usage }) }
            })
        }
        // Decided again under the lease, from the copy loaded under it.
        const decide = (stored: ConversationStore.Stored) =>
          Decisions.plan(planContext, stored, input).pipe(
            Effect.flatMap((plan) =>
              plan._tag === "Replay"
                ? Effect.fail(new Replayed())
                : Effect.as(
                  Effect.andThen(offer(events.edited(input.messages, editedCalls(stored.messages, plan.messages))), offer(events.settled(plan.settled ?? []))),
                  plan.messages
                )
            ),
            Effect.tap(() => Deferred.succeed(accepted, undefined)),
            Effect.tapError((error) => Deferred.fail(accepted, error))
          )
        const ended = (exit: Exit.Exit<ChatOutcome.Result, unknown>) =>
          Effect.gen(function*() {
            if (Exit.isSuccess(exit)) {
              const { messages, outcome } = exit.value
              return yield* offer(
                outcome._tag === "Complete"
                  ? events.completed(outcome.value)
                  : events.paused(interruptsOf(messages, chat.tools))
              )
            }
            const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
            const refused = error === undefined ? refusalOf(undefined) : error instanceof Replayed ? undefined : refusalOf(error)
            if (error === undefined) yield* Effect.logError("an AG-UI run died", exit.cause)
            // Failed before its decisions were taken (the lease was taken): a refusal with a status.
            const first = yield* Deferred.fail(accepted, refused ?? new Replayed())
            if (!first && refused !== undefined) yield* offer(events.failed(refused))
          })
        // The turn runs to its end even when the client goes away (it saves every state as it goes).
        yield* Worker.resume(streamed, id, decide, options.resume).pipe(
          Effect.exit,
          Effect.flatMap(ended),
          // Whatever happened, the request waiting for the decisions is answered (a no-op once it was).
          Effect.ensuring(Deferred.fail(accepted, AgUiError.refuse("turn_failed", "the run died before it started"))),
          Effect.ensuring(Queue.end(queue)),
          Effect.provide(context),
          Effect.forkDetach
        )
        const started = yield* Deferred.await(accepted).pipe(Effect.as(true), Effect.catchIf((e) => e instanceof Replayed, () => Effect.succeed(false)))
        if (!started) return yield* replay(events, id)
        return Stream.concat(Stream.make(events.started()), Stream.flattenIterable(Stream.fromQueue(queue)))
      }).pipe(Effect.catchDefect((defect) => Effect.fail(AgUiError.refuse("turn_failed", `the run died: ${String(defect)}`))))

    return { run }
  })

/** A layer providing the agent (it needs the store and the approver). */
export const layer = <R>(options: Options<R>): Layer.Layer<AgUi, never, ConversationStore.ConversationStore | Approver.Approver | R> =>
  Layer.effect(AgUi, make(options))

/** The JSON body of a refusal answered with a status: a `RUN_ERROR` event (what `HttpAgent` reports as the error's `payload`). */
export const refusalBody = runError
