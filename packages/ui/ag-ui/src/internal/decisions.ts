/**
 * What a run of the AG-UI endpoint does to a stored conversation, decided
 * from the store's copy alone: a new user message to add (steering calls that
 * wait), the `resume` answers to record (each checked: the call waits, the
 * answer fits, the `Approver` allows it, the call's decision policy allows the
 * person, an edit fits the tool's Schema), or nothing at all
 * (`Replay`) when the request repeats what the store already holds.
 *
 * @internal
 */
import type { Chat, ConversationStore } from "@chat-ts/core"
import * as ChatError from "@chat-ts/core/ChatError"
import * as DecisionPolicy from "@chat-ts/core/DecisionPolicy"
import * as Messages from "@chat-ts/core/Messages"
import * as Steering from "@chat-ts/core/Steering"
import { Approver } from "@chat-ts/inbox"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as AgUiError from "../AgUiError.js"
import * as AgUiProtocol from "../AgUiProtocol.js"

/**
 * What a run does: run the turn from these messages (`settled`: calls the plan itself resolved, whose
 * results the turn will not report: those a steering message cancelled), or nothing (the request was
 * seen before).
 */
export type Plan =
  | { readonly _tag: "Run"; readonly messages: Messages.Messages; readonly settled?: ReadonlyArray<Messages.ToolCallPart> }
  | { readonly _tag: "Replay" }

/** The reason a cancelled approval is withdrawn with (the model sees it). */
export const cancelReason = "The user cancelled the approval request."

/** What a new user message does while calls wait: steer (core's `"cancel"` or `"queue"` rule), or be refused. */
export type SteeringRule = Steering.Rule | "refuse"

/** What planning needs besides the stored conversation and the request. */
export interface Context {
  readonly chat: Pick<Chat.Service, "approve" | "reject">
  readonly approver: Approver.Service
  readonly identity: Approver.Identity
  /** What a new user message does while calls wait. */
  readonly steering: SteeringRule
}

const waits = (call: Messages.ToolCallPart): boolean => Messages.isAwaitingDecision(call)

/** The calls of a conversation that wait for a person or a time. */
export const waiting = (messages: Messages.Messages): ReadonlyArray<Messages.ToolCallPart> =>
  Messages.toolCalls(messages).filter(waits)

const decodeAnswer = Schema.decodeUnknownResult(AgUiProtocol.Answer)

/**
 * A resume entry as a decision: approve (maybe edited), reject (maybe with a reason), cancel (the
 * approval request withdrawn), or none (a scheduled call left to its time).
 */
type Decision =
  | { readonly _tag: "Approve"; readonly edited: Option.Option<unknown> }
  | { readonly _tag: "Reject"; readonly reason: string | undefined }
  | { readonly _tag: "Cancel" }
  | { readonly _tag: "None" }

const decisionOf = (entry: AgUiProtocol.ResumeEntry, scheduled: boolean): Result.Result<Decision, AgUiError.Refused> => {
  if (entry.status === "cancelled") {
    return Result.succeed(scheduled ? { _tag: "None" } : { _tag: "Cancel" })
  }
  return Result.match(decodeAnswer(entry.payload), {
    onFailure: () =>
      Result.fail(AgUiError.refuse(
        "bad_request",
        `the answer to interrupt '${entry.interruptId}' must be { approved: true, editedArgs? } or { approved: false, reason? }`
      )),
    onSuccess: (answer): Result.Result<Decision, AgUiError.Refused> =>
      Result.succeed(
        answer.approved
          ? { _tag: "Approve", edited: answer.editedArgs === undefined ? Option.none() : Option.some(answer.editedArgs) }
          : { _tag: "Reject", reason: answer.reason }
      )
  })
}

/** Whether `id` took part in a call's decision: decided it, or gave one of its quorum's yeses. */
const tookPart = (record: Messages.Decision | undefined, id: string): boolean =>
  record !== undefined && (record.by === id || (record.votes ?? []).some((vote) => vote.by === id))

/**
 * Whether the store already holds this very answer of `id` (a repeated request: nothing to do): on a
 * call still waiting for its quorum, `id`'s yes among its votes (a vote is not the decision); on a call
 * that no longer waits, the decision `id` took part in, or the cancellation `id` made.
 */
const holds = (call: Messages.ToolCallPart, decision: Decision, id: string): boolean => {
  const status = call.status
  const unedited = decision._tag === "Approve" && Option.isNone(decision.edited)
  if (waits(call)) return unedited && DecisionPolicy.progress(call).votes.some((vote) => vote.by === id)
  if (decision._tag === "None") return false
  if (decision._tag === "Cancel") return status._tag === "Cancelled" && status.cancellation?.by === id
  const record = Messages.decisionOf(call).decision
  if (!tookPart(record, id)) return false
  if (decision._tag === "Reject") return status._tag === "Rejected" && status.by === "user" && status.reason === decision.reason
  const edited = "editedArguments" in status ? status.editedArguments : undefined
  const ran = status._tag === "Approved" || status._tag === "Running" || status._tag === "Completed" || status._tag === "Failed" ||
    (status._tag === "Expired" && status.approvedLate === true)
  return ran && (Option.isNone(decision.edited) ? edited === undefined : edited === JSON.stringify(decision.edited.value))
}

/**
 * A decision core refused, as a refusal, by the kinds of `ChatError.refusalOf`: the policy's (403), a
 * bad edit (422), no such call (404: not reached, the call was found first), or one that comes too late (409).
 */
const refusals: { readonly [Kind in ChatError.Refusal["kind"]]: (refused: ChatError.Refusal) => AgUiError.Refused } = {
  forbidden: (refused) => AgUiError.refuse("forbidden", refused.message),
  invalid_edit: (refused) => AgUiError.refuse("invalid_edit", refused.message, refused.problems),
  not_found: (refused) => AgUiError.refuse("unknown_interrupt", refused.message),
  already_decided: (refused) => AgUiError.refuse("already_decided", `the call '${refused.id}' no longer waits for a decision`)
}

const decisionRefusal = (error: ChatError.ResolveError): AgUiError.Refused => {
  const refused = ChatError.refusalOf(error)
  return refusals[refused.kind](refused)
}

/** The `Approver`'s word on one decision (the edited arguments for an edit). */
const authorize = (
  context: Context,
  conversationId: string,
  call: Messages.ToolCallPart,
  decision: Exclude<Decision, { readonly _tag: "None" }>
): Effect.Effect<void, AgUiError.Refused> => {
  const kind = decision._tag === "Reject" ? "reject" : decision._tag === "Cancel" ? "cancel" : Option.isSome(decision.edited) ? "edit" : "approve"
  const args = decision._tag === "Approve" && Option.isSome(decision.edited) ? JSON.stringify(decision.edited.value) ?? "" : call.arguments
  return Effect.flatMap(
    context.approver.authorize(context.identity, { conversationId, callId: call.id, tool: call.name, arguments: args, decision: kind }),
    (allowed) => allowed ? Effect.void : Effect.fail(AgUiError.refuse("forbidden", `${context.identity.id} may not ${kind} a call of '${call.name}'`))
  )
}

/**
 * Records one decision on a waiting call, with the person as the decider: checked by the `Approver`,
 * then by the chat (the call's decision policy: who may decide, four-eyes, one vote each; an edit must
 * fit the tool's Schema). A cancel withdraws the call (`Cancelled`, by its requester or an operator).
 */
const apply = (
  context: Context,
  conversationId: string,
  messages: Messages.Messages,
  call: Messages.ToolCallPart,
  decision: Decision,
  at: number
): Effect.Effect<Messages.Messages, AgUiError.Refused> => {
  if (decision._tag === "None") return Effect.succeed(messages)
  const decider = Approver.deciderOf(context.identity)
  const decided = decision._tag === "Cancel"
    ? Effect.fromResult(Messages.cancel(messages, call.id, {
      // Any of its requesters (every sender of the messages delivered together) withdraws their own request.
      by: DecisionPolicy.requestersOf(messages, call.id).some((requester) => requester?.id === decider.id) ? "requester" : "operator",
      reason: cancelReason,
      // Roles kept: under a decision policy they may be what lets this person withdraw it (its `reject` rule).
      cancellation: { by: decider.id, at, ...(decider.roles === undefined ? {} : { roles: decider.roles }) }
    }))
    : decision._tag === "Reject"
    ? context.chat.reject(messages, call.id, decision.reason, { decider })
    : context.chat.approve(messages, call.id, Option.getOrUndefined(decision.edited), { decider })
  return authorize(context, conversationId, call, decision).pipe(
    Effect.andThen(Effect.mapError(decided, decisionRefusal))
  )
}

/** The plan of a run with `resume` answers. */
const planResume = (
  context: Context,
  stored: ConversationStore.Stored,
  entries: ReadonlyArray<AgUiProtocol.ResumeEntry>
): Effect.Effect<Plan, AgUiError.Refused> =>
  Effect.gen(function*() {
    const ids = new Set(entries.map((entry) => entry.interruptId))
    if (ids.size !== entries.length) return yield* AgUiError.refuse("bad_request", "a resume answers an interrupt twice")
    const pending = waiting(stored.messages)
    const work: Array<{ readonly call: Messages.ToolCallPart; readonly decision: Decision }> = []
    let repeated = 0
    for (const entry of entries) {
      const call = Messages.findTool(stored.messages, entry.interruptId)
      if (call === undefined) {
        return yield* AgUiError.refuse("unknown_interrupt", `no interrupt '${entry.interruptId}' in conversation '${stored.id}'`)
      }
      const decision = yield* Effect.fromResult(decisionOf(entry, call.status._tag === "Scheduled"))
      if (holds(call, decision, context.identity.id)) repeated += 1
      else if (waits(call)) work.push({ call, decision })
      else {
        // Whether or not other calls wait: the call named is decided (or withdrawn, expired) already.
        return yield* AgUiError.refuse("already_decided", `the call '${call.id}' no longer waits for a decision (${call.status._tag})`)
      }
    }
    if (work.length === 0) return { _tag: "Replay" } as const
    const unanswered = pending.filter((call) => !ids.has(call.id)).map((call) => call.id)
    if (unanswered.length > 0) {
      return yield* AgUiError.refuse("interrupts_not_addressed", `the resume must answer every open interrupt; unanswered: ${unanswered.join(", ")}`)
    }
    const at = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    let messages = stored.messages
    for (const { call, decision } of work) messages = yield* apply(context, stored.id, messages, call, decision, at)
    return { _tag: "Run", messages } as const
  })

/** The text of an AG-UI message's content: a string, or its text parts joined. */
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.flatMap((part) => (typeof part === "object" && part !== null && part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("")
    : ""

/** The AG-UI id recorded on a user message added by this endpoint. */
export const messageIdOf = (message: Messages.Message): string | undefined => {
  const entry = message.providerMetadata?.[AgUiProtocol.metadataKey]
  const id = typeof entry === "object" && entry !== null ? (entry as { readonly messageId?: unknown }).messageId : undefined
  return typeof id === "string" ? id : undefined
}

/** The AG-UI ids of the user messages held on a paused response (steered with the `"queue"` rule, or while approved calls wait to run). */
const heldIdsOf = (message: Messages.Message): ReadonlyArray<string> => {
  const entry = message.providerMetadata?.[AgUiProtocol.metadataKey]
  const ids = typeof entry === "object" && entry !== null ? (entry as { readonly heldMessageIds?: unknown }).heldMessageIds : undefined
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : []
}

/** Whether the conversation already holds the AG-UI message `id` (added, or held on a paused response). */
const seen = (messages: Messages.Messages, id: string): boolean =>
  messages.some((message) => messageIdOf(message) === id || heldIdsOf(message).includes(id))

/**
 * `message` added following the steering rule (see `Steering.steer`): with `"cancel"` the calls nobody
 * decided become `Cancelled` (by `user-message`, who and when recorded), decided ones still run. A
 * message core holds on the response (`queued`) is added here whole at once when every call of the
 * response is resolved (so its sender and id are kept); one that must wait keeps its id on the response.
 */
const steer = (
  context: Context,
  messages: Messages.Messages,
  message: Messages.Message,
  messageId: string,
  rule: Steering.Rule,
  at: number
): Result.Result<Messages.Messages, ChatError.InvalidSteeringMessage | ChatError.PendingToolCalls | ChatError.DecisionNotAllowed> =>
  Result.map(Steering.steer(messages, message, { rule, cancellation: { by: context.identity.id, at } }), (next) => {
    const index = next.length - 1
    const response = next[index]!
    if (response.role !== "assistant" || response.queued === undefined) return next
    const { queued, ...rest } = response
    if (queued.length === 1 && Messages.toolCallsOf(response).every(Messages.isResolved)) {
      return [...next.slice(0, index), rest, message]
    }
    const entry = response.providerMetadata?.[AgUiProtocol.metadataKey]
    const held = { ...(typeof entry === "object" && entry !== null ? entry : {}), heldMessageIds: [...heldIdsOf(response), messageId] }
    return [...next.slice(0, index), { ...response, providerMetadata: { ...response.providerMetadata, [AgUiProtocol.metadataKey]: held } }]
  })

/** The plan of a run with a new user message (the last of `messages`), sent by `context.identity`. */
const planMessage = (
  context: Context,
  stored: ConversationStore.Stored,
  input: AgUiProtocol.RunAgentInput
): Effect.Effect<Plan, AgUiError.Refused> =>
  Effect.gen(function*() {
    const last = input.messages[input.messages.length - 1]
    if (last === undefined || last.role !== "user") {
      return yield* AgUiError.refuse("bad_request", "nothing to run: the last message must be the user's, or the run must carry a resume")
    }
    if (seen(stored.messages, last.id)) return { _tag: "Replay" } as const
    const text = textOf(last.content)
    if (text.trim() === "") return yield* AgUiError.refuse("bad_request", "the user message has no text")
    const message: Messages.Message = {
      ...Messages.user(text, { sender: Approver.deciderOf(context.identity) }),
      providerMetadata: { [AgUiProtocol.metadataKey]: { messageId: last.id } }
    }
    const at = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const added = context.steering === "refuse"
      ? Messages.append(stored.messages, message)
      : steer(context, stored.messages, message, last.id, context.steering, at)
    const messages = yield* Effect.fromResult(added).pipe(
      Effect.mapError((error) =>
        error._tag === "PendingToolCalls"
          ? AgUiError.refuse("interrupts_pending", `calls wait for a decision (${error.ids.join(", ")}): answer their interrupts with a resume first`)
          : error._tag === "DecisionNotAllowed"
          ? AgUiError.refuse("forbidden", error.message)
          : AgUiError.refuse("bad_request", error.message)
      )
    )
    // Delivered here with the message (not held): the turn starts from the message and never reports these calls.
    const delivered = messages[messages.length - 1] === message
    const settled = delivered
      ? waiting(stored.messages).map((call) => Messages.findTool(messages, call.id)!).filter(Messages.isResolved)
      : []
    return { _tag: "Run", messages, settled } as const
  })

/**
 * Whether `input` only connects to its thread (no message of the client's, no resume: a page that
 * starts again): it is answered with the thread as stored, its pending interrupts again.
 */
export const isConnect = (input: AgUiProtocol.RunAgentInput): boolean =>
  input.messages.length === 0 && (input.resume === undefined || input.resume.length === 0)

/** What a run of `input` does to the stored conversation (nothing is stored here). */
export const plan = (
  context: Context,
  stored: ConversationStore.Stored,
  input: AgUiProtocol.RunAgentInput
): Effect.Effect<Plan, AgUiError.Refused> =>
  input.resume !== undefined && input.resume.length > 0
    ? planResume(context, stored, input.resume)
    : planMessage(context, stored, input)
