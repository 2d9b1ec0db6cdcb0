/**
 * Worker processes for the multi-process tests of `@chat-ts/sql` and the
 * bench's fault soak (see `worker.ts`): each a real
 * `node` process running TypeScript through tsx, driven by JSON lines on its
 * stdin and stdout, every wait bounded.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("./worker.ts", import.meta.url))
const packageDir = fileURLToPath(new URL("../..", import.meta.url))

/** One answer of a worker. */
export interface Reply {
  readonly n?: number
  readonly ready?: boolean
  /** Sent before waiting for `GO_FILE`. */
  readonly loaded?: boolean
  /** How many migrations the worker applied at startup (with `MIGRATE=1`). */
  readonly applied?: number
  readonly outcome?: string
  readonly error?: string
  /** A `StoreError`'s message. */
  readonly message?: string
  /** Set on a `StoreError` that says it is worth retrying. */
  readonly retryable?: boolean
  readonly defect?: string
  readonly ids?: ReadonlyArray<string>
  /** A workflow runner's answers (`workflow/test/support/runner.ts`): a turn's execution id, the shards it holds. */
  readonly id?: string
  readonly shards?: ReadonlyArray<number>
}

export interface WorkerProcess {
  readonly pid: number
  /** Resolves when the worker built its store and answered a first query. */
  readonly ready: Promise<Reply>
  /** Resolves when a worker started with `GO_FILE` waits for it (or is ready, or exited). */
  readonly loaded: Promise<void>
  readonly send: (command: object, timeoutMillis?: number) => Promise<Reply>
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>
  readonly process: ChildProcessWithoutNullStreams
}

const bounded = <A>(promise: Promise<A>, millis: number, what: string): Promise<A> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${millis} ms`)), millis)
    promise.then((a) => (clearTimeout(timer), resolve(a)), (e) => (clearTimeout(timer), reject(e)))
  })

let sent = 0

/** Another script speaking the same JSON lines (the workflow engine's runner), run from its package's folder. */
export interface Script {
  readonly file: string
  readonly cwd: string
}

/** Starts a worker with these environment variables (the database, `TABLE`, `RUNS_FILE`). */
export const start = (env: Record<string, string>, other?: Script): WorkerProcess => {
  const child = spawn(process.execPath, ["--import", "tsx", other?.file ?? script], {
    cwd: other?.cwd ?? packageDir,
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
    // Anything else on stdout (a log line) is not an answer.
    if (!line.startsWith("{")) return
    const reply = JSON.parse(line) as Reply
    if (reply.loaded === true) return onLoaded()
    if (reply.n === undefined) return onReady(reply)
    waiting.get(reply.n)?.(reply)
    waiting.delete(reply.n)
  })
  return {
    pid: child.pid!,
    ready: bounded(ready, 60_000, `worker ${child.pid} starting`),
    loaded: bounded(loaded, 60_000, `worker ${child.pid} loading`),
    send: (command, timeoutMillis = 30_000) => {
      const n = ++sent
      const answer = new Promise<Reply>((resolve) => waiting.set(n, resolve))
      child.stdin.write(JSON.stringify({ ...command, n }) + "\n")
      return bounded(answer, timeoutMillis, `worker ${child.pid} answering ${JSON.stringify(command)}`)
    },
    exited,
    process: child
  }
}

/** Ends a worker by closing its stdin, or kills it if it does not exit in time. */
export const stop = async (worker: WorkerProcess): Promise<void> => {
  if (worker.process.exitCode !== null || worker.process.signalCode !== null) return
  worker.process.stdin.end()
  await bounded(worker.exited, 10_000, "worker stopping").catch(() => {
    worker.process.kill("SIGKILL")
  })
}

/** One handler run, as a worker records it. */
export interface Run {
  readonly conversation: string
  readonly pid: number
  readonly attempt: number
  readonly tool: string
}

/** The handler runs recorded in `file` for a conversation (every run without one). */
export const runsOf = (file: string, conversation?: string): ReadonlyArray<Run> =>
  fs.existsSync(file)
    ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Run)
      .filter((run) => conversation === undefined || run.conversation === conversation)
    : []

/** Waits (bounded) until `check` holds, polling. */
export const eventually = async (check: () => boolean, what: string, millis = 20_000): Promise<void> => {
  const until = Date.now() + millis
  while (!check()) {
    if (Date.now() > until) throw new Error(`${what}: not within ${millis} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
