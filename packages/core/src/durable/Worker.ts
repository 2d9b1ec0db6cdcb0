/**
 * Running turns of stored conversations, safely, on any number of workers.
 *
 * `resume(chat, id, decide)` is the one call a worker needs: it takes the
 * conversation's lease, a new one for this run (or fails with
 * `ConversationBusy` before running or changing anything, also when another
 * resume of the same owner in this process holds it), loads it, applies your decisions, resumes the turn
 * saving every state under the lease, renews the lease while the turn runs
 * and gives it back when the turn pauses, completes or fails. A call left
 * `Running` by a worker that died is only seen once its lease expired: it is
 * then reported interrupted, or run again if its tool is `idempotent`.
 *
 * In as few commits as that allows: the lease and the load in one step (the
 * store's `acquireAndLoad`), a decision that approves a call saved with the
 * call's `Running` (one commit, before the handler starts), and the state the
 * turn ends on saved with the lease's release (the store's `saveAndRelease`).
 *
 * A decide that ends a call waiting under a decision policy by writing its
 * status itself (`Rejected`, `Cancelled`, `Expired`) is held to that policy as
 * `Messages.reject` / `cancel` would be: a `DecisionNotAllowed` before
 * anything is saved or run (see docs/human-in-the-loop.md, "Who may decide").
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Chat from "../chat/Chat.js"
import * as ChatError from "../data/ChatError.js"
import type * as ChatOutcome from "../chat/ChatOutcome.js"
import * as ConversationStore from "./ConversationStore.js"
import * as LeasedRun from "./internal/leasedRun.js"
import * as StatusWrites from "../turn/StatusWrites.js"
import type * as Messages from "../turn/Messages.js"

/**
 * Settings of `resume`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options extends Omit<Chat.TurnOptions, "checkpoint"> {
  /**
   * A name for who runs the turn (default: a random id per call), e.g. one id per process. It names the
   * lease; it does not share it: two resumes of one conversation with the same owner are two runs, and
   * the second is `ConversationBusy`.
   */
  readonly owner?: string
  /** How long the lease lasts without renewal (default `defaultLeaseTtl`); it is renewed every third of it. */
  readonly leaseTtl?: Duration.Input
}

/**
 * The lease's length when none is given: a worker that dies holds its conversations this long.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultLeaseTtl: Duration.Duration = Duration.seconds(30)

/**
 * What `resume` may fail with besides the decisions' own errors.
 *
 * @category errors
 * @since 0.1.0
 */
export type ResumeError =
  | Chat.TurnError
  | ChatError.ConversationBusy
  | ChatError.ConversationNotFound
  | ChatError.CorruptConversation
  | ChatError.StoreError
  | ChatError.DecisionNotAllowed

/**
 * A fresh owner id.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeOwner = (): string => globalThis.crypto.randomUUID()

/**
 * Runs `effect` while renewing `lease`; losing the lease (another run took it, or it was released) stops `effect` with that error.
 *
 * @category utils
 * @since 0.1.0
 */
export const keepingLease = <A, E, R>(
  store: ConversationStore.Service,
  lease: ConversationStore.Lease,
  ttl: Duration.Input,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | ChatError.ConversationBusy | ChatError.StoreError, R> => renewing(store, lease, ttl, effect, () => false)

/** `keepingLease`, renewing no more once `released` says the lease went back with a save. */
const renewing = <A, E, R>(
  store: ConversationStore.Service,
  lease: ConversationStore.Lease,
  ttl: Duration.Input,
  effect: Effect.Effect<A, E, R>,
  released: () => boolean
): Effect.Effect<A, E | ChatError.ConversationBusy | ChatError.StoreError, R> => {
  const every = Duration.divideUnsafe(Duration.fromInputUnsafe(ttl), 3)
  const renewals = Effect.suspend(() => released() ? Effect.never : store.renew(lease, ttl)).pipe(
    // A store that fails for a moment is tried again until the lease would be at risk.
    Effect.retry({ while: (error) => error._tag === "StoreError", schedule: Schedule.spaced(Duration.divideUnsafe(every, 4)), times: 3 }),
    Effect.repeat(Schedule.spaced(every)),
    Effect.andThen(Effect.never)
  )
  return Effect.raceFirst(effect, Effect.delay(renewals, every))
}

/**
 * Loads conversation `id` under a lease, applies `decide` to it and resumes the turn, saving every
 * state; the lease is renewed while the turn runs and released when it ends. Grants scoped to a
 * conversation apply when they name `id` (`grantContext.conversation` defaults to it). A decide that rejects,
 * withdraws or expires a call under a decision policy by writing its status, past what the policy allows,
 * writes a result for one that never ran, or adds a call that is not `Proposed`: `DecisionNotAllowed`,
 * with nothing saved or run; the rule fixed on each stored call is kept whatever the decide wrote. Another run holding
 * the lease (another worker, or another resume in this process, whatever its owner):
 * `ConversationBusy`, with nothing run or changed.
 *
 * @example
 * ```ts
 * import { type Chat, Messages, Worker } from "@chat-ts/core"
 * import { Effect } from "effect"
 *
 * // A person approved call `callId` of stored conversation `id`: record it and resume the turn, under a
 * // lease (another worker resuming `id` meanwhile gets ConversationBusy and runs nothing).
 * // Needs a ConversationStore (ConversationStore.layerMemory, @chat-ts/sql, …).
 * const approveAndResume = <R>(chat: Chat.Service<R>, id: string, callId: string) =>
 *   Worker.resume(chat, id, (stored) => Effect.fromResult(Messages.approve(stored.messages, callId)), {
 *     owner: "worker-1"
 *   })
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const resume = <R, E = never, R2 = never>(
  chat: Chat.Service<R>,
  id: string,
  decide: (stored: ConversationStore.Stored) => Effect.Effect<Messages.Messages, E, R2>,
  options: Options = {}
): Effect.Effect<ChatOutcome.Result, ResumeError | E, R | R2 | ConversationStore.ConversationStore> =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const { leaseTtl, owner, ...turnOptions } = options
    const ttl = leaseTtl ?? defaultLeaseTtl
    // This run's saves, once it loaded: its release knows whether the last save gave the lease back.
    let saves: LeasedRun.Run | undefined
    return yield* Effect.acquireUseRelease(
      // The lease and the load, in one statement where the store can.
      ConversationStore.acquireAndLoad(store, id, owner ?? makeOwner(), ttl),
      ({ lease, stored }) =>
        Effect.gen(function*() {
          const decided = yield* decide(stored)
          // The rule fixed on each stored call stays on it; a "no" the decide wrote itself on a call under a
          // decision policy must be one the policy allows, and a result or a new call is not the decide's to write.
          const messages: Messages.Messages = decided === stored.messages
            ? decided
            : yield* Effect.fromResult(StatusWrites.bind(stored.messages, decided, yield* Clock.currentTimeMillis))
          const run = LeasedRun.make(store, id, stored.version, lease)
          saves = run
          const changed = messages !== stored.messages
          // A decision that approves a call is saved by the turn's first checkpoint, with the call `Running`,
          // before its handler starts (one commit for both). Any other is saved first: the turn may call the
          // model, or a strategy, before it saves.
          if (changed && !LeasedRun.startsWithSave(messages)) yield* run.checkpoint(messages)
          const turn = chat.resume(messages, {
            ...turnOptions,
            // A grant scoped to a conversation covers calls of the conversation stored under its id.
            grantContext: { conversation: id, ...turnOptions.grantContext },
            checkpoint: run.checkpoint
          })
          return yield* renewing(store, lease, ttl, changed ? LeasedRun.savingUnsaved(run, messages, turn) : turn, run.released)
        }),
      // The last save gave the lease back, or it is given back now; a lease that cannot be given back expires on its own.
      ({ lease }) => saves?.released() === true ? Effect.void : Effect.ignore(store.release(lease))
    )
  })

/**
 * Whether an error means "another run has it, or had it": try again later (after `expiresAt`
 * when a `ConversationBusy` gives one; at once, with the conversation loaded again, when it does
 * not: no run holds the lease now).
 *
 * @category guards
 * @since 0.1.0
 */
export const isBusy = (error: unknown): error is ChatError.ConversationBusy | ChatError.ConcurrentModification =>
  typeof error === "object" && error !== null && "_tag" in error &&
  (error._tag === "ConversationBusy" || error._tag === "ConcurrentModification")
