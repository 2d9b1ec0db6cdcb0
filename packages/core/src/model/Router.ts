/**
 * A `LanguageModel` that routes each request to one of several models.
 *
 * A strategy ranks the models for each request (it sees the messages, the
 * tools and the options). The router tries them in that order and falls back
 * to the next one only when a model failed for a reason on its side (rate
 * limited, overloaded, server, network or idle timeout: `ChatError.isRetryable`),
 * never for the caller's mistakes (invalid request, authentication; a context
 * length error only when `fallbackOnContextLength` is set and a model with a
 * larger `contextWindow` is further down). Each model has a circuit breaker:
 * after `failureThreshold` failures in a row it is left out for `recoveryTime`
 * (on Effect's `Clock`), then one request probes it. A stream that already
 * emitted parts is never retried on another model: its error surfaces.
 *
 * The model that answered is recorded in the response's provider metadata
 * under `metadataKey` (and so in the assistant message): `answeredBy` reads it
 * back, and the `sticky` strategy keeps a resumed turn on that model.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ChatError from "../data/ChatError.js"
import * as LanguageModel from "./LanguageModel.js"
import * as Messages from "../turn/Messages.js"

/**
 * The provider metadata key under which the router records which model answered.
 *
 * @category constants
 * @since 0.1.0
 */
export const metadataKey = "chat-ts/router"

/**
 * What the router records in a response's provider metadata.
 *
 * @category models
 * @since 0.1.0
 */
export interface Answer {
  /** The model that answered. */
  readonly model: string
  /** The models that failed on this request before it (in order); empty when the first choice answered. */
  readonly failed: ReadonlyArray<string>
}

/**
 * A model as strategies see it.
 *
 * @category models
 * @since 0.1.0
 */
export interface ModelInfo {
  /** A unique name (recorded in the messages). */
  readonly name: string
  /** How many tokens fit in its context window, when known (see `fallbackOnContextLength`). */
  readonly contextWindow?: number | undefined
  /** Free labels for strategies, such as `"tools"` or `"cheap"`. */
  readonly tags?: ReadonlyArray<string> | undefined
}

/**
 * A model the router may use: the model itself (a service or a layer providing it) and what strategies see of it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Candidate<E = never, R = never> extends ModelInfo {
  readonly model: LanguageModel.Service | Layer.Layer<LanguageModel.LanguageModel, E, R>
}

/**
 * Ranks the models for one request: returns the names to try, best first.
 * Models left out are not tried for this request; unknown names are a defect.
 *
 * @category models
 * @since 0.1.0
 */
export type Strategy<R = never> = (
  request: LanguageModel.Request,
  models: ReadonlyArray<ModelInfo>
) => Effect.Effect<ReadonlyArray<string>, never, R>

/**
 * Circuit breaker settings (one breaker per model).
 *
 * @category models
 * @since 0.1.0
 */
export interface BreakerOptions {
  /** Failures in a row (retryable ones) that open the breaker. Default 5. */
  readonly failureThreshold?: number
  /** How long an open breaker keeps its model out before one probe request. Default 30 seconds. */
  readonly recoveryTime?: Duration.Input
}

/**
 * Options of `make` and `layer`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options<Cs extends ReadonlyArray<Candidate<any, any>>, R = never> {
  /** The models, in their default order. */
  readonly models: Cs
  /** Ranks the models per request. Default `ordered` (the order of `models`). */
  readonly strategy?: Strategy<R>
  /** Circuit breaker settings, or `false` for none. */
  readonly breaker?: BreakerOptions | false
  /**
   * On `ContextLengthExceeded`, go on to the next ranked model whose
   * `contextWindow` is larger than the failed model's (a model without a
   * declared window counts as 0). Default `false`: the error surfaces.
   */
  readonly fallbackOnContextLength?: boolean
}

/**
 * The state of one model's circuit breaker.
 *
 * @category models
 * @since 0.1.0
 */
export type BreakerState =
  | { readonly _tag: "Closed"; readonly failures: number }
  | { readonly _tag: "Open"; readonly until: number }
  | { readonly _tag: "HalfOpen"; readonly probing: boolean }

/**
 * The router's own service, provided next to the `LanguageModel`: the breakers' states.
 *
 * @category models
 * @since 0.1.0
 */
export interface Service {
  /** The state of each model's breaker, by name. */
  readonly breakers: Effect.Effect<ReadonlyMap<string, BreakerState>>
}

/**
 * The router in use (provided by `layer` next to the `LanguageModel`).
 *
 * @category services
 * @since 0.1.0
 */
export class Router extends Context.Service<Router, Service>()("@chat-ts/core/Router") {}

/**
 * The default strategy: the models in the order they were given.
 *
 * @category utils
 * @since 0.1.0
 */
export const ordered: Strategy = (_request, models) => Effect.succeed(models.map((model) => model.name))

/**
 * The model that answered the latest response of these messages through a router, if one did.
 *
 * @category utils
 * @since 0.1.0
 */
export const answeredBy = (messages: Messages.Messages): string | undefined => {
  const metadata = Messages.lastResponse(messages)?.providerMetadata?.[metadataKey]
  if (typeof metadata !== "object" || metadata === null) return undefined
  const model = (metadata as { readonly model?: unknown }).model
  return typeof model === "string" ? model : undefined
}

/**
 * Keeps a turn on one model: when the current turn already has a response
 * (a paused turn being resumed, a tool loop), the model that gave it goes
 * first; a new user message is routed by `strategy` again. A model the
 * strategy left out stays out; an open breaker still falls back.
 *
 * @category utils
 * @since 0.1.0
 */
export const sticky = <R = never>(strategy: Strategy<R> = ordered as Strategy<R>): Strategy<R> => (request, models) =>
  Effect.map(strategy(request, models), (names) => {
    const responses = Messages.turnResponses(request.messages)
    const last = responses.length === 0 ? undefined : answeredBy(responses)
    return last === undefined || !names.includes(last) ? names : [last, ...names.filter((name) => name !== last)]
  })

// ---------------------------------------------------------------------------
// Circuit breaker (pure transitions)
// ---------------------------------------------------------------------------

type Admission = "closed" | "probe" | "refused"

const closed: BreakerState = { _tag: "Closed", failures: 0 }

const admit = (state: BreakerState, now: number): readonly [Admission, BreakerState] => {
  switch (state._tag) {
    case "Closed":
      return ["closed", state]
    case "Open":
      return state.until > now ? ["refused", state] : ["probe", { _tag: "HalfOpen", probing: true }]
    case "HalfOpen":
      return state.probing ? ["refused", state] : ["probe", { _tag: "HalfOpen", probing: true }]
  }
}

const failed = (
  state: BreakerState,
  admission: Admission,
  now: number,
  threshold: number,
  recoveryMillis: number
): BreakerState => {
  if (admission === "probe") return { _tag: "Open", until: now + recoveryMillis }
  if (state._tag !== "Closed") return state
  const failures = state.failures + 1
  return failures >= threshold ? { _tag: "Open", until: now + recoveryMillis } : { _tag: "Closed", failures }
}

const released = (state: BreakerState, admission: Admission): BreakerState =>
  admission === "probe" && state._tag === "HalfOpen" ? { _tag: "HalfOpen", probing: false } : state

// ---------------------------------------------------------------------------
// The router
// ---------------------------------------------------------------------------

interface Entry extends ModelInfo {
  readonly model: LanguageModel.Service
  readonly breaker: Ref.Ref<BreakerState>
}

/** The error when every ranked model was left out by its breaker. */
const allRefused = (names: ReadonlyArray<string>) =>
  new ChatError.ServerError({
    message: `No model could take the request: the circuit breakers of ${names.join(", ")} are open.`,
    status: 503
  })

const spanEvent = (name: string, attributes: Record<string, unknown>) =>
  Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeNanos), (now) =>
    Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
      Option.isSome(span) ? Effect.sync(() => span.value.event(name, now, attributes)) : Effect.void))

/** Builds a router from models given as services (use `make` inside a scope for models given as layers). */
const fromEntries = <R>(
  entries: ReadonlyArray<Entry>,
  strategy: Strategy<R>,
  context: Context.Context<R>,
  options: { readonly breaker: BreakerOptions | false; readonly fallbackOnContextLength: boolean }
): LanguageModel.Service & Service => {
  const byName = new Map(entries.map((entry) => [entry.name, entry]))
  const infos: ReadonlyArray<ModelInfo> = entries.map(({ contextWindow, name, tags }) => ({ name, contextWindow, tags }))
  const threshold = options.breaker === false ? Infinity : Math.max(1, options.breaker.failureThreshold ?? 5)
  const recoveryMillis = options.breaker === false ? 0 : Duration.toMillis(options.breaker.recoveryTime ?? "30 seconds")

  const transition = (entry: Entry, f: (state: BreakerState, now: number) => BreakerState) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.flatMap(Ref.modify(entry.breaker, (state) => [[state, f(state, now)] as const, f(state, now)]), ([before, after]) =>
        before._tag === after._tag ? Effect.void : logChange(entry.name, before, after)))

  const logChange = (model: string, before: BreakerState, after: BreakerState) => {
    const attributes = { "chat-ts.router.model": model, "chat-ts.router.from": before._tag, "chat-ts.router.to": after._tag }
    const log = after._tag === "Open" ? Effect.logWarning : Effect.logInfo
    return Effect.andThen(
      log(`circuit breaker of model '${model}': ${before._tag} -> ${after._tag}`).pipe(Effect.annotateLogs(attributes)),
      spanEvent("chat-ts.router.breaker", attributes)
    )
  }

  const tryAdmit = (entry: Entry): Effect.Effect<Admission> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.flatMap(Ref.modify(entry.breaker, (state) => {
        const [admission, next] = admit(state, now)
        return [[admission, state, next] as const, next]
      }), ([admission, before, after]) =>
        before._tag === after._tag ? Effect.succeed(admission) : Effect.as(logChange(entry.name, before, after), admission)))

  /** Records how a call ended on the model's breaker: only retryable failures count against it. */
  const settle = (entry: Entry, admission: Admission, outcome: "ok" | "failed" | "interrupted") =>
    options.breaker === false ? Effect.void : transition(entry, (state, now) =>
      outcome === "ok"
        ? closed
        : outcome === "failed"
        ? failed(state, admission, now, threshold, recoveryMillis)
        : released(state, admission))

  const outcomeOf = (error: ChatError.ModelError) => (ChatError.isRetryable(error) ? "failed" : "ok") as "failed" | "ok"

  const rank = (request: LanguageModel.Request): Effect.Effect<ReadonlyArray<Entry>, ChatError.ModelError> =>
    Effect.flatMap(Effect.provide(strategy(request, infos), context), (names) => {
      const seen = new Set<string>()
      const out: Array<Entry> = []
      for (const name of names) {
        const entry = byName.get(name)
        if (entry === undefined) return Effect.die(new Error(`Router: the strategy named an unknown model '${name}'.`))
        if (!seen.has(name)) out.push(entry)
        seen.add(name)
      }
      return out.length === 0
        ? Effect.fail(new ChatError.InvalidRequest({ message: "The routing strategy chose no model for this request." }))
        : Effect.succeed(out)
    })

  /** What the router does after `entry` failed with `error`: surface it, or go on (above a minimum context window). */
  const afterFailure = (entry: Entry, error: ChatError.ModelError): { readonly minWindow: number } | "surface" | "next" =>
    ChatError.isRetryable(error)
      ? "next"
      : error._tag === "ContextLengthExceeded" && options.fallbackOnContextLength
      ? { minWindow: entry.contextWindow ?? 0 }
      : "surface"

  interface Progress {
    readonly failed: ReadonlyArray<string>
    readonly refused: ReadonlyArray<string>
    readonly lastError: ChatError.ModelError | undefined
    readonly minWindow: number | undefined
  }
  const start: Progress = { failed: [], refused: [], lastError: undefined, minWindow: undefined }

  /** The next model to try from `index` on (skipping smaller windows and open breakers), or the error to surface. */
  const next = (
    order: ReadonlyArray<Entry>,
    index: number,
    progress: Progress
  ): Effect.Effect<readonly [number, Admission, Progress], ChatError.ModelError> =>
    Effect.suspend(() => {
      if (index >= order.length) {
        return Effect.fail(progress.lastError ?? allRefused(progress.refused))
      }
      const entry = order[index]!
      if (progress.minWindow !== undefined && (entry.contextWindow ?? 0) <= progress.minWindow) {
        return next(order, index + 1, progress)
      }
      return Effect.flatMap(tryAdmit(entry), (admission) =>
        admission === "refused"
          ? next(order, index + 1, { ...progress, refused: [...progress.refused, entry.name] })
          : Effect.succeed([index, admission, progress] as const))
    })

  const fallback = (entry: Entry, error: ChatError.ModelError, progress: Progress): Progress | undefined => {
    const decision = afterFailure(entry, error)
    if (decision === "surface") return undefined
    return {
      ...progress,
      failed: [...progress.failed, entry.name],
      lastError: error,
      minWindow: decision === "next" ? progress.minWindow : decision.minWindow
    }
  }

  const noteFallback = (entry: Entry, error: ChatError.ModelError) =>
    Effect.andThen(
      Effect.logWarning(`model '${entry.name}' failed (${error._tag}); trying the next model`),
      spanEvent("chat-ts.router.fallback", { "chat-ts.router.model": entry.name, "chat-ts.router.error": error._tag })
    )

  const answer = (entry: Entry, progress: Progress, metadata: { readonly [key: string]: unknown } | undefined) => ({
    ...metadata,
    [metadataKey]: { model: entry.name, failed: progress.failed } satisfies Answer
  })

  const generateFrom = (
    request: LanguageModel.Request,
    order: ReadonlyArray<Entry>,
    index: number,
    progress: Progress
  ): Effect.Effect<LanguageModel.Response, ChatError.ModelError> =>
    Effect.flatMap(next(order, index, progress), ([at, admission, progress]) => {
      const entry = order[at]!
      return entry.model.generate(request).pipe(
        Effect.onExit((exit) => {
          if (exit._tag === "Success") return settle(entry, admission, "ok")
          const error = Cause.findErrorOption(exit.cause)
          return settle(entry, admission, Option.isSome(error) ? outcomeOf(error.value) : "interrupted")
        }),
        Effect.map((response): LanguageModel.Response => ({
          ...response,
          providerMetadata: answer(entry, progress, response.providerMetadata)
        })),
        Effect.tap(() => Effect.annotateCurrentSpan("chat-ts.router.model", entry.name)),
        Effect.catch((error) => {
          const after = fallback(entry, error, progress)
          return after === undefined
            ? Effect.fail(error)
            : Effect.andThen(noteFallback(entry, error), generateFrom(request, order, at + 1, after))
        })
      )
    })

  const streamFrom = (
    request: LanguageModel.Request,
    order: ReadonlyArray<Entry>,
    index: number,
    progress: Progress
  ): Stream.Stream<LanguageModel.StreamPart, ChatError.ModelError> =>
    Stream.unwrap(Effect.map(next(order, index, progress), ([at, admission, progress]) => {
      const entry = order[at]!
      let emitted = false
      let settled = false
      const settleOnce = (outcome: "ok" | "failed" | "interrupted") =>
        Effect.suspend(() => {
          if (settled) return Effect.void
          settled = true
          return settle(entry, admission, outcome)
        })
      return entry.model.stream(request).pipe(
        Stream.tap((part) => {
          emitted = true
          return part._tag === "Finish" ? settleOnce("ok") : Effect.void
        }),
        Stream.tapError((error) => settleOnce(outcomeOf(error))),
        // A stream that ends without its `Finish` part was cut: a failure of the model.
        Stream.concat(Stream.fromEffectDrain(Effect.suspend(() => settleOnce("failed")))),
        Stream.ensuring(Effect.suspend(() => settleOnce("interrupted"))),
        Stream.map((part): LanguageModel.StreamPart =>
          part._tag === "Finish" ? { ...part, providerMetadata: answer(entry, progress, part.providerMetadata) } : part
        ),
        Stream.catch((error) => {
          if (emitted) {
            return Stream.fail(error).pipe(Stream.tapError(() =>
              Effect.logWarning(
                `model '${entry.name}' failed (${error._tag}) after its stream began; not falling back (the turn would show two answers)`
              )
            ))
          }
          const after = fallback(entry, error, progress)
          return after === undefined
            ? Stream.fail(error)
            : Stream.concat(Stream.fromEffectDrain(noteFallback(entry, error)), streamFrom(request, order, at + 1, after))
        })
      )
    }))

  return {
    generate: (request) =>
      Effect.flatMap(rank(request), (order) => generateFrom(request, order, 0, start)).pipe(
        Effect.withSpan("chat-ts.router", { attributes: { "chat-ts.router.mode": "generate" } })
      ),
    stream: (request) =>
      Stream.unwrap(Effect.map(rank(request), (order) => streamFrom(request, order, 0, start))).pipe(
        Stream.withSpan("chat-ts.router", { attributes: { "chat-ts.router.mode": "stream" } })
      ),
    breakers: Effect.map(
      Effect.forEach(entries, (entry) => Effect.map(Ref.get(entry.breaker), (state) => [entry.name, state] as const)),
      (pairs) => new Map(pairs)
    )
  }
}

type ErrorOf<C> = C extends { readonly model: Layer.Layer<any, infer E, any> } ? E : never
type ContextOf<C> = C extends { readonly model: Layer.Layer<any, any, infer R> } ? R : never

/**
 * Makes a router (the `LanguageModel` and its breakers). Models given as
 * layers are built in the current scope. Names must be unique and non-empty.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <const Cs extends ReadonlyArray<Candidate<any, any>>, R = never>(
  options: Options<Cs, R>
): Effect.Effect<LanguageModel.Service & Service, ErrorOf<Cs[number]>, ContextOf<Cs[number]> | R | Scope.Scope> =>
  Effect.gen(function*() {
    const names = new Set<string>()
    for (const candidate of options.models) {
      if (candidate.name === "" || names.has(candidate.name)) {
        return yield* Effect.die(new Error(`Router: model names must be unique and non-empty ('${candidate.name}').`))
      }
      names.add(candidate.name)
    }
    if (names.size === 0) return yield* Effect.die(new Error("Router: at least one model is needed."))
    const entries = yield* Effect.forEach(options.models, (candidate) =>
      Effect.gen(function*() {
        const model: LanguageModel.Service = Layer.isLayer(candidate.model)
          ? Context.get(
            yield* Layer.build(candidate.model as Layer.Layer<LanguageModel.LanguageModel, ErrorOf<Cs[number]>, ContextOf<Cs[number]>>),
            LanguageModel.LanguageModel
          )
          : candidate.model as LanguageModel.Service
        return {
          name: candidate.name,
          contextWindow: candidate.contextWindow,
          tags: candidate.tags,
          model,
          breaker: yield* Ref.make<BreakerState>(closed)
        } satisfies Entry
      }))
    const context = yield* Effect.context<R>()
    return fromEntries(entries, options.strategy ?? (ordered as Strategy<R>), context, {
      breaker: options.breaker ?? {},
      fallbackOnContextLength: options.fallbackOnContextLength ?? false
    })
  })

/**
 * A layer providing the router as the `LanguageModel`, and its breakers as `Router`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <const Cs extends ReadonlyArray<Candidate<any, any>>, R = never>(
  options: Options<Cs, R>
): Layer.Layer<LanguageModel.LanguageModel | Router, ErrorOf<Cs[number]>, ContextOf<Cs[number]> | R> =>
  Layer.effectContext(Effect.map(make(options), (router) =>
    Context.make(LanguageModel.LanguageModel, { generate: router.generate, stream: router.stream }).pipe(
      Context.add(Router, { breakers: router.breakers })
    )))
