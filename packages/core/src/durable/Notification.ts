/**
 * What a `Notifier` is told: a conversation paused, a call was decided, an
 * approval expired, a paused turn resumed, a turn completed.
 *
 * Notifications are derived from the state, not from the shell that saved
 * it: `between(before, after)` compares the stored messages before and
 * after a save, so every shell that saves through a `ConversationStore`
 * (`Worker.resume`, the inbox, the workflow shell, your own `save`) gives
 * the same notifications for the same states. A store with an outbox writes
 * them in the same save as the state that caused them (see `Outbox`), so a
 * notification is never sent about a state that was not stored.
 *
 * A notification holds ids and statuses only, never a call's arguments or
 * the conversation's text: a receiver that wants them loads the
 * conversation (for example through the inbox).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import type * as Messages from "../turn/Messages.js"

/**
 * The kinds of notification, in the order one save gives them.
 *
 * @category constants
 * @since 0.3.0
 */
export const kinds = ["Decided", "Expired", "Resumed", "Paused", "Completed"] as const

/**
 * What happened.
 *
 * @category models
 * @since 0.3.0
 */
export type Kind = typeof kinds[number]

/**
 * A call as a notification names it.
 *
 * @category schemas
 * @since 0.3.0
 */
export const Call = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  /** The call's status in the saved state (`AwaitingApproval`, `Scheduled`, `Approved`, `Rejected`, …). */
  status: Schema.String,
  /** Who decided it, when the state records it. */
  by: Schema.optional(Schema.String)
})

/**
 * A call as a notification names it.
 *
 * @category models
 * @since 0.3.0
 */
export type Call = typeof Call.Type

/**
 * One notification, as stored in the outbox and sent to a `Notifier`.
 *
 * @category schemas
 * @since 0.3.0
 */
export const Notification = Schema.Struct({
  /** Unique per notification, and the same on every delivery of it: receivers deduplicate on it. */
  id: Schema.String,
  kind: Schema.Literals(kinds),
  conversationId: Schema.String,
  /** The version of the save that caused it. */
  version: Schema.Number,
  /** When that save happened (epoch millis, on the store's clock). */
  at: Schema.Number,
  /** The calls it is about: those a pause waits on, the decided or expired call, none for `Resumed` and `Completed`. */
  calls: Schema.Array(Call)
})

/**
 * One notification, as stored in the outbox and sent to a `Notifier`.
 *
 * @category models
 * @since 0.3.0
 */
export type Notification = typeof Notification.Type

/**
 * A notification before the store gives it its id, version and time.
 *
 * @category models
 * @since 0.3.0
 */
export interface Event {
  readonly kind: Kind
  readonly calls: ReadonlyArray<Call>
}

/**
 * The JSON text of a notification.
 *
 * @category conversions
 * @since 0.3.0
 */
export const toJson = (notification: Notification): string => JSON.stringify(Schema.encodeSync(Notification)(notification))

/**
 * A notification from its JSON text; anything else is a `SchemaError`.
 *
 * @category conversions
 * @since 0.3.0
 */
export const fromJson = Schema.decodeUnknownEffect(Schema.fromJsonString(Notification))

type ToolCall = ReturnType<typeof Messages.toolCalls>[number]

const callsOf = (messages: Messages.Messages): ReadonlyArray<ToolCall> => {
  const out: Array<ToolCall> = []
  for (const message of messages) for (const part of message.parts) if (part._tag === "ToolCall") out.push(part)
  return out
}

const awaiting = (tag: string | undefined) => tag === "AwaitingApproval" || tag === "Scheduled"
const active = (tag: string) => tag === "Proposed" || tag === "Approved" || tag === "Running"
const ran = (tag: string | undefined) => tag === "Running" || tag === "Completed" || tag === "Failed"

const callOf = (call: ToolCall): Call => {
  const status = call.status as { readonly _tag: string; readonly decision?: { readonly by: string } }
  const by = status.decision?.by ?? (status._tag === "Rejected" && call.status._tag === "Rejected" && call.status.by === "user" ? "user" : undefined)
  return { id: call.id, name: call.name, status: status._tag, ...(by === undefined ? {} : { by }) }
}

/**
 * The calls a pause waits on: those awaiting a person or a time, when nothing else is left to do; else `undefined`.
 *
 * @category utils
 * @since 0.3.0
 */
export const pauseOf = (messages: Messages.Messages): ReadonlyArray<ToolCall> | undefined => {
  const calls = callsOf(messages)
  if (calls.some((call) => active(call.status._tag))) return undefined
  const waiting = calls.filter((call) => awaiting(call.status._tag))
  return waiting.length === 0 ? undefined : waiting
}

/**
 * Whether the turn has its final answer: the last message is a response without tool calls.
 *
 * @category guards
 * @since 0.3.0
 */
export const isComplete = (messages: Messages.Messages): boolean => {
  const last = messages[messages.length - 1]
  return last !== undefined && last.role === "assistant" && !last.parts.some((part) => part._tag === "ToolCall")
}

/** Whether a call that waited for a person (or a time) was decided by one: approved, edited, rejected, cancelled. */
const decided = (before: string | undefined, after: ToolCall): boolean => {
  if (!awaiting(before) || awaiting(after.status._tag)) return false
  const tag: string = after.status._tag
  if (after.status._tag === "Rejected") return after.status.by === "user"
  if (tag === "Expired") return false
  // A scheduled call that started because its time came was decided by no one.
  return before === "AwaitingApproval" || "decision" in after.status || after.status._tag === "Approved"
}

/** Whether a call's approval ran out: rejected by policy while it waited for a person or held an approval (or `Expired`). */
const expired = (before: string | undefined, after: ToolCall): boolean => {
  const tag: string = after.status._tag
  return (before === "AwaitingApproval" || before === "Approved") &&
    (tag === "Expired" || (after.status._tag === "Rejected" && after.status.by === "policy"))
}

/** Whether a save moved a waiting turn on: a call it waited on ran or expired, or the model answered after a person's rejections. */
const resumed = (before: Messages.Messages, after: Messages.Messages, statusBefore: ReadonlyMap<string, string>): boolean => {
  const moved = callsOf(after).some((call) => {
    const was = statusBefore.get(call.id)
    return (awaiting(was) || was === "Approved") && (ran(call.status._tag) || expired(was, call))
  })
  if (moved) return true
  if (after.length <= before.length) return false
  const last = before[before.length - 1]
  if (last === undefined || last.role !== "assistant") return false
  const calls = last.parts.filter((part): part is ToolCall => part._tag === "ToolCall")
  return calls.some((call) => call.status._tag === "Rejected" && call.status.by === "user") &&
    calls.every((call) => !active(call.status._tag) && !awaiting(call.status._tag))
}

/**
 * The notifications of a save that turned `before` (absent for a new conversation) into `after`:
 * - `Decided`, one per call a person decided (it waited for approval, or was scheduled and a person approved or rejected it);
 * - `Expired`, one per call whose approval ran out (rejected by policy while awaiting approval, or approved too late);
 * - `Resumed` when a turn that waited moved on (a call it waited on ran or expired, or the model answered after rejections);
 * - `Paused` when the turn waits (calls await a person or a time and nothing else is left to do) on a call it did not wait on before;
 * - `Completed` when the turn got its final answer in this save.
 * The same states always give the same notifications; saving the same state again gives none.
 *
 * @category utils
 * @since 0.3.0
 */
export const between = (before: Messages.Messages | undefined, after: Messages.Messages): ReadonlyArray<Event> => {
  const statusBefore = new Map<string, string>()
  for (const call of callsOf(before ?? [])) statusBefore.set(call.id, call.status._tag)
  const events: Array<Event> = []
  for (const call of callsOf(after)) {
    const was = statusBefore.get(call.id)
    if (decided(was, call)) events.push({ kind: "Decided", calls: [callOf(call)] })
    else if (expired(was, call)) events.push({ kind: "Expired", calls: [callOf(call)] })
  }
  if (before !== undefined && resumed(before, after, statusBefore)) events.push({ kind: "Resumed", calls: [] })
  const pause = pauseOf(after)
  const previous = new Set((before === undefined ? undefined : pauseOf(before))?.map((call) => call.id))
  if (pause !== undefined && pause.some((call) => !previous.has(call.id))) {
    events.push({ kind: "Paused", calls: pause.map(callOf) })
  }
  if (isComplete(after) && !(before !== undefined && isComplete(before) && before.length === after.length)) {
    events.push({ kind: "Completed", calls: [] })
  }
  return events
}

/**
 * The notifications of one save, with their ids, version and time.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (
  conversationId: string,
  version: number,
  at: number,
  events: ReadonlyArray<Event>
): ReadonlyArray<Notification> =>
  events.map((event) => ({ id: globalThis.crypto.randomUUID(), kind: event.kind, conversationId, version, at, calls: event.calls }))
