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
import * as Messages from "@chat-ts/core/Messages"
import * as Tool from "@chat-ts/core/Tool"
import * as Toolkit from "@chat-ts/core/Toolkit"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport as SdkTransport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  type CallToolResult,
  CallToolResultSchema,
  type ClientCapabilities,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  McpError as SdkError,
  type Tool as ServerTool,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Semaphore from "effect/Semaphore"
import type * as Scope from "effect/Scope"
import { describe, toPlain } from "./internal/json.js"
import * as McpElicitation from "./McpElicitation.js"
import * as McpError from "./McpError.js"
import * as McpSampling from "./McpSampling.js"
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
    /**
     * The largest message the server may send, in bytes (default `defaultMaxMessageBytes`, 64 MiB); a
     * larger one closes the connection (the SDK's own default, 10 MiB, closed it on a 4 MB image, which
     * servers send twice: in `content` and in `structuredContent`).
     */
    readonly maxMessageBytes?: number | undefined
  }
  | {
    readonly _tag: "Http"
    readonly url: string | URL
    /** Headers of every request (e.g. `Authorization`); give secrets as `Redacted` (from `Config.Redacted`). */
    readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  }

/** The largest message a stdio server may send unless its transport says (`maxMessageBytes`): 64 MiB. */
export const defaultMaxMessageBytes = 64 * 1024 * 1024

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
  /** The longest one call may take: then its cancellation is requested and it fails with `McpCallTimeout`, outcome unknown (default 60 seconds). */
  readonly timeout?: Duration.Input
  /** The longest connecting and listing the tools may take (default 30 seconds). */
  readonly connectTimeout?: Duration.Input
  /**
   * Answers the server's elicitation requests (form mode), e.g. `McpElicitation.inbox(…).handler`; given,
   * the client declares the `elicitation` capability. The call that triggered a request waits for it.
   */
  readonly elicitation?: McpElicitation.Handler
  /**
   * How long an elicitation request waits for its answer before the server is told "cancel" (default: the
   * call's `timeout`, since the call that triggered it waits too; 10 minutes if that has no end).
   */
  readonly elicitationTimeout?: Duration.Input
  /** Runs the server's sampling requests on a model under a strategy; given, the client declares `sampling`. */
  readonly sampling?: McpSampling.Options
  /**
   * The most characters of the text the model reads of one call's result (default core's
   * `ToolResult.defaultMaxChars`, 50,000); a longer one is cut with a marker (see `ToolResult`). A tool
   * the server gives `_meta["anthropic/maxResultSizeChars"]` has that cap instead, up to `serverMaxResultChars`.
   */
  readonly maxResultChars?: number
  /** The most a server's `anthropic/maxResultSizeChars` may raise one tool's cap to (default 500,000, Claude Code's ceiling; `0`: no server raises it; a lower value it gives is always taken). */
  readonly serverMaxResultChars?: number
  /**
   * The most bytes of files (the images its results carry, as stored: base64) one call's result keeps
   * (default core's `ToolResult.defaultMaxFileBytes`, 5 MiB): the images past it are not stored or
   * sent, each replaced by a note the model reads (see `ToolResult`).
   */
  readonly maxResultFileBytes?: number
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

/** The SDK transport of `transport`; `spawned` learns the pid of a stdio child as soon as it is started. */
const makeTransport = (transport: Transport, spawned: (pid: number) => void): SdkTransport => {
  if (transport._tag === "Http") {
    return new StreamableHTTPClientTransport(new URL(transport.url), {
      requestInit: {
        headers: Object.fromEntries(
          Object.entries(transport.headers ?? {}).map(([key, value]) => [key, Redacted.isRedacted(value) ? Redacted.value(value) : value])
        )
      }
    })
  }
  const stdio = new StdioClientTransport({
    command: transport.command,
    args: [...(transport.args ?? [])],
    ...(transport.env === undefined ? {} : { env: { ...transport.env } }),
    ...(transport.cwd === undefined ? {} : { cwd: transport.cwd }),
    stderr: transport.stderr ?? "inherit",
    maxBufferSize: transport.maxMessageBytes ?? defaultMaxMessageBytes
  })
  const start = stdio.start.bind(stdio)
  stdio.start = async () => {
    await start()
    if (stdio.pid !== null) spawned(stdio.pid)
  }
  return stdio
}

/** Whether the process `pid` still exists. */
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Kills a child we spawned (SIGKILL) if it still runs, and waits (at most 2 seconds) until it is gone:
 * a server that never answered, or that outlived the SDK's close, is never left behind.
 */
const killSpawned = (pid: number | undefined): Effect.Effect<void> =>
  pid === undefined ? Effect.void : Effect.sync(() => {
    if (isAlive(pid)) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Gone in between.
      }
    }
  }).pipe(
    Effect.andThen(Effect.sync(() => isAlive(pid)).pipe(
      Effect.repeat({ while: (up) => up, schedule: Schedule.spaced(Duration.millis(10)) }),
      Effect.timeout("2 seconds"),
      Effect.ignore
    ))
  )

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

/** The shortest and longest wait between two polls of a task (the server's `pollInterval`, clamped). */
const minPoll = 20
const maxPoll = 5_000

/**
 * Calls a tool that can only run as a task (MCP tasks): `tools/call` with `task` creates it, `tasks/get`
 * is polled (at the server's `pollInterval`, clamped to 20 ms – 5 s; the whole call stays bounded by the
 * call's timeout), and `tasks/result` gives its result once it is done (or, while it is `input_required`,
 * delivers the server's requests, e.g. an elicitation, and waits for the end). Interrupted (the turn, or
 * the timeout) after the task exists, it sends `tasks/cancel` (a request: the outcome stays unknown).
 */
const callAsTask = (client: Client, server: string, tool: string, params: McpTool.Params): Effect.Effect<CallToolResult, McpError.McpCallError> => {
  const attempt = <A>(run: (signal: AbortSignal) => Promise<A>) => Effect.tryPromise({ try: run, catch: (error) => callError(server, tool, error) })
  const options = (signal: AbortSignal) => ({ signal, timeout: sdkTimeout })
  const result = (taskId: string) =>
    attempt((signal) => client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, options(signal)) as Promise<CallToolResult>)
  const poll = (taskId: string): Effect.Effect<CallToolResult, McpError.McpCallError> =>
    Effect.flatMap(attempt((signal) => client.experimental.tasks.getTask(taskId, options(signal))), (task) => {
      switch (task.status) {
        case "completed":
        case "failed":
        case "input_required":
          return result(taskId)
        case "cancelled":
          return Effect.fail(
            new McpError.McpRequestError({ tool, code: ErrorCode.InternalError, detail: `The server cancelled task ${taskId}${task.statusMessage === undefined ? "" : `: ${task.statusMessage}`}.` })
          )
        default:
          return Effect.sleep(Duration.millis(Math.min(maxPoll, Math.max(minPoll, task.pollInterval ?? 1_000)))).pipe(
            Effect.andThen(Effect.suspend(() => poll(taskId)))
          )
      }
    })
  const cancel = (taskId: string) =>
    Effect.promise(() => client.experimental.tasks.cancelTask(taskId, { timeout: 2_000 }).catch(() => undefined)).pipe(
      Effect.timeout("3 seconds"),
      Effect.ignore
    )
  return attempt((signal) =>
    client.request({ method: "tools/call", params: { name: tool, arguments: params } }, CreateTaskResultSchema, { ...options(signal), task: {} })
  ).pipe(
    Effect.flatMap(({ task }) => poll(task.taskId).pipe(Effect.onInterrupt(() => cancel(task.taskId))))
  )
}

/** A chat call running on a server: its id, its name in the chat, and where it records requests for input. */
interface InFlight {
  readonly id: string
  readonly name: string
  readonly inputs: Tool.InputRecorder | undefined
}

/** The most elicitation requests one connection keeps waiting at once; more are answered "cancel" at once. */
export const maxPendingElicitations = 8
/** The longest elicitation message (characters) and requested schema (characters of JSON) taken; larger is answered "cancel". */
export const maxElicitationMessage = 8_000
export const maxElicitationSchema = 64_000

/** Why an elicitation request is answered "cancel" without asking anyone (too many waiting, too large), or `undefined`. */
const elicitationLimit = (pending: number, message: string, schema: unknown): string | undefined => {
  if (pending >= maxPendingElicitations) return `${maxPendingElicitations} requests already wait for an answer`
  if (message.length > maxElicitationMessage) return `its message is longer than ${maxElicitationMessage} characters`
  if (JSON.stringify(schema).length > maxElicitationSchema) return `its requested schema is larger than ${maxElicitationSchema} characters of JSON`
  return undefined
}

/** The client's capabilities: elicitation (form mode) and sampling, each only when it can be answered. */
const capabilities = (options: Options): ClientCapabilities => ({
  ...(options.elicitation === undefined ? {} : { elicitation: { form: {} } }),
  ...(options.sampling === undefined ? {} : { sampling: {} })
})

/** The text of a sampling message's content (a block or blocks; what is not text becomes a placeholder). */
const samplingText = (content: unknown): string =>
  (Array.isArray(content) ? content : [content]).map((block) => {
    const { type, text } = (typeof block === "object" && block !== null ? block : {}) as { type?: unknown; text?: unknown }
    return type === "text" && typeof text === "string" ? text : `[${typeof type === "string" ? type : "content"} not shown]`
  }).join("\n")

/**
 * Answers the server's own requests: `elicitation/create` through `options.elicitation` (within its
 * deadline; content that does not match the requested schema is sent as "cancel"; while it waits, the
 * request is recorded on the running calls it may come from, so the chat's state shows it), and
 * `sampling/createMessage` through `McpSampling.run` (a refusal is an error to the server, code -1).
 */
const answerServerRequests = (
  client: Client,
  options: Options,
  services: Context.Context<never>,
  validator: AjvJsonSchemaValidator,
  server: () => string,
  inFlight: () => ReadonlyArray<InFlight>
): void => {
  const run = Effect.runPromiseWith(services)
  const elicitation = options.elicitation
  if (elicitation !== undefined) {
    const callTimeout = Duration.fromInputUnsafe(options.timeout ?? Duration.seconds(60))
    const wait = Duration.fromInputUnsafe(
      options.elicitationTimeout ?? (Duration.isFinite(callTimeout) ? callTimeout : Duration.minutes(10))
    )
    let pending = 0
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      const params = request.params
      if (params.mode === "url") return Promise.reject(new SdkError(ErrorCode.InvalidParams, "URL-mode elicitation is not supported"))
      const schema = toPlain(params.requestedSchema) as Record<string, unknown>
      return run(Effect.gen(function*() {
        const limit = elicitationLimit(pending, params.message, schema)
        if (limit !== undefined) {
          yield* Effect.logWarning(`MCP server '${server()}': an elicitation request was answered "cancel" without asking anyone: ${limit}.`)
          return { action: "cancel" } satisfies ElicitResult
        }
        const now = yield* Clock.currentTimeMillis
        const calls = inFlight()
        const asked: McpElicitation.Request = {
          id: McpElicitation.nextId(),
          server: server(),
          calls: calls.map(({ id, name }) => ({ id, name })),
          message: params.message,
          requestedSchema: schema,
          deadline: now + Duration.toMillis(wait)
        }
        const recorded: Messages.InputRequest = {
          id: asked.id,
          from: asked.server,
          message: asked.message,
          requestedSchema: schema,
          deadline: asked.deadline
        }
        // Recorded in the chat's state (checkpointed, streamed) before anyone is asked, and settled however it ends.
        const record = Effect.forEach(calls, (call) => call.inputs?.requested(recorded) ?? Effect.void, { discard: true })
        const settle = Effect.forEach(calls, (call) => call.inputs?.settled(asked.id) ?? Effect.void, { discard: true })
        const answer = yield* Effect.acquireUseRelease(
          Effect.andThen(Effect.sync(() => void pending++), record),
          () => elicitation(asked).pipe(Effect.timeoutOrElse({ duration: wait, orElse: () => Effect.succeed(McpElicitation.cancel) })),
          () => Effect.andThen(Effect.sync(() => void pending--), settle)
        )
        if (answer._tag !== "Accept") return { action: answer._tag === "Decline" ? "decline" : "cancel" } satisfies ElicitResult
        const problem = McpElicitation.check(validator, schema, answer.content)
        if (problem === undefined) return { action: "accept", content: toPlain(answer.content) } as ElicitResult
        yield* Effect.logWarning(`MCP server '${asked.server}': an answer to ${asked.id} did not match its schema (${problem}); sent "cancel".`)
        return { action: "cancel" } satisfies ElicitResult
      }), { signal: extra.signal })
    })
  }
  const sampling = options.sampling
  if (sampling !== undefined) {
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => {
      const params = request.params
      const asked: McpSampling.Request = {
        id: McpSampling.nextId(),
        server: server(),
        calls: inFlight().map(({ id, name }) => ({ id, name })),
        messages: params.messages.map((message) =>
          message.role === "user" ? Messages.user(samplingText(message.content)) : Messages.assistant(samplingText(message.content))
        ),
        systemPrompt: params.systemPrompt,
        maxTokens: params.maxTokens,
        temperature: params.temperature
      }
      return run(McpSampling.run(sampling, asked), { signal: extra.signal }).then((outcome) => {
        if (outcome._tag === "Refused") throw new SdkError(-1, `Sampling request refused: ${outcome.reason}`)
        return {
          role: "assistant",
          content: { type: "text", text: outcome.text },
          model: "chat-ts",
          stopReason: outcome.stopReason
        } satisfies CreateMessageResult
      })
    })
  }
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

    let pid: number | undefined
    let closed = false
    let named = options.name ?? where
    /** The chat's calls to this server that are running now (what a request of the server may come from). */
    const running = new Set<InFlight>()
    const whileRunning = <A, E>(call: Tool.CallInfo, effect: Effect.Effect<A, E>) =>
      Effect.suspend(() => {
        const entry: InFlight = { id: call.id, name: call.name, inputs: call.inputs }
        running.add(entry)
        return Effect.ensuring(effect, Effect.sync(() => void running.delete(entry)))
      })
    const services = yield* Effect.context<never>()
    /** Ends the connection once: the HTTP session (a bounded DELETE), the client, and the child we spawned. */
    const shutdown = (client: Client, transport: SdkTransport): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (closed) return Effect.void
        closed = true
        return (transport instanceof StreamableHTTPClientTransport
          ? Effect.promise(() => transport.terminateSession().catch(() => undefined)).pipe(Effect.timeout("2 seconds"), Effect.ignore)
          : Effect.void).pipe(
            Effect.andThen(Effect.promise(() => client.close().catch(() => undefined)).pipe(Effect.timeout("5 seconds"), Effect.ignore)),
            Effect.andThen(Effect.suspend(() => killSpawned(pid)))
          )
      })

    const { client, transport } = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async (signal) => {
          const client = new Client({ name: "chat-ts", version: "0.1.0" }, { capabilities: capabilities(options) })
          client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++)
          answerServerRequests(client, options, services, validator, () => named, () => [...running])
          const transport = makeTransport(options.transport, (started) => void (pid = started))
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
      }).pipe(
        // A failed connect kills what it spawned before failing (the SDK's own close waits seconds, and not for us).
        Effect.onError(() => Effect.suspend(() => killSpawned(pid)))
      ),
      ({ client, transport }) => shutdown(client, transport)
    )
    const server = options.name ?? client.getServerVersion()?.name ?? where
    named = server

    /** The tools the server can only run as tasks (`execution.taskSupport: "required"`), as last listed. */
    let taskOnly = new Set<string>()

    const call = (mcpName: string, params: McpTool.Params): Effect.Effect<McpTool.Result, McpError.McpCallError> => {
      const request = taskOnly.has(mcpName) ? callAsTask(client, server, mcpName, params) : Effect.tryPromise({
        // Interrupting the effect aborts the signal: the SDK sends `notifications/cancelled` to the server.
        try: (signal) =>
          client.callTool({ name: mcpName, arguments: params }, undefined, { signal, timeout: sdkTimeout }) as Promise<CallToolResult>,
        catch: (error) => callError(server, mcpName, error)
      })
      const bounded = Duration.isFinite(timeout)
        ? Effect.timeoutOrElse(request, {
          duration: timeout,
          orElse: () => Effect.fail(McpError.timedOut(mcpName, Duration.toMillis(timeout)))
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
          tool: McpTool.make(definition, {
            server,
            prefix: options.prefix,
            validator,
            maxResultChars: options.maxResultChars,
            serverMaxResultChars: options.serverMaxResultChars,
            maxResultFileBytes: options.maxResultFileBytes
          })
        }
        const wire = Tool.wire(entry.tool)
        if (Result.isFailure(wire)) skipped.push(`'${definition.name}' (${wire.failure.detail})`)
        else next.set(definition.name, entry)
      }
      known = next
      taskOnly = new Set(tools.filter((tool) => tool.execution?.taskSupport === "required").map((tool) => tool.name))
      const list = [...next.values()].map((entry) => entry.tool)
      let handlers = Context.empty() as Context.Context<unknown>
      for (const tool of list) {
        handlers = Context.add(handlers, Tool.handlerTag(tool.name), {
          handle: (params: unknown, info: Tool.CallInfo) =>
            whileRunning(info, callIfListed(tool.metadata.mcpName, params as McpTool.Params))
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
    // Listing fails or is interrupted: the connection (and its child) ends now, not when the caller's scope closes.
    let snapshot = yield* Effect.flatMap(list, (tools) => build(tools, 1)).pipe(Effect.onError(() => shutdown(client, transport)))
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
