/**
 * The saves of one `Worker.resume` run under its lease, in as few commits as
 * the guarantees allow: a decision that approves a call is saved with the
 * call's `Running` (the turn's first checkpoint, made before the handler
 * starts), and the state the turn ends on is saved with the lease's release.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as ChatOutcome from "../../chat/ChatOutcome.js"
import * as Messages from "../../turn/Messages.js"
import * as ConversationStore from "../ConversationStore.js"

/**
 * Whether the turn ends on this state, whatever runs it: the model's last message answers with no call
 * and holds no queued message (`Complete`), or every call of it that is not resolved awaits a person's
 * decision with no deadline (`Pause`). Anything else (a call to run, decide, schedule or expire, a
 * message to deliver) is not, and the lease is released apart.
 */
export const isFinal = (messages: Messages.Messages): boolean => {
  const last = messages[messages.length - 1]
  if (last === undefined || last.role !== "assistant" || last.queued !== undefined) return false
  let awaiting = 0
  for (const call of Messages.toolCallsOf(last)) {
    if (Messages.isResolved(call)) continue
    if (call.status._tag !== "AwaitingApproval" || call.status.expiresAt !== undefined) return false
    awaiting++
  }
  return awaiting > 0 || Messages.toolCallsOf(last).length === 0
}

/**
 * Whether the turn's first step changes this state before anything runs: an `Approved` call of the last
 * response becomes `Running` (saved before its handler starts), `Expired`, or waits again; so the
 * decision rides in that first checkpoint.
 */
export const startsWithSave = (messages: Messages.Messages): boolean =>
  Messages.lastCalls(messages).some((call) => call.status._tag === "Approved")

/** One run's saves: each under the lease from the last saved version; the final one gives the lease up. */
export interface Run {
  readonly checkpoint: (messages: Messages.Messages) => Effect.Effect<void, ConversationStore.SaveError>
  /** Whether any save was tried. */
  readonly attempted: () => boolean
  /** Whether the lease went back with a save. */
  readonly released: () => boolean
}

/** The saves of a run that loaded `version` of conversation `id` under `lease`. */
export const make = (
  store: ConversationStore.Service,
  id: string,
  version: number,
  lease: ConversationStore.Lease
): Run => {
  let current = version
  let attempted = false
  let released = false
  return {
    attempted: () => attempted,
    released: () => released,
    checkpoint: (messages) =>
      Effect.suspend(() => {
        attempted = true
        const options = { expectedVersion: current, lease }
        const final = isFinal(messages)
        const saved = final ? ConversationStore.saveAndRelease(store, id, messages, options) : store.save(id, messages, options)
        return Effect.map(saved, (stored) => {
          current = stored.version
          if (final) released = true
        })
      })
  }
}

/**
 * `turn`, for a decision not saved yet (`decided`): when the turn ended without trying a single save (it
 * failed before its first step, or paused at once), its end (or, on failure, the decision) is saved
 * then, so a decision is never dropped by a turn that saved nothing.
 */
export const savingUnsaved = <E, R>(
  run: Run,
  decided: Messages.Messages,
  turn: Effect.Effect<ChatOutcome.Result, E, R>
): Effect.Effect<ChatOutcome.Result, E | ConversationStore.SaveError, R> =>
  Effect.matchCauseEffect(turn, {
    onSuccess: (result) => run.attempted() ? Effect.succeed(result) : Effect.as(run.checkpoint(result.messages), result),
    onFailure: (cause) =>
      run.attempted() || Cause.hasInterrupts(cause)
        ? Effect.failCause(cause)
        : Effect.andThen(Effect.ignore(run.checkpoint(decided)), Effect.failCause(cause))
  })
