/**
 * A chat over your own toolkits and the tools of MCP servers, kept up to
 * date: it is a `Chat` whose `refreshTools` reads the servers' tools, so at
 * the start of every turn and before every model call the servers that sent
 * `notifications/tools/list_changed` are listed again, and the next request
 * offers their new tools (within the same turn). A call to a tool gone since
 * the model saw it fails ("There is no tool named …") and is never sent; a
 * tool name owned twice is a `DuplicateToolName`, at `make` or at the model
 * call that would have offered the clash (nothing more runs).
 *
 * @since 0.1.0
 */
import type { ChatError, ChatOutcome, LanguageModel, Messages, Toolkit } from "@chat-ts/core"
import * as Chat from "@chat-ts/core/Chat"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import type * as McpError from "./McpError.js"
import type * as McpToolkit from "./McpToolkit.js"

/** Settings of a chat: those of `Chat.make`, and the MCP servers whose tools it offers. */
export interface Options<Kits extends Toolkit.Any | ReadonlyArray<Toolkit.Any>> extends Chat.Options<Kits> {
  readonly servers: ReadonlyArray<McpToolkit.Service>
}

/**
 * What making the chat again may fail with: a clash, a bad schema or a missing handler in the new
 * tools, a refresh that died, or a server that cannot list them.
 */
export type RefreshError = Chat.RefreshError | McpError.McpConnectError

/** A chat whose MCP tools follow the servers: `Chat.Service` with the refresh's errors. */
export interface Service<R = never> {
  /** The tools the model was offered last (read at the latest turn's start or model call). */
  readonly tools: ReadonlyArray<LanguageModel.ToolDeclaration>
  readonly complete: (
    messages: Messages.Messages,
    options?: Chat.TurnOptions
  ) => Effect.Effect<ChatOutcome.Result, Chat.TurnError | RefreshError, R>
  readonly resume: (
    messages: Messages.Messages,
    options?: Chat.TurnOptions
  ) => Effect.Effect<ChatOutcome.Result, Chat.TurnError | RefreshError, R>
  /** Approves a pending call, checking edited arguments against the tool's schema as last read. */
  readonly approve: Chat.Service<R>["approve"]
  readonly reject: Chat.Service<R>["reject"]
  readonly stream: (
    messages: Messages.Messages,
    options?: Chat.TurnOptions
  ) => Stream.Stream<import("@chat-ts/core").ChatEvent.ChatEvent, Chat.TurnError | RefreshError, R>
  readonly completeStructured: <A, I>(
    messages: Messages.Messages,
    schema: Schema.Codec<A, I>,
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
    const local: ReadonlyArray<Toolkit.Any> = options.tools === undefined
      ? []
      : Array.isArray(options.tools)
      ? options.tools
      : [options.tools as Toolkit.Any]
    const { servers, ...chatOptions } = options

    let read: { readonly key: string; readonly set: Chat.ToolSet } | undefined
    const lock = yield* Semaphore.make(1)

    /** Your toolkits and the servers' current tools: the same set (so the same table) until a server lists new tools. */
    const toolSet: Effect.Effect<Chat.ToolSet, McpError.McpConnectError> = lock.withPermits(1)(Effect.gen(function*() {
      const snapshots = yield* Effect.forEach(servers, (server) => server.current)
      const key = snapshots.map((snapshot) => snapshot.version).join(",")
      if (read !== undefined && read.key === key) return read.set
      const handlers = snapshots.reduce((all, snapshot) => Context.merge(all, snapshot.handlers), Context.empty() as Context.Context<unknown>)
      read = { key, set: { tools: [...local, ...snapshots.map((snapshot) => snapshot.toolkit)], handlers } }
      return read.set
    }))

    const first = yield* toolSet
    const made = Chat.make({ ...chatOptions, tools: first.tools, refreshTools: toolSet })
    return yield* Effect.provide(
      made as unknown as Effect.Effect<Chat.Service<R, RefreshError>, Chat.MakeError, LanguageModel.LanguageModel>,
      first.handlers as Context.Context<never>
    ) satisfies Effect.Effect<Service<R>, RefreshError, LanguageModel.LanguageModel>
  })
