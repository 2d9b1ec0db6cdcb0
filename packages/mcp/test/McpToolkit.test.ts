/**
 * One connection: its lifetime (closed with the scope), per-call timeouts,
 * cancellation when a turn is interrupted, and a server that crashes mid-call.
 * The servers are real child processes; every wait is bounded.
 */
import { Messages, Tool } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Fiber, Logger, Redacted, Result, Schedule, Scope } from "effect"
import { McpChat, McpError, McpToolkit } from "../src/index.js"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { alive, httpServer, serverPath, stats, stdio, transports, until, untilStale } from "./support/servers.js"

/** The pids of this process's children (Linux). */
const childPids = (): ReadonlyArray<number> => {
  try {
    return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter((pid) => pid !== "").map(Number)
  } catch {
    return []
  }
}

const silentPath = fileURLToPath(new URL("./support/silent.mjs", import.meta.url))

const ask = Messages.fromUser("Go.")

/** Waits (at most 15 seconds) until `check` holds. */
const eventually = (check: () => boolean) =>
  Effect.sync(check).pipe(
    Effect.filterOrFail((ok) => ok, () => new Error("not yet")),
    Effect.retry(Schedule.spaced(Duration.millis(20))),
    Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.fail(new Error("never happened")) })
  )

describe("McpToolkit", () => {
  it.live("the connection is closed with its scope: the stdio server process ends", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* McpToolkit.make({ transport: stdio }).pipe(Scope.provide(scope))
      const { pid } = yield* stats(server)
      expect(alive(pid)).toBe(true)
      yield* Scope.close(scope, Exit.void)
      yield* eventually(() => !alive(pid))
      // A call after the close is a typed error, not a hang or a reconnect.
      const after = yield* Effect.result(server.call("read_file", { path: "notes.txt" }))
      expect(Result.isFailure(after) && after.failure._tag).toBe("McpServerClosed")
    }))

  it.live("a server that never answers initialize: McpConnectError, and the child we spawned is gone (killed at once)", () =>
    Effect.gen(function*() {
      const pidFile = join(mkdtempSync(join(tmpdir(), "chat-ts-mcp-")), "pid")
      const started = yield* Effect.result(McpToolkit.make({
        transport: McpToolkit.stdio(process.execPath, { args: [silentPath, pidFile], stderr: "ignore" }),
        connectTimeout: Duration.millis(500)
      }))
      expect(Result.isFailure(started) && started.failure._tag).toBe("McpConnectError")
      const pid = Number(readFileSync(pidFile, "utf8"))
      expect(pid).toBeGreaterThan(0)
      // Gone when make has failed (a bounded wait for the OS to reap it), not seconds later or never.
      yield* Effect.sync(() => alive(pid)).pipe(
        Effect.filterOrFail((up) => !up, () => new Error("still running")),
        Effect.retry(Schedule.spaced(Duration.millis(20))),
        Effect.timeoutOrElse({ duration: "1 second", orElse: () => Effect.fail(new Error(`the child ${pid} outlived the failed connect`)) })
      )
    }).pipe(Effect.scoped))

  it.live("a server that never lists its tools: McpConnectError, and its process ends then, not when the scope closes", () =>
    Effect.gen(function*() {
      const before = new Set(childPids())
      const started = yield* Effect.result(McpToolkit.make({
        transport: McpToolkit.stdio(process.execPath, { args: [serverPath, "--stall-list"], stderr: "ignore" }),
        connectTimeout: Duration.millis(500)
      }))
      expect(Result.isFailure(started) && started.failure.detail).toContain("could not list the tools")
      // Still inside the caller's scope: nothing we spawned for it is left.
      yield* eventually(() => childPids().every((pid) => before.has(pid)))
    }).pipe(Effect.scoped))

  it.live("layer: the server as a service, released with the layer", () =>
    Effect.gen(function*() {
      let pid = 0
      yield* Effect.gen(function*() {
        const server = yield* McpToolkit.McpToolkit
        pid = (yield* stats(server)).pid
        expect(server.server).toBe("test-files")
      }).pipe(Effect.provide(McpToolkit.layer({ transport: stdio })))
      yield* eventually(() => !alive(pid))
    }))

  it.live("a handler of a tool the server stopped listing fails clearly without sending the call", () =>
    Effect.gen(function*() {
      const server = yield* McpToolkit.make({ transport: stdio })
      const snapshot = yield* server.current
      const remove = Context.getUnsafe(snapshot.handlers as Context.Context<unknown>, Tool.handlerTag("delete_file")) as Tool.HandlerService
      yield* server.call("set_hidden", { names: ["delete_file"] })
      yield* untilStale(server)
      const result = yield* Effect.result(remove.handle({ path: "notes.txt" }, { id: "c1", name: "delete_file", attempt: 1 }))
      expect(Result.isFailure(result) && result.failure).toMatchObject({
        _tag: "McpRequestError",
        tool: "delete_file",
        detail: expect.stringContaining("There is no tool named 'delete_file'")
      })
      expect((yield* stats(server)).calls.delete_file).toBeUndefined()
      // Listed again, the same handler reaches the server.
      yield* server.call("set_hidden", { names: [] })
      yield* untilStale(server)
      yield* remove.handle({ path: "notes.txt" }, { id: "c2", name: "delete_file", attempt: 1 })
      expect((yield* stats(server)).calls.delete_file).toBe(1)
    }).pipe(Effect.scoped))

  for (const [name, transport] of transports) {
    it.live(`a call past its timeout fails with McpCallTimeout, outcome unknown; its cancellation is requested (${name})`, () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport, timeout: Duration.millis(300) })
        const result = yield* Effect.result(server.call("slow", {}))
        const failure = Result.isFailure(result) ? result.failure : undefined
        expect(failure).toEqual(McpError.timedOut("slow", 300))
        expect(failure).toMatchObject({ _tag: "McpCallTimeout", tool: "slow", timeoutMillis: 300, outcome: "unknown" })
        // The text never claims the server stopped: cancelling is a request.
        for (const text of [failure!.message, (failure as McpError.McpCallTimeout).detail!]) {
          expect(text).toContain("outcome is unknown")
          expect(text).not.toMatch(/was cancelled/)
        }
        const counted = yield* until(server, (s) => s.cancelled === 1)
        expect(counted.calls.slow).toBeUndefined()
      }).pipe(Effect.scoped))

    it.live(`interrupting a turn cancels the MCP request; the call is recorded as interrupted, never run again (${name})`, () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport })
        const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "s", name: "slow" }])])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        let latest: Messages.Messages = ask
        const turn = yield* Effect.forkChild(chat.complete(ask, { checkpoint: (messages) => Effect.sync(() => void (latest = messages)) }))
        yield* until(server, (s) => s.started.slow === 1)
        yield* Fiber.interrupt(turn)
        const counted = yield* until(server, (s) => s.cancelled === 1)
        expect(counted.calls.slow).toBeUndefined()
        expect(Messages.findTool(latest, "s")?.status._tag).toBe("Failed")
      }).pipe(Effect.scoped))
  }

  it.live("a stdio server killed mid-call: the call fails with McpServerClosed, once, and the turn goes on", () =>
    Effect.gen(function*() {
      const server = yield* McpToolkit.make({ transport: stdio })
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "s", name: "slow" }]),
        MockLanguageModel.text("The server went away.")
      ])
      const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
      const turn = yield* Effect.forkChild(chat.complete(ask))
      const { pid } = yield* until(server, (s) => s.started.slow === 1)
      process.kill(pid, "SIGKILL")
      const result = yield* Fiber.join(turn).pipe(
        Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.fail(new Error("the turn never ended")) })
      )
      expect(result.outcome._tag).toBe("Complete")
      const status = Messages.findTool(result.messages, "s")?.status
      expect(status).toMatchObject({ _tag: "Failed", error: { _tag: "McpServerClosed", server: "test-files", tool: "slow" } })
      // The model was told; nothing was retried (the server is gone, and a later call fails at once).
      expect(model.requests).toHaveLength(2)
      const again = yield* Effect.result(server.call("slow", {}))
      expect(Result.isFailure(again) && again.failure._tag).toBe("McpServerClosed")
    }).pipe(Effect.scoped))

  it.live("a tool no provider could take, or a name listed twice, is left out with a warning; the others work", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => void logs.push(String(message)))
      const server = yield* McpToolkit.make({
        transport: McpToolkit.stdio(process.execPath, { args: [serverPath, "--bad-tool", "--dup-tool"], stderr: "ignore" })
      }).pipe(Effect.provide(Logger.layer([logger])))
      const { toolkit } = yield* server.current
      expect(toolkit.list.map((tool) => tool.name)).not.toContain("bad.name")
      expect(toolkit.list.filter((tool) => tool.name === "read_file").map((tool) => tool.description)).toEqual(["Read a file."])
      expect(logs.join("\n")).toContain("'bad.name' (its name must be 1 to 64 letters")
      expect(logs.join("\n")).toContain("'read_file' (listed twice)")
    }).pipe(Effect.scoped))

  it.live("closing the scope of an HTTP connection ends its session on the server", () =>
    Effect.gen(function*() {
      const url = yield* httpServer
      const watcher = yield* McpToolkit.make({ transport: McpToolkit.http(url) })
      const scope = yield* Scope.make()
      yield* McpToolkit.make({ transport: McpToolkit.http(url) }).pipe(Scope.provide(scope))
      expect((yield* stats(watcher)).sessions).toBe(2)
      yield* Scope.close(scope, Exit.void)
      yield* until(watcher, (s) => s.sessions === 1)
    }).pipe(Effect.scoped))

  it.live("headers given as Redacted reach the server (HTTP) and never appear in errors", () =>
    Effect.gen(function*() {
      const url = yield* httpServer
      const server = yield* McpToolkit.make({
        transport: McpToolkit.http(url, { headers: { Authorization: Redacted.make("Bearer s3cret") } })
      })
      expect((yield* stats(server)).authorization).toBe("Bearer s3cret")
      const refused = yield* Effect.result(McpToolkit.make({
        transport: McpToolkit.http("http://127.0.0.1:9/mcp", { headers: { Authorization: Redacted.make("Bearer s3cret") } })
      }))
      expect(Result.isFailure(refused) && refused.failure._tag).toBe("McpConnectError")
      expect(JSON.stringify(refused)).not.toContain("s3cret")
    }).pipe(Effect.scoped))
})
