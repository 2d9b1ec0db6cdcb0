/**
 * A connection to one MCP server, as a scoped resource (closed with its
 * scope), and its tools as a chat-ts `Toolkit`: the server's JSON Schemas,
 * its annotations as metadata, a strategy (by default `McpStrategy.annotations`,
 * which fails closed) and handlers that send each call to the server, with a
 * timeout, cancelled when the turn is interrupted and never retried.
 *
 * The server may change its tools (`notifications/tools/list_changed`): the
 * next `current` lists them again. `McpChat` does that at the start of every
 * turn and before every model call.
 *
 * @since 0.1.0
 */
import { Tool, Toolkit } from "@chat-ts/core"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport as SdkTransport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  type CallToolResult,
  ErrorCode,
  McpError as SdkError,
  type Tool as ServerTool,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Semaphore from "effect/Semaphore"
import type * as Scope from "effect/Scope"
import { describe } from "./internal/json.js"
import * as McpError from "./McpError.js"
import * as McpStrategy from "./McpStrategy.js"
import * as McpTool from "./McpTool.js"

/** How to reach the server: a command started as a child process (stdio), or a Streamable HTTP endpoint. */
export type Transport =
  | {
    readonly _tag: "Stdio"
    readonly command: string
    readonly args?: ReadonlyArray<string> | undefined
    /** The child's environment (default: a safe subset of this process's, as the SDK chooses). */
    readonly env?: Readonly<Record<string, string>> | undefined
    readonly cwd?: string | undefined
    /** What happens to the child's stderr (default `"inherit"`). */
    readonly stderr?: "inherit" | "ignore" | "pipe" | undefined
  }
  | {
    readonly _tag: "Http"
    readonly url: string | URL
    /** Headers of every request (e.g. `Authorization`); give secrets as `Redacted` (from `Config.Redacted`). */
    readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  }

/** A server started as a child process, spoken to over stdio. */
export const stdio = (
  command: string,
  options: Omit<Extract<Transport, { _tag: "Stdio" }>, "_tag" | "command"> = {}
): Transport => ({ _tag: "Stdio", command, ...options })

/** A server reached over Streamable HTTP at `url`. */
export const http = (url: string | URL, options: Omit<Extract<Transport, { _tag: "Http" }>, "_tag" | "url"> = {}): Transport => ({
  _tag: "Http",
  url,
  ...options
})

/** Settings of one server connection. */
export interface Options {
  readonly transport: Transport
  /** The server's name in metadata and errors (default: the name it gives itself). */
  readonly name?: string
  /** Put before each tool's name in the chat (e.g. `"files_"`), to tell servers apart or avoid a clash. */
  readonly prefix?: string
  /** Decides each call (default `McpStrategy.annotations`: read-only runs, everything else asks a person). */
  readonly strategy?: McpStrategy.Strategy
  /** The longest one call may take before it is cancelled and fails with `McpCallTimeout` (default 60 seconds). */
  readonly timeout?: Duration.Input
  /** The longest connecting and listing the tools may take (default 30 seconds). */
  readonly connectTimeout?: Duration.Input
}

/** The server's tools at one moment: a toolkit and the handlers of its tools. */
export interface Snapshot {
  /** How many times the tools were listed (1 for the first list). */
  readonly version: number
  readonly toolkit: Toolkit.Toolkit<McpStrategy.Tools>
  /** The handler services of the toolkit's tools (provide them to `Chat.make`). */
  readonly handlers: Context.Context<Toolkit.HandlersOf<McpStrategy.Tools>>
}

/** A connected MCP server. */
export interface Service {
  /** The server's name. */
  readonly server: string
  /** The SDK client, for what this package does not cover (resources, prompts…). */
  readonly client: Client
  /** The tools, listed again first if the server said they changed since the last list. */
  readonly current: Effect.Effect<Snapshot, McpError.McpConnectError>
  /** Whether the server said its tools changed since the last list. */
  readonly stale: Effect.Effect<boolean>
  /** Calls a tool by its name on the server, with the timeout; what the handlers do. */
  readonly call: (mcpName: string, params: McpTool.Params) => Effect.Effect<McpTool.Result, McpError.McpCallError>
}

/** The MCP server in use, when provided as a service (see `layer`). */
export class McpToolkit extends Context.Service<McpToolkit, Service>()("@chat-ts/mcp/McpToolkit") {}

/** The most pages of tools read from one server (a server that never stops paging is an error). */
const maxPages = 100

/** The largest timeout the SDK's own timers take: ours (on Effect's `Clock`) decides. */
const sdkTimeout = 2 ** 31 - 1

const makeTransport = (transport: Transport): SdkTransport =>
  transport._tag === "Stdio"
    ? new StdioClientTransport({
      command: transport.command,
      args: [...(transport.args ?? [])],
      ...(transport.env === undefined ? {} : { env: { ...transport.env } }),
      ...(transport.cwd === undefined ? {} : { cwd: transport.cwd }),
      stderr: transport.stderr ?? "inherit"
    })
    : new StreamableHTTPClientTransport(new URL(transport.url), {
      requestInit: {
        headers: Object.fromEntries(
          Object.entries(transport.headers ?? {}).map(([key, value]) => [key, Redacted.isRedacted(value) ? Redacted.value(value) : value])
        )
      }
    })

/** Where the server is, for errors (never the URL's query or credentials). */
const whereOf = (transport: Transport): string => {
  if (transport._tag === "Stdio") return transport.command
  const url = new URL(transport.url)
  return `${url.protocol}//${url.host}${url.pathname}`
}

/** The typed failure of a call that threw. */
const callError = (server: string, tool: string, error: unknown): McpError.McpCallError => {
  if (error instanceof SdkError) {
    if (error.code === ErrorCode.ConnectionClosed) return new McpError.McpServerClosed({ server, tool, detail: describe(error) })
    return new McpError.McpRequestError({ tool, code: error.code, detail: describe(error) })
  }
  // "Not connected", a failed fetch, a broken pipe: the request may or may not have reached the server.
  return new McpError.McpServerClosed({ server, tool, detail: describe(error) })
}

/** Connects to a server and lists its tools; the connection is closed when the scope closes. */
export const make = (options: Options): Effect.Effect<Service, McpError.McpConnectError, Scope.Scope> =>
  Effect.gen(function*() {
    const where = whereOf(options.transport)
    const connectTimeout = Duration.toMillis(options.connectTimeout ?? Duration.seconds(30))
    const timeout = Duration.fromInputUnsafe(options.timeout ?? Duration.seconds(60))
    const validator = new AjvJsonSchemaValidator()
    const strategy = options.strategy ?? McpStrategy.annotations
    let changes = 0

    const { client } = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async (signal) => {
          const client = new Client({ name: "chat-ts", version: "0.1.0" })
          client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++)
          const transport = makeTransport(options.transport)
          try {
            await client.connect(transport, { signal, timeout: connectTimeout })
          } catch (error) {
            await transport.close().catch(() => undefined)
            throw error
          }
          return { client, transport }
        },
        catch: (error) =>
          new McpError.McpConnectError({ server: options.name ?? where, detail: `could not connect to ${where}: ${describe(error)}` })
      }),
      ({ client, transport }) =>
        // An HTTP session is ended on the server too (a bounded DELETE), then the connection is closed.
        (transport instanceof StreamableHTTPClientTransport
          ? Effect.promise(() => transport.terminateSession().catch(() => undefined)).pipe(Effect.timeout("2 seconds"), Effect.ignore)
          : Effect.void).pipe(Effect.andThen(Effect.promise(() => client.close().catch(() => undefined))))
    )
    const server = options.name ?? client.getServerVersion()?.name ?? where

    const call = (mcpName: string, params: McpTool.Params): Effect.Effect<McpTool.Result, McpError.McpCallError> => {
      const request = Effect.tryPromise({
        // Interrupting the effect aborts the signal: the SDK sends `notifications/cancelled` to the server.
        try: (signal) =>
          client.callTool({ name: mcpName, arguments: params }, undefined, { signal, timeout: sdkTimeout }) as Promise<CallToolResult>,
        catch: (error) => callError(server, mcpName, error)
      })
      const bounded = Duration.isFinite(timeout)
        ? Effect.timeoutOrElse(request, {
          duration: timeout,
          orElse: () => Effect.fail(new McpError.McpCallTimeout({ tool: mcpName, timeoutMillis: Duration.toMillis(timeout) }))
        })
        : request
      return Effect.flatMap(bounded, (result) => {
        const mapped = McpTool.toResult(mcpName, result)
        return mapped instanceof McpError.McpToolError ? Effect.fail(mapped) : Effect.succeed(mapped)
      })
    }

    const list = Effect.tryPromise({
      try: async (signal) => {
        const tools: Array<ServerTool> = []
        let cursor: string | undefined
        for (let page = 0; page < maxPages; page++) {
          const result = await client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: connectTimeout })
          tools.push(...result.tools)
          cursor = result.nextCursor
          if (cursor === undefined) return tools
        }
        throw new Error(`the server sent more than ${maxPages} pages of tools`)
      },
      catch: (error) => new McpError.McpConnectError({ server, detail: `could not list the tools of ${where}: ${describe(error)}` })
    })

    // A tool the server did not change keeps its object, so its compiled schema and wire form are reused.
    let known = new Map<string, { readonly definition: string; readonly tool: McpTool.McpTool }>()
    /**
     * The snapshot of a list of tools. A tool no provider could be sent (a name with other characters
     * than letters, digits, `_` and `-`, a schema that is not an object) or a name listed twice is left
     * out with a warning, so one odd tool does not take the whole chat down.
     */
    const build = (tools: ReadonlyArray<ServerTool>, version: number): Effect.Effect<Snapshot> => {
      const next = new Map<string, { readonly definition: string; readonly tool: McpTool.McpTool }>()
      const skipped: Array<string> = []
      for (const definition of tools) {
        if (next.has(definition.name)) {
          skipped.push(`'${definition.name}' (listed twice)`)
          continue
        }
        const text = JSON.stringify(definition)
        const old = known.get(definition.name)
        const entry = old !== undefined && old.definition === text ? old : {
          definition: text,
          tool: McpTool.make(definition, { server, prefix: options.prefix, validator })
        }
        const wire = Tool.wire(entry.tool)
        if (Result.isFailure(wire)) skipped.push(`'${definition.name}' (${wire.failure.detail})`)
        else next.set(definition.name, entry)
      }
      known = next
      const list = [...next.values()].map((entry) => entry.tool)
      let handlers = Context.empty() as Context.Context<unknown>
      for (const tool of list) {
        handlers = Context.add(handlers, Tool.handlerTag(tool.name), {
          handle: (params: unknown) => callIfListed(tool.metadata.mcpName, params as McpTool.Params)
        })
      }
      const snapshot: Snapshot = {
        version,
        toolkit: Toolkit.withStrategy(Toolkit.make(...list) as unknown as Toolkit.Toolkit<McpStrategy.Tools>, strategy),
        handlers: handlers as Context.Context<Toolkit.HandlersOf<McpStrategy.Tools>>
      }
      return skipped.length === 0
        ? Effect.succeed(snapshot)
        : Effect.as(Effect.logWarning(`MCP server '${server}': tools left out: ${skipped.join("; ")}.`), snapshot)
    }

    /**
     * A handler's call: after a `tools/list_changed` the list is read again first, and a tool the
     * server no longer lists fails without being sent (a handler may outlive its snapshot mid-turn).
     */
    const callIfListed = (mcpName: string, params: McpTool.Params): Effect.Effect<McpTool.Result, McpError.McpCallError> =>
      Effect.flatMap(Effect.result(current), () =>
        known.has(mcpName)
          ? call(mcpName, params)
          : Effect.fail(
            new McpError.McpRequestError({
              tool: mcpName,
              code: -32602,
              detail: `There is no tool named '${mcpName}' on MCP server '${server}' any more (its tool list changed).`
            })
          ))

    let listedAt = changes
    let snapshot = yield* Effect.flatMap(list, (tools) => build(tools, 1))
    const lock = yield* Semaphore.make(1)
    const current = lock.withPermits(1)(Effect.suspend(() => {
      if (listedAt === changes) return Effect.succeed(snapshot)
      const seen = changes
      return list.pipe(
        Effect.flatMap((tools) => build(tools, snapshot.version + 1)),
        Effect.tap((next) =>
          Effect.sync(() => {
            listedAt = seen
            snapshot = next
          })
        )
      )
    }))

    return { server, client, current, stale: Effect.sync(() => listedAt !== changes), call } satisfies Service
  })

/** A layer providing `McpToolkit`: connected when built, closed when released. */
export const layer = (options: Options): Layer.Layer<McpToolkit, McpError.McpConnectError> => Layer.effect(McpToolkit, make(options))
