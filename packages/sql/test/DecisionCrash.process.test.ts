/**
 * kill -9 between every pair of statements of one decision, on PostgreSQL and
 * SQLite. A reference worker process counts the statements of a decision (the
 * lease and the load, the approval saved with the call `Running`, the result,
 * the answer saved with the release); then one worker process per point k
 * resumes a conversation of its own and dies by SIGKILL when statement k + 1
 * is about to be sent (see `support/crashWorker.ts`). Another process then
 * resumes every one of them: the call ran exactly once in all (never twice,
 * never lost), the stored result is that run's (or, when the dead worker
 * ran it and its result was not saved, the call is reported interrupted),
 * every turn ends, and no lease is left held.
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { SqlConversationStore } from "../src/index.js"
import { freshPostgresDatabase, pgClient, sqliteClient, tempDatabase, uniqueTable } from "./support/Databases.js"
import * as Workers from "../../bench/src/faults/Workers.js"

const script = fileURLToPath(new URL("./support/crashWorker.ts", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))

const paused = (conversation: string): Messages.Messages => [
  Messages.user("Pay the bill."),
  {
    role: "assistant",
    parts: [{
      _tag: "ToolCall",
      id: "c1",
      name: "pay",
      arguments: JSON.stringify({ conversation }),
      status: { _tag: "AwaitingApproval" }
    }]
  }
]

interface Reply {
  readonly n?: number
  readonly ready?: boolean
  readonly outcome?: string
  readonly statements?: number
  readonly error?: string
}

/** A crash worker process and its JSON lines. */
const startWorker = (env: Record<string, string>) => {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: packageDir,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const lines: Array<Reply> = []
  const waiting: Array<() => void> = []
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line) as Reply)
    for (const wake of waiting.splice(0)) wake()
  })
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  /** The first line that `match`es, within `millis`. */
  const line = async (match: (reply: Reply) => boolean, millis = 60_000): Promise<Reply> => {
    const until = Date.now() + millis
    while (true) {
      const found = lines.find(match)
      if (found !== undefined) return found
      if (Date.now() > until || child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`worker ${child.pid}: no matching line within ${millis} ms (lines: ${JSON.stringify(lines)})`)
      }
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        setTimeout(resolve, 50)
      })
    }
  }
  let sent = 0
  const send = (command: object): Promise<Reply> => {
    const n = ++sent
    child.stdin.write(JSON.stringify({ ...command, n }) + "\n")
    return line((reply) => reply.n === n, 30_000)
  }
  return { child, exited, line, send }
}

interface Database {
  readonly env: Record<string, string>
  readonly client: Layer.Layer<SqlClient.SqlClient, unknown>
}

const databases: ReadonlyArray<readonly [string, () => Promise<Database>]> = [
  ["PostgreSQL", async () => {
    const url = await Effect.runPromise(freshPostgresDatabase)
    return { env: { DATABASE_URL: url }, client: pgClient(url) }
  }],
  ["SQLite", async () => {
    const file = tempDatabase()
    return { env: { SQLITE_FILE: file }, client: sqliteClient(file) }
  }]
]

for (const [name, database] of databases) {
  describe(`kill -9 between the statements of a decision on ${name}`, () => {
    it("after a crash at any point, another process resumes it: the call ran once, its result is the run's, the turn ends, no lease is held", async () => {
      const { client, env: dbEnv } = await database()
      const table = uniqueTable()
      const runsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-crash-")), "runs.log")
      const env = { ...dbEnv, TABLE: table, RUNS_FILE: runsFile }
      const runtime = ManagedRuntime.make(SqlConversationStore.layer({ table }).pipe(Layer.provideMerge(client), Layer.orDie))
      const withStore = <A, E>(f: (store: ConversationStore.Service) => Effect.Effect<A, E>) =>
        runtime.runPromise(Effect.flatMap(ConversationStore.ConversationStore, f))
      const resumer = startWorker(env)
      const victims: Array<ReturnType<typeof startWorker>> = []
      try {
        await runtime.runPromise(Effect.provide(SqlConversationStore.migrate({ table }), client))
        expect(await resumer.line((reply) => reply.ready !== undefined)).toEqual({ ready: true })
        // The reference decision: how many statements one sends.
        await withStore((store) => store.save("reference", paused("reference"), { expectedVersion: 0 }))
        const reference = await resumer.send({ resume: "reference" })
        expect(reference).toMatchObject({ outcome: "Complete" })
        const statements = reference.statements!
        expect(statements).toBeGreaterThanOrEqual(2)
        expect(Workers.runsOf(runsFile, "reference")).toHaveLength(1)

        // One victim per point: after 0, 1, …, statements − 1 statements (before each one of them).
        const points = Array.from({ length: statements }, (_, k) => k)
        for (const k of points) await withStore((store) => store.save(`crash-${k}`, paused(`crash-${k}`), { expectedVersion: 0 }))
        for (const k of points) victims.push(startWorker({ ...env, CONVERSATION: `crash-${k}`, CRASH_AFTER: String(k), LEASE_MILLIS: "1500" }))
        await Promise.all(victims.map((victim) => Promise.race([
          victim.exited,
          new Promise((_, reject) => setTimeout(() => reject(new Error("a victim did not die")), 60_000))
        ])))
        for (const victim of victims) expect(victim.child.signalCode).toBe("SIGKILL")

        const sides = new Set<string>()
        for (const [i, k] of points.entries()) {
          const conversation = `crash-${k}`
          const victim = victims[i]!.child.pid
          // Busy until the dead worker's lease expires (when it took one), then resumed to its end.
          expect(await resumer.send({ resume: conversation })).toMatchObject({ outcome: "Complete" })
          const runs = Workers.runsOf(runsFile, conversation)
          expect(runs).toHaveLength(1)
          const stored = Option.getOrThrow(await withStore((store) => store.load(conversation)))
          const [call] = Messages.toolCalls(stored.messages)
          const last = stored.messages[stored.messages.length - 1]!
          expect(Messages.pendingTools(stored.messages)).toEqual([])
          expect(last.role === "assistant" && Messages.textOf(last)).toBe("Done.")
          if (call!.status._tag === "Completed") {
            expect(call!.status.result).toEqual({ by: runs[0]!.pid })
            sides.add(runs[0]!.pid === victim ? "the victim's result saved" : "run by the resumer")
          } else {
            // The victim ran it and died before its result was saved: reported interrupted, never run again.
            expect(runs[0]!.pid).toBe(victim)
            expect(call!.status).toMatchObject({ _tag: "Failed", error: expect.stringContaining("interrupted") })
            sides.add("interrupted")
          }
          // No lease is left held: a new run takes it at once.
          expect((await withStore((store) => store.acquire(conversation, "check", "1 second"))).owner).toBe("check")
        }
        // The points fell on both sides of the save that marks the call Running, and past its result.
        expect([...sides].sort()).toEqual(["interrupted", "run by the resumer", "the victim's result saved"])
      } finally {
        for (const victim of victims) if (victim.child.exitCode === null && victim.child.signalCode === null) victim.child.kill("SIGKILL")
        resumer.child.stdin.end()
        await Promise.race([resumer.exited, new Promise((resolve) => setTimeout(resolve, 10_000))])
        if (resumer.child.exitCode === null) resumer.child.kill("SIGKILL")
        await runtime.dispose()
      }
    }, 120_000)
  })
}
