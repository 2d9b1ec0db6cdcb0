/**
 * Elicitation: a server asking a person for input while one of its tools
 * runs (MCP `elicitation/create`, form mode). The tool call that triggered
 * it waits; the request is a pending item a person answers, typed by the
 * server's requested schema (an answer that does not match is refused and
 * may be corrected), with a deadline past which the server is told
 * "cancel". Give a `Handler` to `McpToolkit.make({ elicitation })`: only
 * then does the client declare the capability (servers hide the tools that
 * need it otherwise). `inbox` is a ready handler with a list of pending
 * requests for a UI. While it waits, `McpToolkit` also records the request
 * on the running call in the chat's state (`status.inputRequests`: every
 * checkpoint, `ChatEvent.InputRequested`), so a UI reading the store sees it;
 * after a crash it is lost with the connection and the call fails saying so.
 * URL-mode elicitation is not declared.
 *
 * @since 0.1.0
 */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as McpError from "./McpError.js"

/** One elicitation request from a server, waiting for a person. */
export interface Request {
  /** Unique in this process (`elicitation-<n>`). */
  readonly id: string
  /** The server's name. */
  readonly server: string
  /**
   * The chat's calls to this server running when the request arrived (`id`, `name`): MCP does not say
   * which one asks, so with one call running it is that one.
   */
  readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string }>
  /** What the server asks, to show to the person. */
  readonly message: string
  /** The JSON Schema the answer's content must match (a flat object of primitives, as MCP requires). */
  readonly requestedSchema: { readonly [key: string]: unknown }
  /** When it is answered "cancel" if nobody answered (epoch millis). */
  readonly deadline: number
}

/** What a person answers: the content (accept), no (decline), or dismissed (cancel). */
export type Answer =
  | { readonly _tag: "Accept"; readonly content: { readonly [key: string]: unknown } }
  | { readonly _tag: "Decline" }
  | { readonly _tag: "Cancel" }

/** The person gave the content asked for. */
export const accept = (content: { readonly [key: string]: unknown }): Answer => ({ _tag: "Accept", content })
/** The person said no. */
export const decline: Answer = { _tag: "Decline" }
/** The person dismissed the request (or nobody answered in time). */
export const cancel: Answer = { _tag: "Cancel" }

/** How elicitation requests are answered. An `Accept` whose content does not match the schema is sent as `Cancel`. */
export type Handler = (request: Request) => Effect.Effect<Answer>

/** Checks `content` against `schema`: the validator's message, or `undefined` when it matches. */
export const check = (
  validator: jsonSchemaValidator,
  schema: { readonly [key: string]: unknown },
  content: unknown
): string | undefined => {
  try {
    const result = validator.getValidator(schema as never)(content)
    return result.valid ? undefined : (result.errorMessage ?? "the content does not match the requested schema")
  } catch (error) {
    return `the requested schema cannot be used (${(error as Error).message.split("\n")[0]})`
  }
}

/** Pending elicitation requests, answered by a person. */
export interface Inbox {
  /** Give it to `McpToolkit.make({ elicitation })`. */
  readonly handler: Handler
  /** The requests waiting now. */
  readonly pending: Effect.Effect<ReadonlyArray<Request>>
  /** The next request to arrive (waits; bound it with a timeout). */
  readonly next: Effect.Effect<Request>
  /** Answers a pending request; content that does not match its schema is refused, and it stays pending. */
  readonly answer: (id: string, answer: Answer) => Effect.Effect<void, McpError.InvalidElicitationAnswer | McpError.RequestNotPending>
}

/** Settings of an inbox. */
export interface InboxOptions {
  /** Checks answers against the requested schema (default: the SDK's `AjvJsonSchemaValidator`, as `McpToolkit` uses). */
  readonly validator?: jsonSchemaValidator
}

let counter = 0

/** Makes an inbox: each request waits (until its deadline, then "cancel") for `answer`, then is gone from `pending`. */
export const inbox = (options: InboxOptions = {}): Effect.Effect<Inbox> =>
  Effect.gen(function*() {
    const validator = options.validator ?? new AjvJsonSchemaValidator()
    const waiting = new Map<string, { readonly request: Request; readonly answer: Deferred.Deferred<Answer> }>()
    const arrivals = yield* Queue.unbounded<Request>()
    const handler: Handler = (request) =>
      Effect.gen(function*() {
        const answer = yield* Deferred.make<Answer>()
        waiting.set(request.id, { request, answer })
        yield* Queue.offer(arrivals, request)
        const now = yield* Clock.currentTimeMillis
        return yield* Deferred.await(answer).pipe(
          Effect.timeoutOrElse({ duration: Duration.millis(Math.max(0, request.deadline - now)), orElse: () => Effect.succeed(cancel) })
        )
      }).pipe(Effect.ensuring(Effect.sync(() => void waiting.delete(request.id))))
    return {
      handler,
      pending: Effect.sync(() => [...waiting.values()].map((entry) => entry.request)),
      next: Queue.take(arrivals).pipe(Effect.orDie),
      answer: (id, answer) =>
        Effect.suspend((): Effect.Effect<void, McpError.InvalidElicitationAnswer | McpError.RequestNotPending> => {
          const entry = waiting.get(id)
          if (entry === undefined) return Effect.fail(new McpError.RequestNotPending({ id }))
          if (answer._tag === "Accept") {
            const problem = check(validator, entry.request.requestedSchema, answer.content)
            if (problem !== undefined) return Effect.fail(new McpError.InvalidElicitationAnswer({ id, detail: problem }))
          }
          waiting.delete(id)
          return Deferred.succeed(entry.answer, answer).pipe(Effect.asVoid)
        })
    } satisfies Inbox
  })

/** A new request id. */
export const nextId = (): string => `elicitation-${++counter}`
