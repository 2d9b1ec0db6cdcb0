/**
 * Runs the turns `useChat` asks for, on conversations stored in a
 * `ConversationStore` under the chat id, and gives each as a stream of UI
 * message chunks.
 *
 * The store is the truth. A request is read for what it asks now (a new user
 * message, or approval responses, see `UiRequest`), checked against the
 * stored conversation and applied inside `Worker.resume`, under the
 * conversation's lease, before the turn goes on (streamed, saving every
 * state): two tabs deciding the same call cannot both win (the second is
 * `Busy`, or finds the call decided). The caller's identity is the decider
 * (`Approver.deciderOf`), so core enforces the tool's decision policy here,
 * and the sender of a user message. A refusal (an approval naming no
 * pending call of this conversation, a call already decided otherwise, an
 * edit its tool's Schema refuses, the `Approver`'s policy, the tool's
 * decision policy) is a typed error before anything streams, and nothing is
 * stored or run. A new message while calls wait steers the conversation
 * (`Steering.steer`: the undecided calls are cancelled) unless the options
 * say to refuse it. A request already
 * applied (a retrying client: the same message id, the same decisions) is a
 * no-op: a stream with `duplicate: true` in its metadata, and no run.
 *
 * The turn runs in the service's scope, not the request's: a client that
 * goes away does not cut a tool off half way; the next request sees the
 * stored result.
 *
 * A new message while a turn of the conversation runs here (`useChat`'s
 * `stop()` aborts the first request's stream, not the turn; then it sends)
 * is that turn's input (`Chat.StreamOptions.input`): an answer streaming is
 * interrupted and the model answers again with the message; one that comes
 * while calls run waits for them. The rest of the running turn streams to
 * the new request (`joined: true` in its `start` metadata), the aborted one
 * is closed. A message the turn ended too soon to take runs as a turn of
 * its own, in the same stream.
 *
 * @since 0.2.0
 */
import type { Chat, ChatEvent, ChatInput, ChatOutcome } from "@chat-ts/core"
import * as ChatError from "@chat-ts/core/ChatError"
import * as ConversationStore from "@chat-ts/core/ConversationStore"
import * as Messages from "@chat-ts/core/Messages"
import * as Steering from "@chat-ts/core/Steering"
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
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Chunks from "./internal/chunks.js"
import type * as UiMessageChunk from "./UiMessageChunk.js"
import * as UiError from "./UiError.js"
import * as UiHistory from "./UiHistory.js"
import * as UiRequest from "./UiRequest.js"

/** The key under a user message's `providerMetadata` that keeps the client's message id (to know a retried request). */
export const metadataKey = "@chat-ts/ai-sdk-ui"

/** The service. */
export interface Service {
  /** Checks and applies `input` as `identity`, then streams the turn; a refusal fails before anything streams. */
  readonly run: (
    input: UiRequest.Input,
    identity: Approver.Identity
  ) => Effect.Effect<Stream.Stream<UiMessageChunk.UiMessageChunk>, UiError.UiError>
  /**
   * The stored conversation `conversationId` as `useChat`'s initial messages, read as `identity`
   * (under `access`, as `run`): what a page loads when it starts. A conversation not stored yet is
   * empty (version 0). Nothing is stored or run.
   */
  readonly history: (conversationId: string, identity: Approver.Identity) => Effect.Effect<UiHistory.History, UiError.UiError>
}

/** The UI chat in use. */
export class UiChat extends Context.Service<UiChat, Service>()("@chat-ts/ai-sdk-ui/UiChat") {}

/** Settings. */
export interface Options<R> {
  /** The chat whose tools the conversations use: it checks edits and runs the turns. */
  readonly chat: Chat.Service<R>
  /** Settings of the resumed turns (lease length, owner…). */
  readonly resume?: Worker.Options
  /**
   * Whether `identity` may use conversation `conversationId` at all (send messages to it, read its
   * turns); `false` is a 403 before anything is read or stored. Default: everyone identified may,
   * so chat ids must then be unguessable. The `Approver` still decides each approval.
   */
  readonly access?: (identity: Approver.Identity, conversationId: string) => Effect.Effect<boolean>
  /**
   * A new user message while calls of the conversation wait: `"cancel"` (default, core's
   * `Steering.steer` rule of that name) makes every call no one decided yet `Cancelled` (by
   * `"user-message"`, the model is told why) and answers the message in the same stream;
   * `"refuse"` keeps the conversation as it is and answers 409 `Paused` (decide the calls first).
   * Either way, while a call already approved is still pending (it runs first), the message is a
   * 409 `Paused`: send it again once that call has run. (The same option, and values, as
   * `@chat-ts/ag-ui`'s, which also has `"queue"`.)
   */
  readonly steering?: "cancel" | "refuse"
  /** @deprecated Use `steering` (`"steer"` is `"cancel"`); read when `steering` is not given. */
  readonly whilePaused?: "steer" | "refuse"
}

/**
 * A turn running in this service that takes input (see the module's doc): where its chunks go now
 * (the last request that joined it), its input, the message ids handed to it.
 */
interface Running {
  out: Output
  readonly input: Queue.Queue<ChatInput.ChatInput>
  readonly handed: Set<string>
  /** The messages handed over that the turn may still have to take: run on their own if it ends first. */
  readonly waiting: Array<{ readonly input: Extract<UiRequest.Input, { _tag: "Message" }>; readonly identity: Approver.Identity }>
  /** Whether the model is streaming an answer now (input will cut it: its last deltas are not forwarded). */
  answering: boolean
  /** Drop the model's deltas until the cut answer's end (`AnswerInterrupted` or `StepFinished`). */
  cutting: boolean
}

/** Where a turn's chunks go: one request's stream and the mapper of that stream. */
interface Output {
  readonly queue: Queue.Queue<UiMessageChunk.UiMessageChunk, Cause.Done>
  readonly mapper: Chunks.Mapper
}

/** The request was applied already: answered with an empty stream, nothing run. */
interface Duplicate {
  readonly _tag: "Duplicate"
}

/** A store's failure as the endpoint's refusal: its kind only, never its detail (a driver's message may name hosts or credentials; it is logged). */
const storeFailure = (error: { readonly _tag: string }) =>
  new UiError.StoreFailure({ message: `the conversation store failed (${error._tag}): nothing was stored or run; try again later` })

/** `effect` on the store: a failure or a defect (a store that throws) is logged with its cause and refused as `StoreFailure`. */
const onStore = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, UiError.StoreFailure, R> =>
  effect.pipe(
    Effect.tapCause((cause) => Effect.logError("@chat-ts/ai-sdk-ui: the conversation store failed", cause)),
    Effect.mapError(storeFailure),
    Effect.catchDefect(() => Effect.fail(storeFailure({ _tag: "Defect" })))
  )

/** Whether the stored call's decision is the one the client sends again. */
const sameOutcome = (call: Messages.ToolCallPart, approved: boolean): boolean =>
  approved
    ? ["Approved", "Running", "Completed", "Failed"].includes(call.status._tag)
    : call.status._tag === "Rejected" && call.status.by === "user"

const userMessageIds = (messages: Messages.Messages): ReadonlySet<unknown> =>
  new Set(messages.flatMap((message) => {
    const kept = message.role === "user" ? message.providerMetadata?.[metadataKey] : undefined
    return typeof kept === "object" && kept !== null && "messageId" in kept ? [kept.messageId] : []
  }))

/** Why core refused a decision, as the endpoint's typed error (nothing stored), by the kinds of `ChatError.refusalOf`. */
const refusals: { readonly [Kind in ChatError.Refusal["kind"]]: (refused: ChatError.Refusal) => UiError.UiError } = {
  forbidden: (refused) => new UiError.Forbidden({ message: refused.message }),
  invalid_edit: (refused) => new UiError.InvalidEdit({ message: refused.message, callId: refused.id, problems: refused.problems }),
  not_found: (refused) => new UiError.NotFound({ message: refused.message }),
  already_decided: (refused) => new UiError.Conflict({ reason: "AlreadyDecided", message: `call '${refused.id}' does not wait for approval` })
}

const refusal = (error: ChatError.ResolveError): UiError.UiError => {
  const refused = ChatError.refusalOf(error)
  return refusals[refused.kind](refused)
}

/** The calls of `after` that a steering message cancelled (they were not cancelled in `before`). */
const steeredCalls = (before: Messages.Messages, after: Messages.Messages): ReadonlyArray<Messages.ToolCallPart> =>
  Messages.toolCalls(after).filter((call) =>
    call.status._tag === "Cancelled" && call.status.by === "user-message" && Messages.findTool(before, call.id)?.status._tag !== "Cancelled"
  )

const turnError = (error: Worker.ResumeError | UiError.UiError | Duplicate): UiError.UiError | Duplicate => {
  switch (error._tag) {
    case "ConversationBusy":
    case "ConcurrentModification":
      return UiError.busy()
    case "ConversationNotFound":
      return new UiError.NotFound({ message: "no conversation with this chat id" })
    case "StoreError":
    case "CorruptConversation":
    case "StateEncodeError":
      return storeFailure(error)
    case "BadRequest":
    case "Unauthorized":
    case "Forbidden":
    case "NotFound":
    case "Conflict":
    case "UnsupportedMediaType":
    case "InvalidEdit":
    case "StoreFailure":
    case "Duplicate":
      return error
    default:
      return new UiError.StoreFailure({ message: `the turn failed before it started: ${error._tag}` })
  }
}

/** The failures of the store, whose detail (a driver's message) is logged, never answered. */
const storeErrors: ReadonlyArray<string> = ["StoreError", "CorruptConversation", "StateEncodeError"]

/** Whether a turn's failure is one of the endpoint's own refusals (or a duplicate), nothing to log. */
const isRefusal = (error: { readonly _tag: string }): boolean =>
  ["BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "UnsupportedMediaType", "InvalidEdit", "Duplicate", "ConversationBusy", "ConcurrentModification"].includes(error._tag)

/** The client's message as stored: its sender, and its id (to know a retried request). */
const messageOf = (input: Extract<UiRequest.Input, { _tag: "Message" }>, identity: Approver.Identity): Messages.Message => ({
  ...Messages.user(input.text, { sender: Approver.deciderOf(identity) }),
  providerMetadata: { [metadataKey]: { messageId: input.messageId } }
})

/** The answer to a request applied already: a stream that says so, nothing run. */
const duplicateStream = (id: string): Stream.Stream<UiMessageChunk.UiMessageChunk> =>
  Stream.make(
    { type: "start", messageMetadata: { conversationId: id, duplicate: true } },
    { type: "finish", messageMetadata: { conversationId: id, duplicate: true } }
  )

/** Makes the service over the store and approver in context; turns run in the scope. */
export const make = <R>(
  options: Options<R>
): Effect.Effect<Service, never, ConversationStore.ConversationStore | Approver.Approver | Scope.Scope | R> =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const approver = yield* Approver.Approver
    const scope = yield* Scope.Scope
    const context = yield* Effect.context<ConversationStore.ConversationStore | R>()
    const chat = options.chat
    const schemas = new Map(chat.tools.map((tool) => [tool.name, tool.parameters]))
    const rule = options.steering ?? (options.whilePaused === "refuse" ? "refuse" : "cancel")
    /** The turns running here that take input, by conversation. */
    const running = new Map<string, Running>()

    /**
     * `regenerate()` of the response to the stored user message `messageId`: allowed only for the
     * last user message, and only when what answered it holds no tool call (a call could then be
     * proposed and run twice); the answer is dropped and the turn runs again from the message.
     */
    const regenerate = (messages: Messages.Messages, messageId: string) =>
      Effect.gen(function*() {
        let index = messages.length - 1
        while (index >= 0 && messages[index]!.role !== "user") index--
        if (index < 0 || !userMessageIds([messages[index]!]).has(messageId)) {
          return yield* new UiError.Conflict({ reason: "NotRegenerable", message: "only the answer to the last message can be regenerated: send a new message instead" })
        }
        const calls = messages.slice(index + 1).flatMap((message) => Messages.toolCallsOf(message))
        if (calls.length > 0) {
          return yield* new UiError.Conflict({
            reason: "NotRegenerable",
            message: `the last answer called tools (${calls.map((call) => call.name).join(", ").slice(0, 200)}): regenerating it could run them again; send a new message instead`
          })
        }
        return messages.slice(0, index + 1)
      })

    /**
     * The client's next message, sent by `identity` (recorded as its sender, for four-eyes): appended
     * to a conversation whose turn is over, or steering a paused one (see `Options.steering`).
     */
    const appendMessage = (
      stored: ConversationStore.Stored,
      input: Extract<UiRequest.Input, { _tag: "Message" }>,
      identity: Approver.Identity
    ) =>
      Effect.gen(function*() {
        if (userMessageIds(stored.messages).has(input.messageId)) {
          if (input.regenerate === true) return yield* regenerate(stored.messages, input.messageId)
          return yield* Effect.fail<Duplicate>({ _tag: "Duplicate" })
        }
        const message = messageOf(input, identity)
        if (Messages.pendingTools(stored.messages).length === 0) return [...stored.messages, message]
        if (rule === "refuse") {
          return yield* new UiError.Conflict({ reason: "Paused", message: "calls of this conversation wait for a decision: decide them first" })
        }
        const at = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        return yield* steer(stored.messages, message, { by: identity.id, at })
      })

    /**
     * `message` steering a paused conversation: the reducer's rule (`Steering.steer`) cancels the
     * undecided calls; with none left pending the message is appended whole (its sender and id
     * kept), otherwise (an approved call still to run) it is refused and nothing changes.
     */
    const steer = (messages: Messages.Messages, message: Messages.Message, cancellation: Messages.Decision) =>
      Effect.gen(function*() {
        const steered = yield* Effect.mapError(
          Effect.fromResult(Steering.steer(messages, message, { cancellation })),
          (error) =>
            error._tag === "DecisionNotAllowed"
              ? new UiError.Forbidden({ message: error.message })
              : new UiError.Conflict({ reason: "Paused", message: "calls of an earlier response of this conversation still wait: decide them first" })
        )
        const pending = Messages.pendingTools(steered)
        const held = messages.at(-1)?.queued
        if (held !== undefined && held.length > 0) {
          return yield* new UiError.Conflict({ reason: "Paused", message: "messages sent earlier wait for this conversation's calls: decide them first" })
        }
        if (pending.length > 0) {
          return yield* new UiError.Conflict({
            reason: "Paused",
            message: `approved calls still have to run (${pending.map((call) => call.id).join(", ").slice(0, 200)}): send the message again once they ran`
          })
        }
        const last = steered.length - 1
        const { queued: _held, ...response } = steered[last]!
        return [...steered.slice(0, last), response as Messages.Message, message]
      })

    /** One approval response applied to `messages`, or `undefined` when it was applied already. */
    const decideOne = (
      messages: Messages.Messages,
      input: Extract<UiRequest.Input, { _tag: "Decisions" }>,
      response: UiRequest.ApprovalResponse,
      identity: Approver.Identity
    ): Effect.Effect<Messages.Messages | undefined, UiError.UiError> =>
      Effect.gen(function*() {
        const named = UiRequest.parseApprovalId(response.approvalId)
        if (named === undefined || named.callId !== response.toolCallId) {
          return yield* new UiError.NotFound({ message: `no approval '${response.approvalId.slice(0, 80)}' was requested` })
        }
        if (named.conversationId !== input.chatId) {
          return yield* new UiError.NotFound({ message: `approval '${response.approvalId.slice(0, 80)}' is not of this conversation` })
        }
        const call = Messages.findTool(messages, named.callId)
        if (call === undefined) return yield* new UiError.NotFound({ message: `no call '${named.callId}' in this conversation` })
        const edit = input.edits.get(response.approvalId)
        if (call.status._tag !== "AwaitingApproval") {
          if (edit === undefined && sameOutcome(call, response.approved)) return undefined
          return yield* new UiError.Conflict({ reason: "AlreadyDecided", message: `call '${call.id}' does not wait for approval (${call.status._tag})` })
        }
        if (!response.approved && edit !== undefined) return yield* new UiError.BadRequest({ message: `an edit of '${call.id}', which is rejected` })
        const kind = !response.approved ? "reject" : edit === undefined ? "approve" : "edit"
        const allowed = yield* approver.authorize(identity, {
          conversationId: input.chatId,
          callId: call.id,
          tool: call.name,
          arguments: kind === "edit" ? (JSON.stringify(edit) ?? "") : call.arguments,
          decision: kind
        })
        if (!allowed) return yield* new UiError.Forbidden({ message: `${identity.id} may not ${kind} a call of '${call.name}'` })
        const decider = Approver.deciderOf(identity)
        const decided = response.approved
          ? chat.approve(messages, call.id, edit, { decider })
          : chat.reject(messages, call.id, response.reason, { decider })
        return yield* Effect.mapError(decided, refusal)
      })

    /** The client's approval responses, applied in order; all already applied: `Duplicate`. */
    const applyDecisions = (
      stored: ConversationStore.Stored,
      input: Extract<UiRequest.Input, { _tag: "Decisions" }>,
      identity: Approver.Identity
    ) =>
      Effect.gen(function*() {
        const answered = new Set(input.responses.filter((r) => r.approved).map((r) => r.approvalId))
        const stray = [...input.edits.keys()].find((key) => !answered.has(key))
        if (stray !== undefined) return yield* new UiError.BadRequest({ message: `an edit for '${stray.slice(0, 80)}', which this request does not approve` })
        let messages = stored.messages
        let applied = 0
        for (const response of input.responses) {
          const next = yield* decideOne(messages, input, response, identity)
          if (next !== undefined) (messages = next, applied++)
        }
        if (applied > 0) return messages
        if (input.responses.length > 0) return yield* Effect.fail<Duplicate>({ _tag: "Duplicate" })
        return yield* new UiError.Conflict({ reason: "NotPaused", message: "the request decides nothing: no approval response in the last message" })
      })

    /** Creates the conversation if it is not stored yet (a concurrent creation is fine). */
    const ensureStored = (id: string) =>
      onStore(store.load(id).pipe(
        Effect.flatMap(Option.match({
          onSome: () => Effect.void,
          onNone: () => Effect.asVoid(store.save(id, Messages.empty, { expectedVersion: 0 })).pipe(Effect.catchTag("ConcurrentModification", () => Effect.void))
        }))
      ))

    const versionOf = (id: string) =>
      store.load(id).pipe(
        Effect.map(Option.map((stored) => stored.version)),
        Effect.orElseSucceed(() => Option.none<number>()),
        Effect.catchDefect(() => Effect.succeed(Option.none<number>()))
      )

    /**
     * `event` of a running turn as chunks of the stream it goes to now: the deltas of an answer that
     * input cuts are dropped (the stream that showed its beginning was aborted).
     */
    const relay = (entry: Running, event: ChatEvent.ChatEvent): ReadonlyArray<UiMessageChunk.UiMessageChunk> => {
      const delta = event._tag === "TextDelta" || event._tag === "ReasoningDelta" || event._tag === "ToolCallDelta"
      if (!delta) {
        entry.answering = false
        if (event._tag === "AnswerInterrupted" || event._tag === "StepFinished") entry.cutting = false
      } else {
        entry.answering = true
        if (entry.cutting) return []
      }
      return entry.out.mapper.map(event)
    }

    /**
     * A new message for a conversation whose turn runs here: handed to that turn as input, the rest
     * of the turn streamed to this request (the previous one is closed). `undefined`: no turn takes
     * input now (the usual path runs). Its id already stored or handed over: a duplicate.
     */
    const join = (
      entry: Running | undefined,
      input: Extract<UiRequest.Input, { _tag: "Message" }>,
      identity: Approver.Identity
    ): Effect.Effect<Stream.Stream<UiMessageChunk.UiMessageChunk> | undefined, UiError.UiError> =>
      Effect.gen(function*() {
        if (entry === undefined) return undefined
        const id = input.chatId
        const stored = yield* onStore(store.load(id))
        const duplicate = entry.handed.has(input.messageId) || (Option.isSome(stored) && userMessageIds(stored.value.messages).has(input.messageId))
        if (duplicate) return duplicateStream(id)
        // The turn may have ended while the store was read: then the usual path runs.
        if (running.get(id) !== entry) return undefined
        const queue = yield* Queue.unbounded<UiMessageChunk.UiMessageChunk, Cause.Done>()
        const previous = entry.out
        entry.out = { queue, mapper: Chunks.make(id, (tool) => schemas.get(tool)) }
        entry.cutting = entry.answering
        entry.handed.add(input.messageId)
        entry.waiting.push({ input, identity })
        yield* Queue.offerAll(previous.queue, previous.mapper.close())
        yield* Queue.end(previous.queue)
        yield* Queue.offer(entry.input, messageOf(input, identity))
        const start: UiMessageChunk.UiMessageChunk = { type: "start", messageMetadata: { conversationId: id, joined: true } }
        return Stream.concat(Stream.make(start), Stream.fromQueue(queue))
      })

    /**
     * The messages handed to `entry` that its turn, now over, did not store (it ended before it took
     * them), in order: read from the store, the truth, whatever the turn did with its input.
     */
    const leftover = (entry: Running, id: string) =>
      Effect.map(
        store.load(id).pipe(Effect.orElseSucceed(() => Option.none<ConversationStore.Stored>()), Effect.catchDefect(() => Effect.succeed(Option.none<ConversationStore.Stored>()))),
        (stored) => {
          const ids = Option.isSome(stored) ? userMessageIds(stored.value.messages) : new Set<unknown>()
          return entry.waiting.filter(({ input }) => !ids.has(input.messageId))
        }
      )

    /** Messages a turn ended too soon to take, each run as a turn of its own into `queue` (their `start` chunks left out). */
    const runLeftover = (
      left: ReadonlyArray<{ readonly input: Extract<UiRequest.Input, { _tag: "Message" }>; readonly identity: Approver.Identity }>,
      queue: Queue.Queue<UiMessageChunk.UiMessageChunk, Cause.Done>
    ) =>
      Effect.forEach(left, ({ identity, input }) =>
        run(input, identity).pipe(
          // Another run may hold the conversation a moment (it then takes the message as input, or ends).
          Effect.retry({ while: (error) => error._tag === "Conflict" && error.reason === "Busy", schedule: Schedule.spaced("20 millis"), times: 250 }),
          Effect.flatMap((stream) => Stream.runForEach(Stream.drop(stream, 1), (chunk) => Queue.offer(queue, chunk))),
          Effect.catchCause((cause) => {
            const failure = Cause.findErrorOption(cause)
            const why = Option.isSome(failure) ? `${failure.value._tag}: ${failure.value.message}` : "it failed on the server"
            return Effect.asVoid(Queue.offer(queue, { type: "error", errorText: `the message could not be answered (${why})` }))
          })
        ), { discard: true }).pipe(Effect.ensuring(Queue.end(queue)))

    const run: Service["run"] = (input, identity) =>
      Effect.gen(function*() {
        const id = input.chatId
        if (options.access !== undefined && !(yield* options.access(identity, id))) {
          return yield* new UiError.Forbidden({ message: `${identity.id} may not use this conversation` })
        }
        if (input._tag === "Message") yield* ensureStored(id)
        const joined = input._tag === "Message" && input.regenerate !== true ? yield* join(running.get(id), input, identity) : undefined
        if (joined !== undefined) return joined
        const queue = yield* Queue.unbounded<UiMessageChunk.UiMessageChunk, Cause.Done>()
        const ready = yield* Deferred.make<void, UiError.UiError | Duplicate>()
        const turnInput = yield* Queue.unbounded<ChatInput.ChatInput>()
        const entry: Running = {
          out: { queue, mapper: Chunks.make(id, (tool) => schemas.get(tool)) },
          input: turnInput,
          handed: new Set(),
          waiting: [],
          answering: false,
          cutting: false
        }
        const emit = (chunks: ReadonlyArray<UiMessageChunk.UiMessageChunk>) => Queue.offerAll(entry.out.queue, chunks)
        const forward = (event: ChatEvent.ChatEvent) => Effect.suspend(() => emit(relay(entry, event)))

        /** The chat, with `resume` streaming its events to the queue (what `Worker.resume` runs under the lease). */
        const streaming: Chat.Service<R> = {
          ...chat,
          resume: (messages, turnOptions) =>
            // Under the lease, the stored conversation applied: from now on a new message is this turn's input.
            Effect.sync(() => running.set(id, entry)).pipe(Effect.andThen(chat.stream(messages, { ...turnOptions, input: turnInput }).pipe(
              Stream.tap(forward),
              Stream.runLast,
              Effect.flatMap(Option.match({
                onNone: () => Effect.die(new Error("the turn's stream ended without a final event")),
                onSome: (event): Effect.Effect<ChatOutcome.Result> =>
                  event._tag === "Completed"
                    ? Effect.succeed({ messages: event.messages, outcome: { _tag: "Complete", response: event.response, value: Messages.textOf(event.response), usage: event.usage } })
                    : event._tag === "Paused"
                    ? Effect.succeed({ messages: event.messages, outcome: { _tag: "Paused", reason: event.reason, usage: event.usage } })
                    : Effect.die(new Error(`the turn's stream ended with ${event._tag}`))
              }))
            )))
        }
        const decide = (stored: ConversationStore.Stored) =>
          Effect.tap(
            input._tag === "Message" ? appendMessage(stored, input, identity) : applyDecisions(stored, input, identity),
            // The calls a steering message cancelled belong to an earlier UI message: their data parts lead this stream.
            (messages) => Effect.andThen(emit(steeredCalls(stored.messages, messages).map((call) => entry.out.mapper.data(call))), Deferred.succeed(ready, undefined))
          )

        const finish = (turn: "complete" | "paused" | "failed", usage?: ChatOutcome.ChatOutcome["usage"]) =>
          Effect.flatMap(versionOf(id), (version) =>
            emit([...entry.out.mapper.close(), {
              type: "finish",
              finishReason: turn === "complete" ? "stop" : turn === "paused" ? "tool-calls" : "error",
              messageMetadata: {
                conversationId: id,
                turn,
                ...(Option.isSome(version) ? { version: version.value } : {}),
                ...(usage === undefined ? {} : { usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } })
              }
            }]))

        const turn = Worker.resume(streaming, id, decide, options.resume).pipe(
          Effect.onExit((exit) =>
            Effect.gen(function*() {
              if (Exit.isSuccess(exit)) {
                const outcome = exit.value.outcome
                yield* finish(outcome._tag === "Complete" ? "complete" : "paused", outcome.usage)
              } else if (!(yield* Deferred.isDone(ready))) {
                const failure = Cause.findErrorOption(exit.cause)
                // Refused with its kind only (a store's detail may name hosts or credentials): the cause is logged.
                if (Option.isNone(failure) || !isRefusal(failure.value)) {
                  yield* Effect.logError("@chat-ts/ai-sdk-ui: the turn failed before it started", exit.cause)
                }
                yield* Deferred.fail(ready, Option.isSome(failure) ? turnError(failure.value) : new UiError.StoreFailure({ message: "the turn stopped before it started" }))
              } else {
                const failure = Cause.findErrorOption(exit.cause)
                // A store's failure (or a defect) is named by its kind only, its detail logged; a model's is shown as it is.
                const stored = Option.isSome(failure) && storeErrors.includes(failure.value._tag)
                if (Option.isNone(failure) || stored) yield* Effect.logError("@chat-ts/ai-sdk-ui: the turn failed", exit.cause)
                yield* emit([...entry.out.mapper.close(), {
                  type: "error",
                  errorText: Option.isNone(failure)
                    ? "the turn stopped: it failed on the server"
                    : stored
                    ? `the conversation store failed (${failure.value._tag}): load the conversation again to see what was stored`
                    : `${failure.value._tag}: ${"message" in failure.value ? failure.value.message : "failed"}`
                }])
                yield* finish("failed")
              }
              // No more input for this turn; a message it ended too soon to take runs on its own, in the same stream.
              if (running.get(id) === entry) running.delete(id)
              const left = entry.waiting.length === 0 ? [] : yield* leftover(entry, id)
              if (left.length > 0) yield* Effect.forkIn(runLeftover(left, entry.out.queue), scope)
              else yield* Queue.end(entry.out.queue)
            })),
          Effect.provide(context)
        )
        yield* Effect.forkIn(Effect.ignore(turn), scope)
        const started = yield* Effect.result(Deferred.await(ready))
        const start: UiMessageChunk.UiMessageChunk = { type: "start", messageMetadata: { conversationId: id } }
        if (Result.isSuccess(started)) return Stream.concat(Stream.make(start), Stream.fromQueue(queue))
        if (started.failure._tag !== "Duplicate") return yield* Effect.fail(started.failure)
        return duplicateStream(id)
      })

    const history: Service["history"] = (id, identity) =>
      Effect.gen(function*() {
        if (options.access !== undefined && !(yield* options.access(identity, id))) {
          return yield* new UiError.Forbidden({ message: `${identity.id} may not use this conversation` })
        }
        const stored = yield* onStore(store.load(id))
        if (Option.isNone(stored)) return { conversationId: id, version: 0, messages: [], running: false }
        return {
          conversationId: id,
          version: stored.value.version,
          messages: UiHistory.toUiMessages(id, stored.value.messages, (tool) => schemas.get(tool)),
          running: UiHistory.isRunning(stored.value.messages)
        }
      })

    return { run, history }
  })

/** A layer providing the service (it needs the store and the approver; turns run in the layer's scope). */
export const layer = <R>(options: Options<R>): Layer.Layer<UiChat, never, ConversationStore.ConversationStore | Approver.Approver | R> =>
  Layer.effect(UiChat, make(options))
