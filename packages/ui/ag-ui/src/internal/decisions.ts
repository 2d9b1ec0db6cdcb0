/**
 * What a run of the AG-UI endpoint does to a stored conversation, decided
 * from the store's copy alone: a new user message to add, the `resume`
 * answers to record (each checked: the call waits, the answer fits, the
 * `Approver` allows it, an edit fits the tool's Schema), or nothing at all
 * (`Replay`) when the request repeats what the store already holds.
 *
 * @internal
 */
import { type Chat, type ConversationStore, Messages } from "@chat-ts/core"
import type { Approver } from "@chat-ts/inbox"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as AgUiError from "../AgUiError.js"
import * as AgUiProtocol from "../AgUiProtocol.js"

/** What a run does: run the turn from these messages, or nothing (the request was seen before). */
export type Plan =
  | { readonly _tag: "Run"; readonly messages: Messages.Messages }
  | { readonly _tag: "Replay" }

/** The reason a cancelled approval is rejected with (the model sees it). */
export const cancelReason = "The user cancelled the approval request."

/** What planning needs besides the stored conversation and the request. */
export interface Context {
  readonly chat: Pick<Chat.Service, "approve" | "reject">
  readonly approver: Approver.Service
  readonly identity: Approver.Identity
  /** Whether `identity` may run turns of this conversation. */
  readonly mayRun: (identity: Approver.Identity, conversationId: string) => Effect.Effect<boolean>
}

const waits = (call: Messages.ToolCallPart): boolean => Messages.isAwaitingDecision(call)

/** The calls of a conversation that wait for a person or a time. */
export const waiting = (messages: Messages.Messages): ReadonlyArray<Messages.ToolCallPart> =>
  Messages.toolCalls(messages).filter(waits)

const decodeAnswer = Schema.decodeUnknownResult(AgUiProtocol.Answer)

/** A resume entry as a decision: approve (maybe edited), reject (maybe with a reason), or none (a scheduled call left to its time). */
type Decision =
  | { readonly _tag: "Approve"; readonly edited: Option.Option<unknown> }
  | { readonly _tag: "Reject"; readonly reason: string | undefined }
  | { readonly _tag: "None" }

const decisionOf = (entry: AgUiProtocol.ResumeEntry, scheduled: boolean): Result.Result<Decision, AgUiError.Refused> => {
  if (entry.status === "cancelled") {
    return Result.succeed(scheduled ? { _tag: "None" } : { _tag: "Reject", reason: cancelReason })
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

/** Whether a call that no longer waits already holds this very decision (a repeated request: nothing to do). */
const holds = (call: Messages.ToolCallPart, decision: Decision): boolean => {
  const status = call.status
  if (Messages.decisionOf(call).decision === undefined) return false
  if (decision._tag === "Reject") return status._tag === "Rejected" && status.by === "user" && status.reason === decision.reason
  if (decision._tag === "None") return false
  const edited = "editedArguments" in status ? status.editedArguments : undefined
  const ran = status._tag === "Approved" || status._tag === "Running" || status._tag === "Completed" || status._tag === "Failed"
  return ran && (Option.isNone(decision.edited) ? edited === undefined : edited === JSON.stringify(decision.edited.value))
}

/** Records one decision on a waiting call (checked by the chat: an edit must fit the tool's Schema), with who and when. */
const apply = (
  context: Context,
  conversationId: string,
  messages: Messages.Messages,
  call: Messages.ToolCallPart,
  decision: Decision,
  at: number
): Effect.Effect<Messages.Messages, AgUiError.Refused> => {
  if (decision._tag === "None") return Effect.succeed(messages)
  const kind = decision._tag === "Reject" ? "reject" : Option.isSome(decision.edited) ? "edit" : "approve"
  const args = decision._tag === "Approve" && Option.isSome(decision.edited) ? JSON.stringify(decision.edited.value) ?? "" : call.arguments
  return Effect.gen(function*() {
    const allowed = yield* context.approver.authorize(context.identity, {
      conversationId,
      callId: call.id,
      tool: call.name,
      arguments: args,
      decision: kind
    })
    if (!allowed) return yield* AgUiError.refuse("forbidden", `${context.identity.id} may not ${kind} a call of '${call.name}'`)
    const decided = decision._tag === "Reject"
      ? context.chat.reject(messages, call.id, decision.reason)
      : context.chat.approve(messages, call.id, Option.getOrUndefined(decision.edited))
    const next = yield* Effect.mapError(decided, (error) =>
      error._tag === "InvalidEditedArguments"
        ? AgUiError.refuse(
          "invalid_edit",
          `the edited arguments do not fit the parameters of '${error.name}'`,
          error.detail.split("\n").map((line) => line.trimEnd()).filter((line) => line.trim() !== "")
        )
        : AgUiError.refuse("already_decided", `the call '${call.id}' no longer waits for a decision`))
    return Messages.updateTool(next, call.id, (c) => ({
      ...c,
      status: { ...c.status, decision: { by: context.identity.id, at } } as Messages.ToolCallStatus
    }))
  })
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
      if (waits(call)) work.push({ call, decision })
      else if (holds(call, decision)) repeated += 1
      else if (pending.length === 0 && repeated === 0 && work.length === 0) {
        return yield* AgUiError.refuse("not_paused", `conversation '${stored.id}' waits for no decision`)
      } else {
        return yield* AgUiError.refuse("already_decided", `the call '${call.id}' was already decided (${call.status._tag})`)
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

/** The plan of a run with a new user message (the last of `messages`). */
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
    const lastUser = [...stored.messages].reverse().find((message) => message.role === "user")
    if (lastUser !== undefined && messageIdOf(lastUser) === last.id) return { _tag: "Replay" } as const
    const text = textOf(last.content)
    if (text.trim() === "") return yield* AgUiError.refuse("bad_request", "the user message has no text")
    if (!(yield* context.mayRun(context.identity, stored.id))) {
      return yield* AgUiError.refuse("forbidden", `${context.identity.id} may not run turns of conversation '${stored.id}'`)
    }
    const message: Messages.Message = {
      ...Messages.user(text),
      providerMetadata: { [AgUiProtocol.metadataKey]: { messageId: last.id } }
    }
    const messages = yield* Effect.fromResult(Messages.append(stored.messages, message)).pipe(
      Effect.mapError((error) =>
        AgUiError.refuse("interrupts_pending", `calls wait for a decision (${error.ids.join(", ")}): answer their interrupts with a resume first`)
      )
    )
    return { _tag: "Run", messages } as const
  })

/** What a run of `input` does to the stored conversation (nothing is stored here). */
export const plan = (
  context: Context,
  stored: ConversationStore.Stored,
  input: AgUiProtocol.RunAgentInput
): Effect.Effect<Plan, AgUiError.Refused> =>
  input.resume !== undefined && input.resume.length > 0
    ? planResume(context, stored, input.resume)
    : planMessage(context, stored, input)
