/**
 * Runner processes for the end-to-end test (see `runner.ts`): each a real
 * `node` process running TypeScript through tsx, driven by JSON lines on its
 * stdin and stdout, every wait bounded.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("./runner.ts", import.meta.url))
const packageDir = fileURLToPath(new URL("../..", import.meta.url))

/** How many shards the runners split (as `runner.ts` configures them). */
export const shardsPerGroup = 8

/** One answer of a runner. */
export interface Reply {
  readonly n?: number
  readonly ready?: boolean
  /** Sent before waiting for `GO_FILE`. */
  readonly loaded?: boolean
  readonly id?: string
  readonly error?: string
  /** The refused decision's message, and for a `StoreError` whether it is worth retrying. */
  readonly message?: string
  readonly retryable?: boolean
  readonly defect?: string
  readonly shards?: ReadonlyArray<number>
  readonly owns?: boolean
}

export interface RunnerProcess {
  readonly pid: number
  readonly ready: Promise<Reply>
  /** Resolves when a runner started with `GO_FILE` waits for it (or is ready, or exited). */
  readonly loaded: Promise<void>
  readonly send: (command: object, timeoutMillis?: number) => Promise<Reply>
  readonly exited: Promise<void>
  readonly process: ChildProcessWithoutNullStreams
}

/** `promise`, or a rejection after `millis`. */
export const bounded = <A>(promise: Promise<A>, millis: number, what: string): Promise<A> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${millis} ms`)), millis)
    promise.then((a) => (clearTimeout(timer), resolve(a)), (e) => (clearTimeout(timer), reject(e)))
  })

let sent = 0

/** Starts a runner with these environment variables (`DATABASE_URL`, `TABLE`, `RUNS_FILE`, optionally `GO_FILE`). */
export const start = (env: Record<string, string>): RunnerProcess => {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: packageDir,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const waiting = new Map<number, (reply: Reply) => void>()
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  let onReady: (reply: Reply) => void = () => undefined
  const ready = new Promise<Reply>((resolve) => (onReady = resolve))
  let onLoaded: () => void = () => undefined
  const loaded = new Promise<void>((resolve) => (onLoaded = resolve))
  void ready.then(() => onLoaded())
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  void exited.then(() => onReady({ ready: false, error: `exited before it was ready: ${stderr}` }))
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    if (!line.startsWith("{")) return
    const reply = JSON.parse(line) as Reply
    if (reply.loaded === true) return onLoaded()
    if (reply.n === undefined) return onReady(reply)
    waiting.get(reply.n)?.(reply)
    waiting.delete(reply.n)
  })
  return {
    pid: child.pid!,
    ready: bounded(ready, 120_000, `runner ${child.pid} starting`),
    loaded: bounded(loaded, 120_000, `runner ${child.pid} loading`),
    send: (command, timeoutMillis = 30_000) => {
      const n = ++sent
      const answer = new Promise<Reply>((resolve) => waiting.set(n, resolve))
      child.stdin.write(JSON.stringify({ ...command, n }) + "\n")
      return bounded(answer, timeoutMillis, `runner ${child.pid} answering ${JSON.stringify(command)}`)
    },
    exited,
    process: child
  }
}

/** Kills a runner with SIGKILL and waits (bounded) until it is gone. */
export const kill = async (runner: RunnerProcess): Promise<void> => {
  if (runner.process.exitCode === null && runner.process.signalCode === null) runner.process.kill("SIGKILL")
  await bounded(runner.exited, 10_000, "runner dying")
}

/** One line a runner recorded: a model call or a tool run, with its pid. */
export interface Run {
  readonly pid: number
  readonly model?: number
  /** The user's text of the turn the model was called for. */
  readonly asked?: string
  readonly tool?: string
  readonly paths?: ReadonlyArray<string>
}

/** Everything the runners recorded in `file`. */
export const runsOf = (file: string): ReadonlyArray<Run> =>
  fs.existsSync(file)
    ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Run)
    : []

/** Waits (bounded) until `check` holds, polling every 100 ms. */
export const until = async (check: () => boolean | Promise<boolean>, millis: number, what: string): Promise<void> => {
  const deadline = Date.now() + millis
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${millis} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Starts `count` runners that build their layers at the same moment (each waits for a file until all have loaded). */
export const startTogether = async (count: number, env: Record<string, string>): Promise<ReadonlyArray<RunnerProcess>> => {
  const goFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-go-")), "go")
  const runners = Array.from({ length: count }, () => start({ ...env, GO_FILE: goFile }))
  await Promise.all(runners.map((runner) => runner.loaded))
  fs.writeFileSync(goFile, "")
  return runners
}
