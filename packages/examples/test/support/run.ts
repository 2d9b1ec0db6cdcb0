/**
 * Test support: runs a program of this package as a child process, to its
 * end or until a time limit (then its whole process group is killed and the
 * run reports `code: null` with `timedOut`), with `input` piped to its stdin.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/** tsx itself, not through npx: quicker, and npx would set INIT_CWD to this package's folder. */
export const tsx = fileURLToPath(new URL("../../../../node_modules/.bin/tsx", import.meta.url))

/** This package's folder, where the programs are run from. */
export const examplesDir = fileURLToPath(new URL("../..", import.meta.url))

/** How a run ended and what it printed. */
export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** Whether it was killed for running past the limit. */
  readonly timedOut: boolean
}

/** Runs `npx tsx <args>` (as tsx) in this package's folder; `input` (or nothing) is its stdin. */
export const runTsx = (
  args: ReadonlyArray<string>,
  options: { readonly env: NodeJS.ProcessEnv; readonly input?: string; readonly timeoutMillis?: number }
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(tsx, args, {
      cwd: examplesDir,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so that tsx and the node process it starts are killed together.
      detached: true
    })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }, options.timeoutMillis ?? 50_000)
    child.on("error", (error) => (clearTimeout(timer), reject(error)))
    child.on("close", (code) => (clearTimeout(timer), resolve({ code, stdout, stderr, timedOut })))
    child.stdin.end(options.input ?? "")
  })
