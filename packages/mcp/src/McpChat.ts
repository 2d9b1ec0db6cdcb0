/**
 * A chat over your own toolkits and the tools of MCP servers, kept up to
 * date: before every turn (`complete`, `resume`, `stream`,
 * `completeStructured`) the servers whose tools changed are listed again and
 * the chat is made again with `Chat.make`, so the next model call sees the
 * new tools. A paused call whose tool disappeared resumes as a failed call
 * ("There is no tool named …"); a tool name owned twice is a
 * `DuplicateToolName`, at `make` or at the turn that brought the clash.
 *
 * @since 0.1.0
 */
import { Chat, type ChatError, type ChatOutcome, type LanguageModel, type Messages, type Toolkit } from "@chat-ts/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as McpError from "./McpError.js"
import type * as McpToolkit from "./McpToolkit.js"

/** Settings of a chat: those of `Chat.make`, and the MCP servers whose tools it offers. */
export interface Options<Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any>> extends Chat.Options<Kits> {
  readonly servers: ReadonlyArray<McpToolkit.Service>
}

/** What making the chat again may fail with: a clash or a bad schema in the new tools, or a server that cannot list them. */
export type RefreshError = Chat.MakeError | McpError.McpConnectError

/** A chat whose MCP tools follow the servers: `Chat.Service` with the refresh's errors. */
export interface Service<R = never> {
  /** The tools the model saw on the latest turn. */
  readonly tools: ReadonlyArray<LanguageModel.ToolDeclaration>
  readonly complete: (
    messages: Messages.Messages,
    options?: Chat.TurnOptions
  ) => Effect.Effect<ChatOutcome.Result, Chat.TurnError | RefreshError, R>
  readonly resume: (
    messages: Messages.Messages,
    options?: Chat.TurnOptions
  ) => Effect.Effect<ChatOutcome.Result, Chat.TurnError | RefreshError, R>
  /** Approves a pending call, checking edited arguments against the tool's schema as of the latest turn. */
  readonly approve: Chat.Service<R>["approve"]
  readonly reject: Chat.Service<R>["reject"]
  readonly stream: (
    messages: Messages.Messages,
    options?: Chat.TurnOptions
  ) => Stream.Stream<import("@chat-ts/core").ChatEvent.ChatEvent, Chat.TurnError | RefreshError, R>
  readonly completeStructured: <A, I>(
    messages: Messages.Messages,
    schema: Schema.Schema<A, I>,
    options?: Chat.TurnOptions
  ) => Effect.Effect<ChatOutcome.Result<A>, Chat.TurnError | ChatError.StructuredOutputError | RefreshError, R>
}

/**
 * Makes a chat over `tools` (your toolkits, whose handlers must be provided)
 * and the current tools of `servers`.
 */
export const make = <const Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any> = ReadonlyArray<never>>(
  options: Options<Kits>
): Effect.Effect<
  Service<Chat.StrategiesContext<Kits>>,
  RefreshError,
  LanguageModel.LanguageModel | Chat.HandlersContext<Kits>
> =>
  Effect.gen(function*() {
    type R = Chat.StrategiesContext<Kits>
    const context = yield* Effect.context<LanguageModel.LanguageModel | Chat.HandlersContext<Kits>>()
    const local: ReadonlyArray<Toolkit.Any> = options.tools === undefined
      ? []
      : Array.isArray(options.tools)
      ? options.tools
      : [options.tools as Toolkit.Any]
    const { servers, ...chatOptions } = options

    let built: { readonly key: string; readonly chat: Chat.Service<R> } | undefined
    const lock = yield* Effect.makeSemaphore(1)

    /** The chat over the servers' current tools, made again only when one of them listed new tools. */
    const latest: Effect.Effect<Chat.Service<R>, RefreshError> = lock.withPermits(1)(Effect.gen(function*() {
      const snapshots = yield* Effect.forEach(servers, (server) => server.current)
      const key = snapshots.map((snapshot) => snapshot.version).join(",")
      if (built !== undefined && built.key === key) return built.chat
      const handlers = snapshots.reduce((all, snapshot) => Context.merge(all, snapshot.handlers), context as Context.Context<unknown>)
      const made = Chat.make({ ...chatOptions, tools: [...local, ...snapshots.map((snapshot) => snapshot.toolkit)] })
      const chat = yield* Effect.provide(made as unknown as Effect.Effect<Chat.Service<R>, Chat.MakeError, unknown>, handlers)
      built = { key, chat }
      return built.chat
    }))

    const first = yield* latest
    const now = () => built?.chat ?? first
    const complete = (messages: Messages.Messages, turnOptions?: Chat.TurnOptions) =>
      Effect.flatMap(latest, (chat) => chat.complete(messages, turnOptions))

    const service: Service<R> = {
      get tools() {
        return now().tools
      },
      complete,
      resume: complete,
      approve: (messages, id, edited) => now().approve(messages, id, edited),
      reject: (messages, id, reason) => now().reject(messages, id, reason),
      stream: (messages, turnOptions) => Stream.unwrap(Effect.map(latest, (chat) => chat.stream(messages, turnOptions))),
      completeStructured: (messages, schema, turnOptions) =>
        Effect.flatMap(latest, (chat) => chat.completeStructured(messages, schema, turnOptions))
    }
    return service
  })
