/**
 * The demo as a command, non-interactively: `npx tsx src/demo/main.ts …` in a
 * child process with flags or piped input, on a sandbox folder the test
 * inspects afterwards.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { seedFiles } from "../src/demo/sandbox.js"
import { runTsx } from "./support/run.js"

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** The files left in the sandbox. */
  readonly files: ReadonlyArray<string>
}

/**
 * Runs the demo on a fresh sandbox folder, offline, with `input` piped to stdin
 * (killed, with `code: null`, if it runs for more than 50 seconds).
 * With `fromFolder`, npm's INIT_CWD is that folder and the sandbox is given
 * relative to it, as `npm start -- --sandbox sb` typed there would.
 */
const demo = async (args: ReadonlyArray<string>, input = "", fromFolder?: string): Promise<Run> => {
  const sandbox = fromFolder === undefined ? mkdtempSync(join(tmpdir(), "demo-cli-")) : join(fromFolder, "sb")
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
  delete env["OPENAI_API_KEY"]
  delete env["ANTHROPIC_API_KEY"]
  delete env["GEMINI_API_KEY"]
  delete env["GOOGLE_API_KEY"]
  if (fromFolder !== undefined) env["INIT_CWD"] = fromFolder
  const defaults = args.includes("--help")
    ? []
    : [
      "--sandbox",
      fromFolder === undefined ? sandbox : "sb",
      ...(args.includes("--cleanup-delay") ? [] : ["--cleanup-delay", "50 millis"])
    ]
  try {
    const { code, stderr, stdout } = await runTsx(["src/demo/main.ts", ...defaults, ...args], { env, input })
    const files = existsSync(sandbox) ? readdirSync(sandbox).sort() : []
    return { code, stdout, stderr, files }
  } finally {
    rmSync(sandbox, { recursive: true, force: true })
  }
}

const allFiles = seedFiles.map((file) => file.name).sort()
const oldLogs = ["app-2025-03.log", "app-2025-04.log"]
const timeout = 60_000

// Each test starts its own process: run them side by side.
describe.concurrent("demo, non-interactive", () => {
  it("--approve-all approves deletions and waits for scheduled calls, then exits 0", async () => {
    const run = await demo(["--approve-all", "--message", "delete the old logs", "--message", "clean up tomorrow"])
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("model:   the built-in scripted demo model (no OPENAI_API_KEY is set")
    expect(run.stdout).toContain("You › delete the old logs")
    expect(run.stdout).toContain("┌ delete_files (call_2_1) · needs your approval")
    expect(run.stdout).toContain("(--approve-all: approve)")
    expect(run.stdout).toContain("Assistant › Done: deleted app-2025-03.log, app-2025-04.log.")
    // The scheduled cleanup shows its time, is waited for, and runs (nothing is left for it to delete).
    // Its time, ahead or (on a slow machine, with this short delay) already passed.
    expect(run.stdout).toMatch(/schedule_cleanup \(call_4_1\) · (scheduled for \d\d:\d\d:\d\d \(in \d+m?s\)|due since \d\d:\d\d:\d\d)/)
    expect(run.stdout).toContain("(--approve-all: wait)")
    expect(run.stdout).toMatch(/⏳ Waiting until|⏳ The scheduled call is due/)
    expect(run.stdout).toContain("Assistant › The scheduled cleanup ran: nothing needed deleting.")
    expect(run.files).toEqual(allFiles.filter((name) => !oldLogs.includes(name)))
  }, timeout)

  it("--help piped prints the plain help page and exits 0", async () => {
    const run = await demo(["--help"])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("npm start -- [options]")
    expect(run.stdout).not.toContain("\u001b[")
  }, timeout)

  it("the header's lines fit an ordinary terminal", async () => {
    const run = await demo(["--approve-all", "-m", "what is in notes.txt?", "--cleanup-delay", "10 minutes"])
    expect(run.code).toBe(0)
    const header = run.stdout.split("You ›")[0]!.split("\n")
    expect(header.join(" ").replace(/\s+/g, " ")).toContain("schedule_cleanup runs later (10m from now here")
    for (const line of header) expect(line.length).toBeLessThanOrEqual(100)
  }, timeout)

  it("a relative --sandbox is the user's folder (npm's INIT_CWD), not the examples package's", async () => {
    const user = mkdtempSync(join(tmpdir(), "demo-user-"))
    try {
      const run = await demo(["--approve-all", "-m", "delete the old logs"], "", user)
      expect(run.code).toBe(0)
      expect(run.stdout).toContain(`sandbox: ${join(user, "sb")}`)
      expect(run.files).toEqual(allFiles.filter((name) => !oldLogs.includes(name)))
    } finally {
      rmSync(user, { recursive: true, force: true })
    }
  }, timeout)

  it("--reject-all rejects every pending call with the reason, approvals and scheduled calls alike", async () => {
    const run = await demo([
      "--reject-all",
      "not today",
      "-m",
      "delete the old logs",
      "-m",
      "clean up tomorrow"
    ])
    expect(run.code).toBe(0)
    // Each rejection is reported once, by the turn.
    expect(run.stdout.match(/not today/g)).toHaveLength(4) // two rejections, two answers quoting the reason
    expect(run.stdout).toContain("✗ delete_files rejected by you: not today")
    expect(run.stdout).toContain("✗ schedule_cleanup rejected by you: not today")
    expect(run.stdout).toContain("Assistant › OK, I did not delete anything (reason: not today).")
    expect(run.stdout).toContain("Assistant › I cancelled the scheduled cleanup, as asked (reason: not today).")
    expect(run.files).toEqual(allFiles)
  }, timeout)

  it("piped input: messages and decisions line by line; an invalid edit is re-asked", async () => {
    const run = await demo([], [
      "delete the old logs",
      `edit {"paths": []}`,
      `edit {"paths": ["app-2025-03.log"]}`,
      "what is in notes.txt?",
      "delete the temp file now and clean up the logs tomorrow",
      "approve",
      "wait",
      ""
    ].join("\n"))
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("name at least one file")
    expect(run.stdout).toContain(`✔ approved with edited arguments {"paths":["app-2025-03.log"]}`)
    expect(run.stdout).toContain("Assistant › Done: deleted app-2025-03.log.")
    expect(run.stdout).toContain("Assistant › notes.txt says:\n  > Release checklist")
    expect(run.stdout).toContain("⏸  The turn paused: 1 call needs your approval, 1 call is scheduled for later.")
    expect(run.stdout).toContain("The scheduled cleanup ran: deleted app-2025-04.log.")
    expect(run.files).toEqual(["app.log", "notes.txt", "todo.txt"])
  }, timeout)

  it("--mcp: the MCP files server's tools, decided by their annotations; a bad edit is re-asked, the approved one runs", async () => {
    const run = await demo(["--mcp"], [
      "delete the old logs",
      `edit {"names": ["../etc/passwd"]}`,
      `edit {"names": ["app-2025-03.log"]}`,
      ""
    ].join("\n"))
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const header = run.stdout.split("You ›")[0]!
    expect(header.replace(/\s+/g, " ")).toContain("tools: from the MCP files server (over stdio)")
    for (const line of header.split("\n")) expect(line.length).toBeLessThanOrEqual(100)
    // The read-only tool runs on its own (no note); the deletion waits, with the reason read from the annotations.
    expect(run.stdout).toContain("→ list_files {}\n")
    expect(run.stdout).toContain("delete_files (call_2_1) · needs your approval: not marked read-only by the server")
    // The edit is checked against the server's JSON Schema before anything is sent.
    expect(run.stdout).toContain("Those arguments do not match delete_files's parameters")
    expect(run.stdout).toContain(`✔ approved with edited arguments {"names":["app-2025-03.log"]}`)
    expect(run.stdout).toContain("Assistant › Deleted app-2025-03.log.")
    expect(run.files).toEqual(allFiles.filter((name) => name !== "app-2025-03.log"))
  }, timeout)

  it("input that ends before a decision exits 1 with a message, not a stack trace", async () => {
    const run = await demo([], "delete the old logs\n")
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toBe("The input ended before a decision on delete_files (call_2_1) was given.")
    expect(run.files).toEqual(allFiles)
  }, timeout)

  it("a malformed flag exits non-zero with a message, not a stack trace", async () => {
    const run = await demo(["--cleanup-delay", "soon"])
    expect(run.code).not.toBe(0)
    expect(run.stdout + run.stderr).toContain("'soon' is not a duration")
    expect(run.stdout + run.stderr).not.toMatch(/\n\s+at /)
    expect(run.files).toEqual([])
  }, timeout)
})
