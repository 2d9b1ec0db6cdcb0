/**
 * Sampling: a server asking the client's model for a completion (MCP
 * `sampling/createMessage`) while one of its tools runs. Each request is
 * decided by a strategy, like a tool call: `Execute` sends it to the chat's
 * model, `RequireApproval` asks a person (`approve`, with a deadline; no
 * `approve`, or no answer in time, refuses), anything else refuses. The
 * default strategy requires approval, so without a person nothing is sent to
 * the model (fail closed). Give the options to `McpToolkit.make({ sampling })`:
 * only then does the client declare the capability. `approvals` is a ready
 * `approve`: a list of pending requests a person approves or refuses.
 *
 * @since 0.1.0
 */
import type { Action, LanguageModel } from "@chat-ts/core"
import * as Messages from "@chat-ts/core/Messages"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as McpError from "./McpError.js"

/** One sampling request from a server, as text messages. */
export interface Request {
  /** Unique in this process (`sampling-<n>`). */
  readonly id: string
  /** The server's name. */
  readonly server: string
  /**
   * The chat's calls to this server running when the request arrived (`id`, `name`): MCP does not say
   * which one asks, so with one call running it is that one.
   */
  readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string }>
  /** The server's messages (text; other content as a short placeholder). */
  readonly messages: Messages.Messages
  readonly systemPrompt: string | undefined
  /** The most tokens the server asked for (capped by `maxTokens`). */
  readonly maxTokens: number
  readonly temperature: number | undefined
}

/** How sampling requests are decided and run. */
export interface Options {
  /** The model that answers (e.g. the chat's: `yield* LanguageModel.LanguageModel`). */
  readonly model: LanguageModel.Service
  /** Decides each request (default: `RequireApproval`). `Defer` and `Reject` refuse it. */
  readonly strategy?: (request: Request) => Action.Action | Effect.Effect<Action.Action>
  /** Asks a person whether the request may run (`true` runs it); without it, `RequireApproval` refuses. */
  readonly approve?: (request: Request) => Effect.Effect<boolean>
  /** How long `approve` may take before the request is refused (default 10 minutes). */
  readonly approvalTimeout?: Duration.Input
  /** The most tokens one request may ask the model for (default 1024; a larger `maxTokens` is lowered). */
  readonly maxTokens?: number
}

/** What a request gets: the model's text, or why it was refused. */
export type Outcome =
  | { readonly _tag: "Answered"; readonly text: string; readonly stopReason: "endTurn" | "maxTokens" }
  | { readonly _tag: "Refused"; readonly reason: string }

let counter = 0

/** A new request id. */
export const nextId = (): string => `sampling-${++counter}`

/** Whether the strategy, and then the person, let the request run. */
const allowed = (options: Options, request: Request): Effect.Effect<string | undefined> =>
  Effect.flatMap(
    Effect.suspend(() => {
      const decided = (options.strategy ?? (() => ({ _tag: "RequireApproval" }) as Action.Action))(request)
      return Effect.isEffect(decided) ? decided : Effect.succeed(decided)
    }),
    (action) => {
      switch (action._tag) {
        case "Execute":
          return Effect.succeed(undefined)
        case "RequireApproval":
          return options.approve === undefined
            ? Effect.succeed("sampling requires a person's approval, and none can be asked")
            : options.approve(request).pipe(
              Effect.timeoutOrElse({
                duration: Duration.fromInputUnsafe(options.approvalTimeout ?? Duration.minutes(10)),
                orElse: () => Effect.succeed(false)
              }),
              Effect.map((yes) => (yes ? undefined : "the person did not approve the sampling request"))
            )
        case "Reject":
          return Effect.succeed(action.reason)
        default:
          return Effect.succeed("sampling requests cannot be deferred")
      }
    }
  )

/** Decides a request and, if allowed, sends it to the model (no tools). A model error is a refusal too. */
export const run = (options: Options, request: Request): Effect.Effect<Outcome> =>
  Effect.flatMap(allowed(options, request), (refused) => {
    if (refused !== undefined) return Effect.succeed<Outcome>({ _tag: "Refused", reason: refused })
    const messages = request.systemPrompt === undefined
      ? request.messages
      : [Messages.system(request.systemPrompt), ...request.messages]
    return options.model.generate({
      messages,
      tools: [],
      options: {
        maxTokens: Math.min(request.maxTokens, options.maxTokens ?? 1024),
        ...(request.temperature === undefined ? {} : { temperature: request.temperature })
      }
    }).pipe(
      Effect.map((response): Outcome => ({
        _tag: "Answered",
        text: response.parts.flatMap((part) => (part._tag === "Text" ? [part.text] : [])).join(""),
        stopReason: response.finishReason === "length" ? "maxTokens" : "endTurn"
      })),
      Effect.catch((error) => Effect.succeed<Outcome>({ _tag: "Refused", reason: `the model failed: ${error._tag}` }))
    )
  })

/** Sampling requests waiting for a person's approval. */
export interface Approvals {
  /** Give it as `sampling.approve`. */
  readonly approve: (request: Request) => Effect.Effect<boolean>
  /** The requests waiting now. */
  readonly pending: Effect.Effect<ReadonlyArray<Request>>
  /** The next request to arrive (waits; bound it with a timeout). */
  readonly next: Effect.Effect<Request>
  /** Approves (`true`) or refuses (`false`) a pending request. */
  readonly answer: (id: string, approved: boolean) => Effect.Effect<void, McpError.RequestNotPending>
}

/** Makes a list of pending approvals: each request waits (until `approvalTimeout`, then refused) for `answer`. */
export const approvals: Effect.Effect<Approvals> = Effect.gen(function*() {
  const waiting = new Map<string, { readonly request: Request; readonly answer: Deferred.Deferred<boolean> }>()
  const arrivals = yield* Queue.unbounded<Request>()
  return {
    approve: (request) =>
      Effect.gen(function*() {
        const answer = yield* Deferred.make<boolean>()
        waiting.set(request.id, { request, answer })
        yield* Queue.offer(arrivals, request)
        return yield* Deferred.await(answer)
      }).pipe(Effect.ensuring(Effect.sync(() => void waiting.delete(request.id)))),
    pending: Effect.sync(() => [...waiting.values()].map((entry) => entry.request)),
    next: Queue.take(arrivals).pipe(Effect.orDie),
    answer: (id, approved) =>
      Effect.suspend((): Effect.Effect<void, McpError.RequestNotPending> => {
        const entry = waiting.get(id)
        if (entry === undefined) return Effect.fail(new McpError.RequestNotPending({ id }))
        waiting.delete(id)
        return Deferred.succeed(entry.answer, approved).pipe(Effect.asVoid)
      })
  } satisfies Approvals
})
