/**
 * The reference "everything" MCP server from npm (`@modelcontextprotocol/server-everything`, a
 * devDependency), run unchanged as a real child process: over stdio (spawned by `McpToolkit`), or over
 * Streamable HTTP (spawned here with `PORT=0`, pinned to 127.0.0.1 by support/loopback.mjs). Every wait
 * is bounded, and each process is killed (and waited for) when its scope closes.
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, type Scope } from "effect"
import { McpToolkit } from "../../src/index.js"

const packageJson = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")

/** The server's program, as its package's `bin` names it. */
export const everythingBin = join(
  dirname(packageJson),
  (JSON.parse(readFileSync(packageJson, "utf8")) as { readonly bin: Record<string, string> }).bin["mcp-server-everything"]!
)

const loopback = pathToFileURL(fileURLToPath(new URL("./loopback.mjs", import.meta.url))).href

/** A started (or startable) reference server: how to reach it, and which process it is once connected. */
export interface Everything {
  readonly transport: McpToolkit.Transport
  /** The server's process id, once `server` is connected to it. */
  readonly pid: (server: McpToolkit.Service) => number
}

/** Over stdio: a new child process per connection, started and killed by `McpToolkit`. */
const overStdio: Effect.Effect<Everything> = Effect.succeed({
  transport: McpToolkit.stdio(process.execPath, { args: [everythingBin, "stdio"], stderr: "ignore" }),
  pid: (server) => {
    const pid = (server.client.transport as StdioClientTransport | undefined)?.pid
    if (pid === null || pid === undefined) throw new Error("the stdio server has no process")
    return pid
  }
})

/** Over Streamable HTTP on 127.0.0.1 (a free port): the process is killed, and waited for, when the scope closes. */
const overHttp: Effect.Effect<Everything, Error, Scope.Scope> = Effect.gen(function*() {
  const child = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["--import", loopback, everythingBin, "streamableHttp"], {
        env: { ...process.env, PORT: "0" },
        stdio: ["ignore", "ignore", "pipe"]
      })
    ),
    (child) =>
      Effect.callback<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.kill("SIGKILL")
      }).pipe(Effect.timeout("5 seconds"), Effect.ignore)
  )
  const port = yield* Effect.callback<number, Error>((resume) => {
    let err = ""
    // Read stderr to the end (a full pipe would stall the server); the port is in loopback.mjs's line.
    child.stderr!.on("data", (chunk: Buffer) => {
      if (err.length > 10_000) return
      err += chunk.toString("utf8")
      const match = /loopback listening (\d+)/.exec(err)
      if (match !== null) resume(Effect.succeed(Number(match[1])))
    })
    child.once("exit", (code) => resume(Effect.fail(new Error(`the everything server exited (${code}): ${err}`))))
  }).pipe(Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(new Error("the everything server did not start")) }))
  const pid = child.pid!
  return { transport: McpToolkit.http(new URL(`http://127.0.0.1:${port}/mcp`)), pid: () => pid }
})

/** The reference server over both transports, for tests that run on each. */
export const everythingServers: ReadonlyArray<readonly [string, Effect.Effect<Everything, Error, Scope.Scope>]> = [
  ["stdio", overStdio],
  ["Streamable HTTP", overHttp]
]
