/**
 * The test MCP server (support/server.mjs, written with the same SDK) started
 * as a real child process: over stdio, or over Streamable HTTP on 127.0.0.1
 * with port 0. Every wait here is bounded.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Duration, Effect, Schedule, type Scope } from "effect"
import { McpToolkit } from "../../src/index.js"

export const serverPath = fileURLToPath(new URL("./server.mjs", import.meta.url))

/** The transport of a stdio server (a new child process per connection). */
export const stdio = McpToolkit.stdio(process.execPath, { args: [serverPath], stderr: "ignore" })

/** Starts the server in HTTP mode; its URL. The process is killed when the scope closes. */
export const httpServer: Effect.Effect<URL, Error, Scope.Scope> = Effect.suspend(() => httpServerOf(serverPath))

/** Starts the server script at `script` with `--http`; its URL. The process is killed when the scope closes. */
export const httpServerOf = (script: string): Effect.Effect<URL, Error, Scope.Scope> => Effect.gen(function*() {
  const child = yield* Effect.acquireRelease(
    Effect.sync(() => spawn(process.execPath, [script, "--http"], { stdio: ["ignore", "pipe", "ignore"] })),
    (child) => Effect.sync(() => void child.kill("SIGKILL"))
  )
  const port = yield* Effect.callback<number, Error>((resume) => {
    let out = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const match = /listening (\d+)/.exec(out)
      if (match !== null) resume(Effect.succeed(Number(match[1])))
    })
    child.on("exit", (code) => resume(Effect.fail(new Error(`the HTTP server exited (${code})`))))
  }).pipe(Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(new Error("the HTTP server did not start")) }))
  return new URL(`http://127.0.0.1:${port}/mcp`)
})

/** The stand-in for the reference "everything" server (support/everything.mjs). */
export const everythingPath = fileURLToPath(new URL("./everything.mjs", import.meta.url))

/** The "everything" stand-in over both transports, for tests that run on each. */
export const everythingTransports: ReadonlyArray<readonly [string, Effect.Effect<McpToolkit.Transport, Error, Scope.Scope>]> = [
  ["stdio", Effect.succeed(McpToolkit.stdio(process.execPath, { args: [everythingPath], stderr: "ignore" }))],
  ["Streamable HTTP", Effect.map(httpServerOf(everythingPath), (url) => McpToolkit.http(url))]
]

/** Both transports, for tests that run on each. */
export const transports: ReadonlyArray<readonly [string, Effect.Effect<McpToolkit.Transport, Error, Scope.Scope>]> = [
  ["stdio", Effect.succeed(stdio)],
  ["Streamable HTTP", Effect.map(httpServer, (url) => McpToolkit.http(url))]
]

/** What the server counted. */
export interface Stats {
  /** Calls that ran to the end, by tool. */
  readonly calls: Record<string, number>
  /** Calls that started, by tool. */
  readonly started: Record<string, number>
  readonly cancelled: number
  readonly pid: number
  /** The Authorization header of the `stats` request (HTTP only). */
  readonly authorization: string | null
  /** How many HTTP sessions are open (null over stdio). */
  readonly sessions: number | null
}

/** Asks the server what it counted (the `stats` tool, called directly, not through a chat). */
export const stats = (server: McpToolkit.Service): Effect.Effect<Stats, unknown> =>
  Effect.map(server.call("stats", {}), (result) => JSON.parse((result.content[0] as { text: string }).text) as Stats)

/** Waits (polling, at most 15 seconds) until the server's counts satisfy `done`. */
export const until = (server: McpToolkit.Service, done: (stats: Stats) => boolean): Effect.Effect<Stats, unknown> =>
  stats(server).pipe(
    Effect.filterOrFail(done, () => new Error("not yet")),
    Effect.retry(Schedule.spaced(Duration.millis(20))),
    Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.fail(new Error("the server never reached the expected state")) })
  )

/** Waits (at most 15 seconds) until the server said its tool list changed. */
export const untilStale = (server: McpToolkit.Service): Effect.Effect<void, Error> =>
  server.stale.pipe(
    Effect.filterOrFail((stale) => stale, () => new Error("not yet")),
    Effect.retry(Schedule.spaced(Duration.millis(10))),
    Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.fail(new Error("no tools/list_changed arrived")) }),
    Effect.asVoid
  )

/** Whether a process is alive. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

