/**
 * Notifications across a crash: a real process saves a pause (its notification in the same
 * transaction), claims it, and is killed with SIGKILL before sending; a new process delivers it,
 * exactly once, to a receiver on 127.0.0.1 that verifies the signature and counts by id.
 */
import { describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import * as Receiver from "./support/receiver.js"

const script = fileURLToPath(new URL("./support/outboxChild.ts", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))
const secret = "a-webhook-secret-of-at-least-32-characters"

/** Starts the child; `lines` collects its JSON lines, `exited` its exit. */
const child = (env: Record<string, string>) => {
  const proc = spawn(process.execPath, ["--import", "tsx", script], { cwd: packageDir, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const lines: Array<Record<string, unknown>> = []
  let stderr = ""
  proc.stderr.on("data", (chunk) => (stderr += chunk))
  readline.createInterface({ input: proc.stdout }).on("line", (line) => lines.push(JSON.parse(line)))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("exit", (code, signal) => resolve({ code, signal })))
  return { proc, lines, exited, stderr: () => stderr }
}

describe("notifications across kill -9", () => {
  it("a pause saved by a process killed before sending is delivered once by the next process", async () => {
    const receiver = await Receiver.start(Redacted.make(secret))
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-outbox-")), "store.db")
    try {
      const first = child({ MODE: "pause", SQLITE_FILE: file })
      await Receiver.until(() => first.lines.some((line) => "claimed" in line) || first.proc.exitCode !== null, 60_000, "the first process")
      expect(first.lines[0]).toEqual({ saved: "Paused" })
      const claimed = first.lines.find((line) => "claimed" in line)?.["claimed"]
      expect(typeof claimed).toBe("string")
      first.proc.kill("SIGKILL")
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" })
      expect(receiver.requests).toEqual([])

      const second = child({ MODE: "deliver", SQLITE_FILE: file, HOOK_URL: receiver.url, HOOK_SECRET: secret })
      await Receiver.until(() => second.proc.exitCode !== null, 60_000, "the second process")
      expect(second.proc.exitCode, second.stderr()).toBe(0)
      expect(second.lines.at(-1)).toEqual({ rows: [{ id: claimed, kind: "Paused", status: "delivered", attempts: 1 }] })
      expect(receiver.requests).toEqual([{ id: claimed, verified: true }])
      expect([...receiver.accepted.keys()]).toEqual([claimed])
      expect(receiver.accepted.get(claimed as string)).toMatchObject({ kind: "Paused", conversationId: "conv", calls: [{ id: "c1", status: "AwaitingApproval" }] })
      expect(receiver.duplicates).toBe(0)
    } finally {
      await receiver.close()
    }
  }, 120_000)
})
