/**
 * A crash while a person is asked, with real processes: a worker process (support/elicitingWorker.ts)
 * runs a turn whose call to the reference "everything" server elicits, saves every checkpoint to a
 * file, and is killed with SIGKILL while the request waits. The file it left shows the request on the
 * running call; resuming it in this process, on a new connection, records the request as lost with
 * the connection (the call failed, its outcome unknown), tells the model, and never sends the call
 * again. Every wait is bounded; every process started is gone at the end.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Result, Schedule } from "effect"
import { McpChat, McpElicitation, McpToolkit } from "../src/index.js"
import { everythingBin } from "./support/reference.js"
import { alive } from "./support/servers.js"

const worker = fileURLToPath(new URL("./support/elicitingWorker.ts", import.meta.url))
const tsx = fileURLToPath(new URL("../../../node_modules/tsx/dist/loader.mjs", import.meta.url))

/** Waits (at most `within`) until process `pid` is gone. */
const gone = (pid: number, within: Duration.Input = "10 seconds") =>
  Effect.sync(() => alive(pid)).pipe(
    Effect.repeat({ while: (up) => up, schedule: Schedule.spaced(Duration.millis(50)) }),
    Effect.timeoutOrElse({ duration: within, orElse: () => Effect.die(new Error(`process ${pid} is still running`)) })
  )

/** Starts the worker; the first line it prints (bounded), and the child. The child is killed when the scope closes. */
const startWorker = (stateFile: string) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--import", tsx, worker], {
          cwd: fileURLToPath(new URL("..", import.meta.url)),
          env: { ...process.env, STATE_FILE: stateFile },
          stdio: ["ignore", "pipe", "inherit"]
        })
      ),
      (child) => Effect.sync(() => void child.kill("SIGKILL"))
    )
    const line = yield* Effect.callback<string, Error>((resume) => {
      readline.createInterface({ input: child.stdout! }).once("line", (line) => resume(Effect.succeed(line)))
      child.once("exit", (code) => resume(Effect.fail(new Error(`the worker exited (${code}) before it was asked`))))
    }).pipe(Effect.timeoutOrElse({ duration: "60 seconds", orElse: () => Effect.fail(new Error("the worker was never asked")) }))
    return { child, ...(JSON.parse(line) as { readonly asked: string; readonly serverPid: number }) }
  })

describe("a worker killed while a person is asked (real processes, kill -9)", () => {
  it.live("the stored request is recorded as lost with the connection: the call failed, outcome unknown, never sent again", () =>
    Effect.gen(function*() {
      const folder = fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-elicit-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(folder, { recursive: true, force: true })))
      const stateFile = path.join(folder, "conversation.json")

      const { asked, child, serverPid } = yield* startWorker(stateFile)
      // While the person is asked, the stored state shows the request on the running call.
      const waiting = yield* Effect.fromResult(Messages.fromJson(fs.readFileSync(stateFile, "utf8")))
      const [pending] = Messages.pendingInputs(waiting)
      expect(pending?.call.id).toBe("e")
      expect(pending?.call.status._tag).toBe("Running")
      expect(pending?.request).toMatchObject({ id: asked, from: "mcp-servers/everything", message: "Please provide inputs for the following fields:" })

      child.kill("SIGKILL")
      yield* gone(child.pid!)
      // The server it spawned lost its client (its stdin closed); a stdio server may not exit on that
      // (nobody is left to kill it after a kill -9): this test kills it if it lingers.
      yield* gone(serverPid, "2 seconds").pipe(Effect.catchDefect(() => Effect.sync(() => process.kill(serverPid, "SIGKILL"))))
      yield* gone(serverPid)

      // The next process: what the store held, a new connection, nobody to answer what was asked before.
      const stored = yield* Effect.fromResult(Messages.fromJson(fs.readFileSync(stateFile, "utf8")))
      expect(Messages.pendingInputs(stored).map((input) => input.request.id)).toEqual([asked])
      const inbox = yield* McpElicitation.inbox()
      const server = yield* McpToolkit.make({
        transport: McpToolkit.stdio(process.execPath, { args: [everythingBin, "stdio"], stderr: "ignore" }),
        elicitation: inbox.handler
      })
      const model = MockLanguageModel.make([MockLanguageModel.text("Your sign-up may not have gone through.")])
      const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
      // Were the call sent again, the server would ask again and this turn would wait for a person.
      const done = yield* chat.resume(stored).pipe(Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.die(new Error("the resumed turn waited")) }))
      expect(done.outcome._tag).toBe("Complete")
      const status = Messages.findTool(done.messages, "e")?.status
      expect(status?._tag).toBe("Failed")
      const error = status?._tag === "Failed" ? String(status.error) : ""
      expect(error).toContain(`(${asked}, from mcp-servers/everything)`)
      expect(error).toContain("lost with the connection")
      expect(error).toContain("outcome is unknown")
      expect(JSON.stringify(Messages.projectToolCall(Messages.findTool(model.requests[0]!.messages, "e")!))).toContain("lost with the connection")
      expect(yield* inbox.pending).toEqual([])
      expect(Messages.pendingInputs(done.messages)).toEqual([])
      expect(Result.isSuccess(Messages.toJson(done.messages))).toBe(true)
    }).pipe(Effect.scoped), 120_000)
})
