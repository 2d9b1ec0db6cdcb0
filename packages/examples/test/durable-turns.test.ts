/**
 * The durable-turns example on a real PostgreSQL (embedded, 127.0.0.1, a free
 * port): a runner as its own process (`npx tsx src/durable-turns.ts runner`,
 * listening on 127.0.0.1, port 0) and the `decide` command as another, as the
 * docs run them; the other client commands (`migrate`, `start`, `pending`,
 * `read`) run the example's `main` in this process (each a process of its own
 * would add seconds of start-up each). Every wait is bounded; the runner is
 * killed at the end.
 */
import { EmbeddedPostgres } from "@chat-ts/sql/testing"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { main } from "../src/durable-turns.js"
import { makeTranscript, withConsole } from "./support/capture.js"

const examplesDir = fileURLToPath(new URL("..", import.meta.url))
const tsx = fileURLToPath(new URL("../../../node_modules/.bin/tsx", import.meta.url))

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

describe("durable-turns example on PostgreSQL", () => {
  let server: EmbeddedPostgres.Server
  const runners: Array<ChildProcess> = []
  const env = () => ({ ...process.env, DATABASE_URL: server.url, NO_COLOR: "1" })

  /** Runs one command of the example in this process and returns what it printed. */
  const inProcess = (args: ReadonlyArray<string>): Promise<string> => {
    const transcript = makeTranscript()
    return Effect.runPromise(
      Effect.scoped(main(args) as Effect.Effect<unknown, unknown, never>).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { DATABASE_URL: server.url } })),
        withConsole(transcript),
        Effect.timeout("60 seconds")
      )
    ).then(() => transcript.text())
  }

  /** Runs one command of the example as its own process, to its end (bounded). */
  const command = (args: ReadonlyArray<string>, millis = 60_000): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(tsx, ["src/durable-turns.ts", ...args], { cwd: examplesDir, env: env(), stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`durable-turns ${args.join(" ")}: no end within ${millis} ms\n${stdout}\n${stderr}`))
      }, millis)
      child.on("error", (error) => (clearTimeout(timer), reject(error)))
      child.on("close", (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })))
    })

  /** Runs a command in this process again (bounded) until what it prints matches. */
  const until = async (args: ReadonlyArray<string>, pattern: RegExp, millis: number): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + millis
    let last = ""
    while (Date.now() < deadline) {
      // Before the turn first publishes, `pending` and `read` fail with TurnNotFound: try again.
      last = await inProcess(args).catch((error) => String(error))
      const match = last.match(pattern)
      if (match !== null) return match
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    throw new Error(`durable-turns ${args.join(" ")}: no ${pattern} within ${millis} ms; last printed:\n${last}`)
  }

  /** Starts a runner and waits (bounded) until it listens. */
  const startRunner = () =>
    new Promise<ChildProcess>((resolve, reject) => {
      const child = spawn(tsx, ["src/durable-turns.ts", "runner"], { cwd: examplesDir, env: env(), stdio: ["ignore", "pipe", "pipe"] })
      runners.push(child)
      let output = ""
      const timer = setTimeout(() => reject(new Error(`the runner did not listen within 60 s\n${output}`)), 60_000)
      const onData = (chunk: Buffer) => {
        output += chunk
        if (/Listening on: 127\.0\.0\.1:\d+/.test(output)) (clearTimeout(timer), resolve(child))
      }
      child.stdout!.on("data", onData)
      child.stderr!.on("data", onData)
      child.on("exit", (code) => (clearTimeout(timer), reject(new Error(`the runner exited (${code})\n${output}`))))
    })

  beforeAll(async () => {
    server = await EmbeddedPostgres.start()
  }, 120_000)

  afterAll(async () => {
    await Promise.all(runners.map((child) =>
      child.exitCode !== null || child.signalCode !== null
        ? undefined
        : new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000)
          child.on("exit", () => (clearTimeout(timer), resolve()))
          child.kill("SIGKILL")
        })
    ))
    await server?.stop()
  }, 60_000)

  it("a runner process and a decide process on PostgreSQL: start, pending, decide, read; a second decision is refused", async () => {
    await inProcess(["migrate"])
    await startRunner()

    const id = (await inProcess(["start", "invoice-7", "Pay the plumber."])).match(/started (\S+)/)?.[1]
    expect(id).toBeDefined()
    const [, call] = await until(["pending", id!], /^(\S+) pay_bill \{"payee":"plumber","amount":120\} \(AwaitingApproval\)$/m, 60_000)
    expect(await inProcess(["read", id!])).toMatch(/^Waiting: /m)

    // The decision comes from another process, which runs no turns.
    const decided = await command(["decide", id!, call!, "approve"])
    expect(decided).toMatchObject({ code: 0, stdout: expect.stringContaining(`approved ${call}`) })
    await until(["read", id!], /^Complete: The bill is handled\.$/m, 60_000)
    expect((await inProcess(["pending", id!])).trim()).toBe("")
    // A second decision is refused: the call was decided. A call the turn never made waits nowhere.
    expect(await inProcess(["decide", id!, call!, "reject"])).toContain(`${call} was already decided`)
    expect(await inProcess(["decide", id!, "call_9", "approve"])).toContain(`no call call_9 waits in ${id}`)
  }, 180_000)
})
