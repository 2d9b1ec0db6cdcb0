/**
 * The `worker` path of `Trace.record`: every run of the turn goes through
 * `Worker.resume`, as production resumes, with the agent's store and its
 * leases, on the TestClock. Each process sees the store through a view that
 * counts its saves: a crash kills the process just before or just after its
 * `checkpoint`-th save (it saves, renews and releases nothing more, so its
 * lease stays held). The next process tries at once and must find the
 * conversation busy (and run nothing); once the dead lease's time has passed on
 * the TestClock it takes over. The calls the dead process left `Running` are
 * recorded as lost in the crash (core reports them `Failed` with
 * `Turn.interruptedError`, or runs them again when their tool is idempotent),
 * and so are the decisions that reached no save (`LostInCrash`). Once the next
 * process holds the lease, the dead one comes back for a moment (a stalled
 * process, not a dead one) and makes the save it was making, under its old
 * lease: the store must refuse it.
 * Decisions and steering messages are taken on the conversation as loaded, by
 * the agent's decision path and the process's chat, and reach the store
 * through the `decide` of the next `Worker.resume` (checked by it as any
 * decide is).
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as TestClock from "effect/testing/TestClock"
import type * as Chat from "../../chat/Chat.js"
import * as ConversationStore from "../../durable/ConversationStore.js"
import * as Worker from "../../durable/Worker.js"
import * as Messages from "../../turn/Messages.js"
import type * as Agent from "../Agent.js"

/**
 * The id the scenario's conversation is stored under.
 *
 * @internal
 */
export const conversation = "scenario"

/**
 * The lease each worker takes (core's default): a dead process holds the conversation this long.
 *
 * @internal
 */
export const leaseTtl: Duration.Duration = Worker.defaultLeaseTtl

/**
 * The refusal a decision gets when the process that carried it died before any save.
 *
 * @internal
 */
export const lostInCrash = "LostInCrash"

/**
 * One `Worker.resume` of the worker path: its process (`process-<n>` owns its leases), when it began
 * and ended (`seq`, `end`), the clock then (`at`), how it ended, the lease it took (and whether it gave it
 * back), how many saves it tried and how many were written.
 *
 * @internal
 */
export interface Attempt {
  readonly seq: number
  readonly end: number
  readonly process: number
  readonly at: number
  readonly outcome: "Ran" | "Busy" | "Crashed" | "Failed"
  readonly error?: string | undefined
  readonly lease?: { readonly token: string; readonly expiresAt: number } | undefined
  readonly released: boolean
  readonly saves: number
  readonly written: number
}

/**
 * A call a process left `Running` when it died: whether its handler had started in that process, and its
 * status once the next process took over (`Failed`: reported interrupted; `Completed`: run again, idempotent).
 *
 * @internal
 */
export interface Lost {
  readonly seq: number
  readonly id: string
  readonly name: string
  readonly process: number
  readonly started: boolean
  readonly then: string
}

/**
 * The save a dead process makes late, under its old lease, once process `holder` took the
 * conversation over: `refused` with the store's error tag, or accepted (`undefined`).
 *
 * @internal
 */
export interface Late {
  readonly seq: number
  readonly process: number
  readonly holder: number
  readonly refused?: string | undefined
}

/**
 * What the worker path recorded: every `Worker.resume`, every call lost in a crash, every late save.
 *
 * @internal
 */
export interface Record {
  readonly attempts: ReadonlyArray<Attempt>
  readonly lost: ReadonlyArray<Lost>
  readonly late: ReadonlyArray<Late>
}

/**
 * What the worker path keeps while a scenario plays.
 *
 * @internal
 */
export interface State {
  readonly attempts: Array<Attempt>
  readonly lost: Array<Lost>
  readonly late: Array<Late>
  /** The messages a dying process was saving (or last saved), and its lease: what it saves late. */
  dying: { readonly process: number; readonly messages: Messages.Messages; readonly lease: ConversationStore.Lease } | undefined
  /** The messages as last loaded from the store: decisions taken since are what the next decide writes. */
  loaded: Messages.Messages | undefined
  /** When they were loaded (`seq`): the decisions taken since ride on the next `Worker.resume`. */
  loadedSeq: number
}

/**
 * A fresh state.
 *
 * @internal
 */
export const makeState = (): State => ({ attempts: [], lost: [], late: [], dying: undefined, loaded: undefined, loadedSeq: 0 })

/**
 * A decision as `Trace` records it.
 *
 * @internal
 */
export interface DecisionRecord extends Agent.Decision {
  readonly seq: number
  readonly at: number
  readonly accepted: boolean
  readonly refusal?: string | undefined
}

/**
 * What the worker path needs of the scenario being played (`Trace`'s recording).
 *
 * @internal
 */
export interface Host {
  readonly agent: Agent.Agent
  readonly store: ConversationStore.Service
  readonly runs: ReadonlyArray<{ readonly seq: number; readonly id: string }>
  readonly decisions: Array<DecisionRecord>
  readonly saved: Array<{ readonly seq: number; readonly process: number; readonly messages: Messages.Messages }>
  readonly states: Array<{ readonly seq: number; readonly messages: Messages.Messages }>
  readonly log: Array<string>
  readonly worker: State
  readonly makeChat: Effect.Effect<Chat.Service<any, any>>
  chat: Chat.Service<any, any>
  process: number
  messages: Messages.Messages
  version: number
  next(): number
  load(): Effect.Effect<Messages.Messages>
  ended(outcome: "Complete" | "Paused" | "Failed" | "Crashed", state: Messages.Messages, error?: string): void
}

/**
 * Where the next run's process dies: just before or just after its `checkpoint`-th save.
 *
 * @internal
 */
export interface CrashAt {
  readonly checkpoint: number
  readonly before: boolean
}

/** One process's view of the store: its saves counted and recorded, and nothing at all once it died. */
interface View {
  /** The messages of the last save it made or tried. */
  readonly tried: () => Messages.Messages | undefined
  readonly service: ConversationStore.Service
  readonly dead: () => boolean
  readonly saves: () => number
  readonly written: () => number
  readonly lease: () => ConversationStore.Lease | undefined
  readonly released: () => boolean
}

const view = (host: Host, crash: CrashAt | undefined): View => {
  const inner = host.store
  let dead = false
  let saves = 0
  let written = 0
  let lease: ConversationStore.Lease | undefined
  let released = false
  let tried: Messages.Messages | undefined
  const die = Effect.suspend(() => {
    dead = true
    return Effect.interrupt
  })
  const saving = (
    messages: Messages.Messages,
    write: () => Effect.Effect<ConversationStore.Stored, ConversationStore.SaveError>,
    releases: boolean
  ): Effect.Effect<ConversationStore.Stored, ConversationStore.SaveError> =>
    Effect.suspend(() => {
      // A dead process saves nothing more (the chat's own clean-up on interruption included).
      if (dead) return Effect.interrupt
      saves += 1
      tried = messages
      const count = saves
      if (crash !== undefined && crash.before && crash.checkpoint === count) return die
      return Effect.flatMap(write(), (stored) => {
        written += 1
        if (releases) released = true
        host.saved.push({ seq: host.next(), process: host.process, messages })
        host.states.push({ seq: host.next(), messages })
        return crash !== undefined && !crash.before && crash.checkpoint === count ? die : Effect.succeed(stored)
      })
    })
  const took = (taken: ConversationStore.Lease) =>
    Effect.suspend(() => {
      const first = lease === undefined
      lease = taken
      released = false
      return first ? lateSave(host) : Effect.void
    })
  const saveAndRelease = inner.saveAndRelease
  const acquireAndLoad = inner.acquireAndLoad
  const service: ConversationStore.Service = {
    ...inner,
    save: (id, messages, options) => saving(messages, () => inner.save(id, messages, options), false),
    // Without its own, `ConversationStore.saveAndRelease` saves, then releases, through this view.
    ...(saveAndRelease === undefined ? {} : {
      saveAndRelease: (id, messages, options) => saving(messages, () => saveAndRelease(id, messages, options), true)
    }),
    acquire: (id, owner, ttl) => Effect.tap(inner.acquire(id, owner, ttl), took),
    ...(acquireAndLoad === undefined ? {} : {
      acquireAndLoad: (id, owner, ttl) => Effect.tap(acquireAndLoad(id, owner, ttl), ({ lease }) => took(lease))
    }),
    // A dead process renews nothing (its lease runs out) and gives nothing back.
    renew: (held, ttl) => dead ? Effect.never : Effect.tap(inner.renew(held, ttl), (renewed) => Effect.sync(() => (lease = renewed))),
    release: (held) => dead ? Effect.void : Effect.tap(inner.release(held), () => Effect.sync(() => (released = true)))
  }
  return { service, dead: () => dead, saves: () => saves, written: () => written, lease: () => lease, released: () => released, tried: () => tried }
}

/**
 * The dead process, once the current one took its lease, saves what it was saving under its old lease,
 * on the version the store holds (nothing saved since it died): only the lease can refuse it.
 */
const lateSave = (host: Host): Effect.Effect<void> =>
  Effect.suspend(() => {
    const dying = host.worker.dying
    if (dying === undefined || dying.process === host.process) return Effect.void
    host.worker.dying = undefined
    return Effect.map(
      Effect.exit(host.store.save(conversation, dying.messages, { expectedVersion: host.version, lease: dying.lease })),
      (exit) => {
        const refused = Exit.isSuccess(exit) ? undefined : errorTag(failureOf(exit.cause))
        host.worker.late.push({ seq: host.next(), process: dying.process, holder: host.process, refused })
        host.log.push(`process ${dying.process} saves late under its old lease while process ${host.process} holds it -> ${refused === undefined ? "accepted" : `refused (${refused})`}`)
      }
    )
  })

const errorTag = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : String(error)

const failureOf = (cause: Cause.Cause<unknown>): unknown => {
  const error = cause.reasons.find((reason) => reason._tag === "Fail")
  return error?._tag === "Fail" ? error.error : cause
}

/** The decisions taken since the last load, between `from` and `to`, never saved: refused with `refusal`. */
const unsaved = (host: Host, to: number, refusal: string): void => {
  host.decisions.forEach((decision, i) => {
    if (!decision.accepted || decision.seq <= host.worker.loadedSeq || decision.seq >= to) return
    host.decisions[i] = { ...decision, accepted: false, refusal }
    host.log.push(`${decision.kind} ${decision.id} by ${decision.by.id} reached no save -> ${refusal}`)
  })
}

/** The messages are as the store has them now. */
const loaded = (host: Host): void => {
  host.worker.loaded = host.messages
  host.worker.loadedSeq = host.next()
}

/** What one attempt ended with: the busy error's lease end, when the lease was held. */
interface Tried {
  readonly outcome: Attempt["outcome"]
  readonly until?: number | undefined
}

/**
 * The services the agent's chat needs (its `layer`), provided by `Trace` around the whole run.
 *
 * @internal
 */
export type Needs = any

/** One `Worker.resume` by the current process, recorded. */
const attempt = (host: Host, crash: CrashAt | undefined): Effect.Effect<Tried, never, Needs> =>
  Effect.gen(function*() {
    const process = host.process
    const store = view(host, crash)
    const last = host.worker.loaded
    // The decisions and steering taken since the last load, on the version they were taken on.
    const decided = last !== undefined && host.messages !== last ? host.messages : undefined
    const version = host.version
    const decide = (stored: ConversationStore.Stored) =>
      decided === undefined
        ? Effect.succeed(stored.messages)
        : stored.version === version
        ? Effect.succeed(decided)
        : Effect.die(new Error(`the decisions were taken on version ${version}, but the store gave version ${stored.version}`))
    const seq = host.next()
    const at = yield* Clock.currentTimeMillis
    const exit = yield* Effect.exit(
      Worker.resume(host.chat, conversation, decide, { owner: `process-${process}`, leaseTtl }).pipe(
        Effect.provideService(ConversationStore.ConversationStore, store.service)
      )
    )
    const failure = Exit.isFailure(exit) && !store.dead() ? failureOf(exit.cause) : undefined
    const busy = failure !== undefined && errorTag(failure) === "ConversationBusy"
    const outcome: Attempt["outcome"] = store.dead() ? "Crashed" : Exit.isSuccess(exit) ? "Ran" : busy ? "Busy" : "Failed"
    const lease = store.lease()
    host.worker.attempts.push({
      seq,
      end: host.next(),
      process,
      at,
      outcome,
      ...(failure === undefined ? {} : { error: errorTag(failure) }),
      ...(lease === undefined ? {} : { lease: { token: lease.token, expiresAt: lease.expiresAt } }),
      released: store.released(),
      saves: store.saves(),
      written: store.written()
    })
    if (busy) {
      const until = (failure as { readonly expiresAt?: unknown }).expiresAt
      host.log.push(`process ${process}: ConversationBusy${typeof until === "number" ? ` (held until ${until})` : ""}, ran nothing`)
      return { outcome, until: typeof until === "number" ? until : undefined }
    }
    if (store.written() === 0 && outcome !== "Ran") unsaved(host, seq, outcome === "Crashed" ? lostInCrash : errorTag(failure))
    const tried = store.tried()
    if (outcome === "Crashed" && lease !== undefined && tried !== undefined && !store.released()) {
      host.worker.dying = { process, messages: tried, lease }
    }
    if (outcome === "Crashed") return { outcome }
    const state = yield* host.load()
    host.ended(Exit.isSuccess(exit) ? exit.value.outcome._tag : "Failed", state, failure === undefined ? undefined : errorTag(failure))
    loaded(host)
    return { outcome }
  })

const runningCalls = (messages: Messages.Messages): ReadonlyArray<Messages.ToolCallPart> =>
  messages.flatMap((message) => Messages.toolCallsOf(message).filter((call) => call.status._tag === "Running"))

/** The process died: the next one finds the lease busy, waits for it to run out on the TestClock, and takes over. */
const takeOver = (host: Host): Effect.Effect<void, never, Needs> =>
  Effect.gen(function*() {
    const dead = host.process
    const stored = yield* host.load()
    host.ended("Crashed", stored)
    loaded(host)
    const running = runningCalls(stored)
    const died = host.worker.attempts.at(-1)?.seq ?? 0
    host.process += 1
    host.chat = yield* host.makeChat
    const takeover = host.next()
    const first = yield* attempt(host, undefined)
    if (first.outcome === "Busy") {
      const now = yield* Clock.currentTimeMillis
      const by = Math.max(1, (first.until ?? now + Duration.toMillis(leaseTtl)) - now)
      yield* TestClock.adjust(`${by} millis`)
      host.log.push(`clock +${by} ms -> ${now + by} (the dead lease ran out)`)
      yield* attempt(host, undefined)
    }
    for (const call of running) {
      const started = host.runs.some((run) => run.id === call.id && run.seq > died && run.seq < takeover)
      const then = Messages.findTool(host.messages, call.id)?.status._tag ?? "missing"
      host.worker.lost.push({ seq: host.next(), id: call.id, name: call.name, process: dead, started, then })
      host.log.push(`${call.id} (${call.name}) lost in the crash of process ${dead}${started ? " after its handler started" : ""} -> ${then}`)
    }
  })

/**
 * One run of the turn through `Worker.resume`; a crash plays the next process's takeover.
 *
 * @internal
 */
export const turn = (host: Host, crash: CrashAt | undefined): Effect.Effect<void, never, Needs> =>
  Effect.flatMap(attempt(host, crash), ({ outcome }) => outcome === "Crashed" ? takeOver(host) : Effect.void)

/**
 * What the worker path recorded, for the trace.
 *
 * @internal
 */
export const record = (state: State): Record => ({ attempts: state.attempts, lost: state.lost, late: state.late })
