/**
 * A crash in the middle of a burst of input (issue 37): a real process streams a turn with an input
 * side, checkpointing to SQLite; input interrupts its answer (the restart is checkpointed) and the
 * process is killed with `kill -9` while the restarted answer streams. A second process resumes from
 * the store: the paid bill is not paid again, each input is in the conversation exactly once, and
 * the model answers it.
 */
import { ConversationStore, Messages, Turn } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { SqlConversationStore } from "../src/index.js"
import { sqliteClient, tempDatabase, uniqueTable } from "./support/Databases.js"

const script = fileURLToPath(new URL("./support/inputWorker.ts", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))

interface Line {
  readonly ready?: boolean
  readonly event?: string
  readonly done?: boolean
  readonly error?: string
}

/** A worker process and a bounded wait for a line of its output matching `until`. */
const start = (env: Record<string, string>) => {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: packageDir,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const lines: Array<Line> = []
  const waiters: Array<{ until: (line: Line) => boolean; resolve: () => void }> = []
  readline.createInterface({ input: child.stdout }).on("line", (text) => {
    const line = JSON.parse(text) as Line
    lines.push(line)
    for (const waiter of waiters.splice(0)) {
      if (waiter.until(line)) waiter.resolve()
      else waiters.push(waiter)
    }
  })
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  const waitFor = (until: (line: Line) => boolean, what: string, millis = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: not within ${millis} ms; stderr: ${stderr}`)), millis)
      const done = () => (clearTimeout(timer), resolve())
      if (lines.some(until)) return done()
      waiters.push({ until, resolve: done })
      void exited.then(() => setTimeout(() => reject(new Error(`${what}: the process exited; stderr: ${stderr}`)), 50))
    })
  return { child, lines, waitFor, exited }
}

const userTexts = (messages: Messages.Messages) =>
  messages.filter((message) => message.role === "user").map((message) => Messages.textOf(message))

describe("input during an answer, crash and resume (SQLite, real processes)", () => {
  it("kill -9 while the restarted answer streams: the resumed turn runs nothing twice and answers the input once", async () => {
    const file = tempDatabase()
    const table = uniqueTable()
    const runsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-runs-")), "runs.log")
    const env = { SQLITE_FILE: file, TABLE: table, RUNS_FILE: runsFile, CONVERSATION: "barge-in" }

    const victim = start({ ...env, DELAY_MS: "150" })
    try {
      // The bill is paid, the answer starts streaming: the user types a burst.
      await victim.waitFor((line) => line.event === "ToolResult", "the call ran")
      await victim.waitFor((line) => line.event === "TextDelta", "the answer streams")
      victim.child.stdin.write("one\ntwo\n")
      await victim.waitFor((line) => line.event === "AnswerInterrupted", "the answer was interrupted")
      const deltas = victim.lines.filter((line) => line.event === "TextDelta").length
      await victim.waitFor(() => victim.lines.filter((line) => line.event === "TextDelta").length > deltas, "the restart streams")
      victim.child.kill("SIGKILL")
      await victim.exited
    } finally {
      if (victim.child.exitCode === null && victim.child.signalCode === null) victim.child.kill("SIGKILL")
    }
    expect(victim.lines.some((line) => line.done === true)).toBe(false)

    const store = SqlConversationStore.layer({ table }).pipe(Layer.provideMerge(sqliteClient(file)), Layer.orDie)
    const load = Effect.runPromise(
      Effect.flatMap(ConversationStore.ConversationStore, (s) => s.load("barge-in")).pipe(Effect.map(Option.getOrThrow), Effect.provide(store))
    )
    const crashed = (await load).messages
    // The restart was checkpointed before the crash: the cut answer and the burst, merged, are stored.
    expect(userTexts(crashed)).toEqual(["Pay the bill.", "onetwo"])
    expect(Turn.inputRestarts(crashed)).toBe(1)

    const resumer = start({ ...env, DELAY_MS: "1" })
    try {
      await resumer.waitFor((line) => line.done === true, "the resumed turn completes")
    } finally {
      if (resumer.child.exitCode === null && resumer.child.signalCode === null) resumer.child.kill("SIGKILL")
      await resumer.exited
    }
    const runs = fs.readFileSync(runsFile, "utf8").split("\n").filter((line) => line !== "")
    expect(runs).toHaveLength(1)
    const final = (await Effect.runPromise(
      Effect.flatMap(ConversationStore.ConversationStore, (s) => s.load("barge-in")).pipe(Effect.map(Option.getOrThrow), Effect.provide(store))
    )).messages
    expect(userTexts(final)).toEqual(["Pay the bill.", "onetwo"])
    expect(final.at(-1)?.role).toBe("assistant")
    expect(Messages.textOf(final.at(-1)!)).toContain("anything else")
    expect(Messages.toolCalls(final).filter((call) => call.status._tag === "Completed")).toHaveLength(1)
  }, 120_000)
})
