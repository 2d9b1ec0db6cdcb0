/**
 * The inbox service: pending calls across a `ConversationStore`, one
 * conversation with its context, and decisions taken on them.
 *
 * A decision is checked (the call still waits, the `If-Match` version, the
 * `Approver`'s policy, edited arguments against the tool's Schema) and saved
 * with the version it was loaded at, so of two people deciding the same call
 * one wins and the other gets a `Conflict`; nothing is stored on a refusal.
 * The decider and the time are recorded on the call's status.
 *
 * When no call waits for approval any more, the turn is resumed in the same
 * request through `Worker.resume`: under the store's lease, saving every
 * state, so a worker (or a second decider) resuming at the same time cannot
 * run a call twice. The response tells how the turn ended.
 *
 * Grants (see `Grant` in @chat-ts/core) are made and revoked the same way:
 * checked by the `Approver` (`decision: "grant"` / `"revoke-grant"`), saved at
 * the version they were made on. A grant made here is scoped to its
 * conversation (and to a user, when given) and covers only calls proposed
 * after it: the calls pending now stay pending.
 *
 * @since 0.1.0
 */
import type { Chat } from "@chat-ts/core"
import * as ChatError from "@chat-ts/core/ChatError"
import * as ConversationStore from "@chat-ts/core/ConversationStore"
import * as DecisionPolicy from "@chat-ts/core/DecisionPolicy"
import * as Grant from "@chat-ts/core/Grant"
import * as Messages from "@chat-ts/core/Messages"
import * as Worker from "@chat-ts/core/Worker"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Approver from "./Approver.js"
import * as InboxApi from "./InboxApi.js"
import * as InboxError from "./InboxError.js"

/** Something changed: a decision was stored or a turn went on (`id`: the conversation), or the pending set moved. */
export interface Change {
  readonly id?: string
}

/** Filters and page of `list`. */
export type ListQuery = typeof InboxApi.ListQuery.Type

/** The inbox. */
export interface Service {
  /**
   * Pending calls, one page of the store's pending conversations at a time, filtered; with `viewer`,
   * each says what that person may do with it (`PendingCall.may`).
   */
  readonly list: (query: ListQuery, viewer?: Approver.Identity) => Effect.Effect<InboxApi.PendingPage, InboxError.BadRequest | InboxError.StoreFailure>
  /** One conversation; with `viewer`, its pending calls say what that person may do with them (`PendingCall.may`). */
  readonly conversation: (id: string, viewer?: Approver.Identity) => Effect.Effect<InboxApi.ConversationView, InboxError.NotFound | InboxError.StoreFailure>
  /** Takes a decision on a call as `identity`; `ifMatch` is the version it was taken on. */
  readonly decide: (request: {
    readonly identity: Approver.Identity
    readonly conversationId: string
    readonly callId: string
    readonly decision: InboxApi.DecisionPayload
    readonly ifMatch?: number | undefined
  }) => Effect.Effect<InboxApi.Decided, DecideError>
  /** Makes a grant for conversation `conversationId` as `identity` (its calls pending now stay pending). */
  readonly grant: (request: {
    readonly identity: Approver.Identity
    readonly conversationId: string
    readonly grant: InboxApi.GrantPayload
    readonly ifMatch?: number | undefined
  }) => Effect.Effect<InboxApi.GrantStored, GrantError>
  /** Revokes grant `grantId` of conversation `conversationId` as `identity`. */
  readonly revokeGrant: (request: {
    readonly identity: Approver.Identity
    readonly conversationId: string
    readonly grantId: string
    readonly reason?: string | undefined
    readonly ifMatch?: number | undefined
  }) => Effect.Effect<InboxApi.GrantStored, Exclude<GrantError, InboxError.InvalidGrant>>
  /** Changes as they happen: decisions taken here, and (polled every `pollInterval`) the store's pending set. */
  readonly changes: Stream.Stream<Change>
}

/** What `grant` and `revokeGrant` may fail with. */
export type GrantError =
  | InboxError.Forbidden
  | InboxError.NotFound
  | InboxError.Conflict
  | InboxError.InvalidGrant
  | InboxError.StoreFailure

/** What `decide` may fail with. */
export type DecideError =
  | InboxError.Forbidden
  | InboxError.NotFound
  | InboxError.Conflict
  | InboxError.InvalidEdit
  | InboxError.StoreFailure

/** The inbox in use. */
export class Inbox extends Context.Service<Inbox, Service>()("@chat-ts/inbox/Inbox") {}

/** Settings of the inbox. */
export interface Options<R> {
  /** The chat whose tools the calls belong to: it checks edits and resumes turns. */
  readonly chat: Chat.Service<R>
  /** How often `changes` looks at the store for new pauses (default 2 seconds). */
  readonly pollInterval?: Duration.Input
  /** Settings of the resumed turns (lease length, owner…). */
  readonly resume?: Worker.Options
}

const storeFailure = (error: { readonly _tag: string; readonly message: string }) =>
  new InboxError.StoreFailure({ message: `${error._tag}: ${error.message}` })

const waiting = (call: Messages.ToolCallPart): "approval" | "scheduled" | undefined =>
  call.status._tag === "AwaitingApproval" ? "approval" : call.status._tag === "Scheduled" ? "scheduled" : undefined

const deadlineOf = (call: Messages.ToolCallPart): number | undefined =>
  call.status._tag === "AwaitingApproval" ? call.status.expiresAt : call.status._tag === "Scheduled" ? call.status.at : undefined

const outcomeOf = (call: Messages.ToolCallPart): string | undefined => {
  const projected = Messages.projectToolCall(call)
  return projected.result?.text
}

const encodeMessages = Schema.encodeSync(Messages.Messages)

/** Everyone who asked for a call (each id once, in order), and whether a message it answers has no sender. */
const requestersOf = (
  messages: Messages.Messages,
  call: Messages.ToolCallPart
): { readonly requesters?: ReadonlyArray<string>; readonly requesterUnknown?: boolean } => {
  const asked = DecisionPolicy.requestersOf(messages, call.id)
  const ids = [...new Set(asked.flatMap((requester) => requester === undefined ? [] : [requester.id]))]
  return { ...(ids.length === 0 ? {} : { requesters: ids }), ...(asked.some((requester) => requester === undefined) ? { requesterUnknown: true } : {}) }
}

/** What `viewer` may do with a waiting call under its decision policy (the checks core makes when they do it). */
const permissions = (messages: Messages.Messages, call: Messages.ToolCallPart, viewer: Approver.Identity) => {
  const decider = Approver.deciderOf(viewer)
  const permission = (verdict: ReturnType<typeof DecisionPolicy.mayDecide>) =>
    verdict.allowed ? { allowed: true } : { allowed: false, detail: verdict.detail }
  return {
    approve: permission(DecisionPolicy.mayDecide(messages, call, "approve", decider)),
    edit: permission(DecisionPolicy.mayDecide(messages, call, "edit", decider)),
    reject: permission(DecisionPolicy.mayDecide(messages, call, "reject", decider)),
    cancel: permission(DecisionPolicy.mayWithdraw(messages, call, decider))
  }
}

/** A refusal of the inbox's. */
type Refused = InboxError.InvalidEdit | InboxError.Conflict | InboxError.NotFound | InboxError.Forbidden

/** Why `Messages` refused a decision, as the inbox's typed error, by the kinds of `ChatError.refusalOf`. */
const refusals: { readonly [Kind in ChatError.Refusal["kind"]]: (refused: ChatError.Refusal) => Refused } = {
  forbidden: (refused) => new InboxError.Forbidden({ message: refused.message }),
  invalid_edit: (refused) => new InboxError.InvalidEdit({ message: refused.message, problems: refused.problems }),
  not_found: (refused) => new InboxError.NotFound({ message: refused.message }),
  already_decided: ({ status }) => new InboxError.Conflict({ message: `the call no longer waits for a decision (${status})`, status })
}

const refusal = (error: ChatError.ResolveError): Refused => {
  const refused = ChatError.refusalOf(error)
  return refusals[refused.kind](refused)
}

/** A grant as the page shows it, live or not at `now`. */
const grantView = (grant: Messages.Grant, now: number): InboxApi.GrantView =>
  new InboxApi.GrantView({
    id: grant.id,
    tool: grant.tool,
    ...(grant.where === undefined ? {} : { where: grant.where }),
    ...(grant.scope?.conversation === undefined ? {} : { conversation: grant.scope.conversation }),
    ...(grant.scope?.user === undefined ? {} : { user: grant.scope.user }),
    by: grant.by,
    at: grant.at,
    expiresAt: grant.expiresAt,
    ...(grant.reason === undefined ? {} : { reason: grant.reason }),
    ...(grant.revoked === undefined ? {} : { revoked: grant.revoked }),
    live: Grant.isLive(grant, now)
  })

/** Makes the inbox over the store in context. */
export const make = <R>(options: Options<R>): Effect.Effect<Service, never, ConversationStore.ConversationStore | Approver.Approver | R> =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const approver = yield* Approver.Approver
    const context = yield* Effect.context<ConversationStore.ConversationStore | R>()
    const chat = options.chat
    const tools = new Map(chat.tools.map((tool) => [tool.name, tool]))
    const hub = yield* PubSub.unbounded<Change>()
    const pollInterval = options.pollInterval ?? Duration.seconds(2)

    const pendingOf = (stored: ConversationStore.Stored, viewer?: Approver.Identity): ReadonlyArray<InboxApi.PendingCall> =>
      Messages.toolCalls(stored.messages).flatMap((call) => {
        const reason = waiting(call)
        if (reason === undefined) return []
        const tool = tools.get(call.name)
        const deadline = deadlineOf(call)
        const policy = DecisionPolicy.of(call)
        const requester = DecisionPolicy.requesterOf(stored.messages, call.id)
        const progress = DecisionPolicy.progress(call)
        return [
          new InboxApi.PendingCall({
            conversationId: stored.id,
            version: stored.version,
            updatedAt: stored.updatedAt,
            id: call.id,
            tool: call.name,
            arguments: call.arguments,
            reason,
            ...(tool === undefined ? {} : { description: tool.description, parameters: tool.parameters }),
            ...(deadline === undefined ? {} : { deadline }),
            ...(call.status._tag === "AwaitingApproval" && call.status.review !== undefined ? { review: call.status.review } : {}),
            ...(policy === undefined ? {} : { policy, quorum: progress.quorum, votes: progress.votes.map(({ at, by }) => ({ at, by })) }),
            ...(requester === undefined ? {} : { requester: requester.id }),
            ...requestersOf(stored.messages, call),
            ...(viewer === undefined ? {} : { may: permissions(stored.messages, call, viewer) })
          })
        ]
      })

    const load = (id: string) =>
      store.load(id).pipe(
        Effect.mapError(storeFailure),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new InboxError.NotFound({ message: `no conversation '${id}'` })),
          onSome: Effect.succeed
        }))
      )

    const list: Service["list"] = (query, viewer) =>
      Effect.gen(function*() {
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const options = {
          ...(query.limit === undefined ? {} : { limit: query.limit }),
          ...(query.cursor === undefined ? {} : { cursor: query.cursor })
        }
        // The stores' own check of a page: a forged cursor is the client's mistake, not the store's.
        yield* ConversationStore.pageOptions(options).pipe(Effect.mapError((error) => new InboxError.BadRequest({ message: error.detail })))
        const page = yield* store.listPending(options).pipe(Effect.mapError(storeFailure))
        const loaded = yield* Effect.forEach(page.items, (item) =>
          store.load(item.id).pipe(
            Effect.map(Option.toArray),
            // A conversation damaged in the store is left out of the list (its detail reports it).
            Effect.catchTag("CorruptConversation", () => Effect.succeed([])),
            Effect.mapError(storeFailure)
          ), { concurrency: 8 })
        const items = loaded.flat().flatMap((stored) => pendingOf(stored, viewer)).filter((call) =>
          (query.tool === undefined || call.tool === query.tool) &&
          (query.minAge === undefined || now - call.updatedAt >= query.minAge) &&
          (query.deadlineBefore === undefined || (call.deadline !== undefined && call.deadline < query.deadlineBefore))
        )
        return new InboxApi.PendingPage({ items, ...(page.cursor === undefined ? {} : { cursor: page.cursor }) })
      })

    const conversation: Service["conversation"] = (id, viewer) =>
      Effect.map(Effect.zip(load(id), Effect.clockWith((clock) => clock.currentTimeMillis)), ([stored, now]) =>
        new InboxApi.ConversationView({
          id,
          version: stored.version,
          updatedAt: stored.updatedAt,
          messages: encodeMessages(stored.messages),
          calls: Messages.toolCalls(stored.messages).map((call) => {
            const status = call.status
            const outcome = outcomeOf(call)
            return new InboxApi.CallView({
              id: call.id,
              tool: call.name,
              arguments: Messages.effectiveArguments(call),
              status: status._tag,
              ...("decision" in status && status.decision !== undefined ? { decision: status.decision } : {}),
              ...(status._tag === "Cancelled" && status.cancellation !== undefined ? { cancellation: status.cancellation } : {}),
              ...(outcome === undefined ? {} : { outcome })
            })
          }),
          pending: pendingOf(stored, viewer),
          grants: Grant.all(stored.messages).map(({ grant }) => grantView(grant, now))
        }))

    /**
     * The decided messages (nothing stored yet), the decision checked against the call's policy and
     * recorded (who, when, the arguments' hash) by core: refusals are typed, an invalid edit is a 422.
     */
    const apply = (
      messages: Messages.Messages,
      callId: string,
      decision: InboxApi.DecisionPayload,
      identity: Approver.Identity
    ): Effect.Effect<Messages.Messages, InboxError.InvalidEdit | InboxError.Conflict | InboxError.NotFound | InboxError.Forbidden> => {
      // A cancellation records who and when as its own audit entry (`cancellation`), not as a decision on the call.
      if (decision._tag === "Cancel") {
        return Effect.flatMap(Clock.currentTimeMillis, (at) => {
          const options = {
            by: "operator" as const,
            // Roles kept: under a decision policy they may be what lets this person withdraw it (its `reject` rule).
            cancellation: { by: identity.id, at, ...(identity.roles === undefined ? {} : { roles: identity.roles }) },
            ...(decision.reason === undefined ? {} : { reason: decision.reason })
          }
          return Effect.mapError(Effect.fromResult(Messages.cancel(messages, callId, options)), refusal)
        })
      }
      const decider = Approver.deciderOf(identity)
      const decided = decision._tag === "Reject"
        ? chat.reject(messages, callId, decision.reason, { decider })
        : chat.approve(messages, callId, decision.arguments, { decider })
      return Effect.mapError(decided, refusal)
    }

    const resumeTurn = (id: string): Effect.Effect<InboxApi.Decided["turn"] | { readonly failed: string }> =>
      Worker.resume(chat, id, (stored) => Effect.succeed(stored.messages), options.resume).pipe(
        Effect.map((result) => result.outcome._tag === "Complete" ? "complete" as const : "paused" as const),
        Effect.catch((error) =>
          Effect.succeed(Worker.isBusy(error) ? "busy" as const : { failed: `${error._tag}: ${error.message}` })
        ),
        Effect.provide(context)
      )

    const decide: Service["decide"] = ({ callId, conversationId, decision, identity, ifMatch }) =>
      Effect.gen(function*() {
        const stored = yield* load(conversationId)
        if (ifMatch !== undefined && ifMatch !== stored.version) {
          return yield* new InboxError.Conflict({
            message: `the conversation is at version ${stored.version}, not ${ifMatch}: someone decided first`,
            version: stored.version
          })
        }
        const call = Messages.findTool(stored.messages, callId)
        if (call === undefined) return yield* new InboxError.NotFound({ message: `no call '${callId}' in this conversation` })
        if (!Messages.isAwaitingDecision(call)) {
          return yield* new InboxError.Conflict({
            message: `the call no longer waits for a decision (${call.status._tag})`,
            version: stored.version,
            status: call.status._tag
          })
        }
        const kind = decision._tag === "Reject" ? "reject" : decision._tag === "Cancel" ? "cancel" : decision.arguments === undefined ? "approve" : "edit"
        const allowed = yield* approver.authorize(identity, {
          conversationId,
          callId,
          tool: call.name,
          arguments: kind === "edit" ? (JSON.stringify(decision._tag === "Approve" ? decision.arguments : undefined) ?? "") : call.arguments,
          decision: kind
        })
        if (!allowed) return yield* new InboxError.Forbidden({ message: `${identity.id} may not ${kind} a call of '${call.name}'` })
        const next = yield* apply(stored.messages, callId, decision, identity)
        const saved = yield* store.save(conversationId, next, { expectedVersion: stored.version }).pipe(
          Effect.catchTags({
            ConcurrentModification: (error) =>
              Effect.fail(new InboxError.Conflict({
                message: "someone else saved this conversation first",
                ...(error.actualVersion === undefined ? {} : { version: error.actualVersion })
              })),
            ConversationBusy: () => Effect.fail(new InboxError.Conflict({ message: "a worker holds this conversation" }))
          }),
          Effect.mapError((error) => error._tag === "Conflict" ? error : storeFailure(error))
        )
        yield* PubSub.publish(hub, { id: conversationId })
        if (Messages.toolCalls(next).some((c) => c.status._tag === "AwaitingApproval")) {
          return new InboxApi.Decided({ version: saved.version, turn: "waiting" })
        }
        const turn = yield* resumeTurn(conversationId)
        yield* PubSub.publish(hub, { id: conversationId })
        const after = yield* store.load(conversationId).pipe(
          Effect.map(Option.match({ onNone: () => saved.version, onSome: (s) => s.version })),
          Effect.orElseSucceed(() => saved.version)
        )
        return typeof turn === "string"
          ? new InboxApi.Decided({ version: after, turn })
          : new InboxApi.Decided({ version: after, turn: "failed", detail: turn.failed })
      })

    /** Loads a conversation at the `If-Match` version (when given). */
    const loadAt = (id: string, ifMatch: number | undefined) =>
      Effect.flatMap(load(id), (stored) =>
        ifMatch !== undefined && ifMatch !== stored.version
          ? Effect.fail(new InboxError.Conflict({ message: `the conversation is at version ${stored.version}, not ${ifMatch}: someone changed it first`, version: stored.version }))
          : Effect.succeed(stored))

    /** Saves messages at the version they were loaded at: a race lost is a `Conflict`. */
    const saveAt = (id: string, messages: Messages.Messages, version: number) =>
      store.save(id, messages, { expectedVersion: version }).pipe(
        Effect.catchTags({
          ConcurrentModification: (error) =>
            Effect.fail(new InboxError.Conflict({
              message: "someone else saved this conversation first",
              ...(error.actualVersion === undefined ? {} : { version: error.actualVersion })
            })),
          ConversationBusy: () => Effect.fail(new InboxError.Conflict({ message: "a worker holds this conversation" }))
        }),
        Effect.mapError((error) => error._tag === "Conflict" ? error : storeFailure(error)),
        Effect.tap(() => PubSub.publish(hub, { id }))
      )

    const authorizeGrant = (identity: Approver.Identity, request: Approver.Request) =>
      Effect.flatMap(approver.authorize(identity, request), (allowed) =>
        allowed ? Effect.void : Effect.fail(new InboxError.Forbidden({ message: `${identity.id} may not ${request.decision} for '${request.tool}'` })))

    const grant: Service["grant"] = ({ conversationId, grant: payload, identity, ifMatch }) =>
      Effect.gen(function*() {
        const stored = yield* loadAt(conversationId, ifMatch)
        const id = payload.id ?? `grant-${globalThis.crypto.randomUUID()}`
        yield* authorizeGrant(identity, {
          conversationId,
          callId: id,
          tool: payload.tool,
          arguments: JSON.stringify(payload.where ?? null) ?? "null",
          decision: "grant"
        })
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const next = yield* Effect.fromResult(Messages.grant(stored.messages, {
          id,
          tool: payload.tool,
          ...(payload.where === undefined ? {} : { where: payload.where as Grant.Predicate }),
          scope: { conversation: conversationId, ...(payload.user === undefined ? {} : { user: payload.user }) },
          by: identity.id,
          at: now,
          expiresAfter: payload.expiresAfterMillis,
          ...(payload.reason === undefined ? {} : { reason: payload.reason })
        })).pipe(Effect.mapError((error) =>
          error._tag === "DuplicateGrant"
            ? new InboxError.Conflict({ message: error.message, version: stored.version })
            : new InboxError.InvalidGrant({ message: error.message })
        ))
        const saved = yield* saveAt(conversationId, next, stored.version)
        return new InboxApi.GrantStored({ version: saved.version, grant: grantView(Grant.find(next, id)!.grant, now) })
      })

    const revokeGrant: Service["revokeGrant"] = ({ conversationId, grantId, identity, ifMatch, reason }) =>
      Effect.gen(function*() {
        const stored = yield* loadAt(conversationId, ifMatch)
        const found = Grant.find(stored.messages, grantId)
        if (found === undefined) return yield* new InboxError.NotFound({ message: `no grant '${grantId}' in this conversation` })
        yield* authorizeGrant(identity, {
          conversationId,
          callId: grantId,
          tool: found.grant.tool,
          arguments: JSON.stringify(found.grant.where ?? null) ?? "null",
          decision: "revoke-grant"
        })
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const next = yield* Effect.fromResult(
          Messages.revokeGrant(stored.messages, grantId, { by: identity.id, at: now, ...(reason === undefined ? {} : { reason }) })
        ).pipe(Effect.mapError((error) => new InboxError.Conflict({ message: error.message, version: stored.version })))
        const saved = yield* saveAt(conversationId, next, stored.version)
        return new InboxApi.GrantStored({ version: saved.version, grant: grantView(Grant.find(next, grantId)!.grant, now) })
      })

    /** The store's pending set, as a fingerprint that changes when something pauses or is decided anywhere. */
    const fingerprint = store.listPending({ limit: ConversationStore.maxPageSize }).pipe(
      Effect.map((page) => page.items.map((item) => `${item.id}@${item.version}`).join(",")),
      Effect.orElseSucceed(() => "")
    )
    const polled = Stream.fromEffectSchedule(fingerprint, Schedule.spaced(pollInterval)).pipe(
      Stream.changes,
      Stream.drop(1),
      Stream.map((): Change => ({}))
    )
    const changes = Stream.merge(Stream.fromPubSub(hub), polled)

    return { list, conversation, decide, grant, revokeGrant, changes }
  })

/** A layer providing the inbox (it needs the store and the approver). */
export const layer = <R>(options: Options<R>): Layer.Layer<Inbox, never, ConversationStore.ConversationStore | Approver.Approver | R> =>
  Layer.effect(Inbox, make(options))

/** Parses an `If-Match` header: a version number, bare or quoted as an entity tag. Anything else is a `Conflict`. */
export const parseIfMatch = (header: string | undefined): Result.Result<number | undefined, InboxError.Conflict> => {
  if (header === undefined) return Result.succeed(undefined)
  const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header)
  return match === null
    ? Result.fail(new InboxError.Conflict({ message: `If-Match must be a conversation version, not ${JSON.stringify(header.slice(0, 40))}` }))
    : Result.succeed(Number(match[1]))
}
