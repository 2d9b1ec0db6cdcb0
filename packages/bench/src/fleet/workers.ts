/**
 * The fleet's worker processes, seen from the parent: forked with tsx and an
 * IPC channel, initialised, sent decisions, asked for their CPU time and
 * their tool runs, and stopped. Every wait is bounded; `killAll` (called on
 * every exit path, and on the parent's own exit) leaves no process behind.
 */
import { type ChildProcess, fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { Connection, FromWorker, Mode, ToWorker } from "./protocol.js"
import type { Recorded } from "./trace.js"

const entry = fileURLToPath(new URL("./worker.ts", import.meta.url))
// Under `npm run bench` the workers inherit its TSX_TSCONFIG_PATH: `@chat-ts/*` as published (dist/, checked fresh
// by main.ts); forked by the smoke tests, tsx maps them to their sources (the workspace's tsconfig paths).
const cwd = fileURLToPath(new URL("../..", import.meta.url))
// To see where a worker's CPU goes: FLEET_CPU_PROF=<dir> writes a `--cpu-prof` profile per worker (read with profile-summary.ts).
const profile = process.env["FLEET_CPU_PROF"]
const execArgv = ["--import", "tsx", ...(profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profile}`])]

/** One worker process and what it reports. */
export interface Handle {
  readonly index: number
  readonly send: (message: ToWorker) => void
  /** The next message of `type`, within `millis`. */
  readonly next: <T extends FromWorker["type"]>(type: T, millis: number) => Promise<Extract<FromWorker, { type: T }>>
  /** Called with each `done` report, at once. */
  onDone: (seq: number, error: string | undefined) => void
  readonly process: ChildProcess
}

const live = new Set<ChildProcess>()
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL")
})

const withTimeout = <A>(millis: number, what: string, promise: Promise<A>): Promise<A> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fleet: ${what} took longer than ${millis} ms`)), millis)
    promise.then((v) => (clearTimeout(timer), resolve(v)), (e) => (clearTimeout(timer), reject(e)))
  })

const spawnOne = (index: number): Handle => {
  const child = fork(entry, [], { cwd, execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] })
  live.add(child)
  const waiting = new Map<string, Array<{ readonly resolve: (m: FromWorker) => void; readonly reject: (e: Error) => void }>>()
  let exited: Error | undefined
  const handle: Handle = {
    index,
    process: child,
    onDone: () => undefined,
    send: (message) => {
      if (exited !== undefined) throw exited
      child.send(message)
    },
    next: (type, millis) =>
      withTimeout(millis, `worker ${index}'s '${type}'`, new Promise((resolve, reject) => {
        if (exited !== undefined) return reject(exited)
        const list = waiting.get(type) ?? []
        list.push({ resolve: resolve as (m: FromWorker) => void, reject })
        waiting.set(type, list)
      }))
  }
  child.on("message", (message: FromWorker) => {
    if (message.type === "done") return handle.onDone(message.seq, message.error)
    waiting.get(message.type)?.shift()?.resolve(message)
  })
  child.on("exit", (code, signal) => {
    live.delete(child)
    const error = new Error(`fleet: worker ${index} exited (${code ?? signal})`)
    exited = error
    // Whoever waits for this worker hears it at once.
    for (const list of waiting.values()) for (const w of list.splice(0)) w.reject(error)
  })
  return handle
}

/** Settings of a fleet of workers. */
export interface Spec {
  readonly workers: number
  readonly connection: Connection
  readonly mode: Mode
  readonly trace?: { readonly statements: ReadonlyArray<Recorded>; readonly token: string } | undefined
}

/** Starts `spec.workers` processes and waits until each is ready (its client connected, its chat built). */
export const start = async (spec: Spec): Promise<ReadonlyArray<Handle>> => {
  const handles = Array.from({ length: spec.workers }, (_, i) => spawnOne(i))
  try {
    await Promise.all(handles.map((h) => {
      const ready = h.next("ready", 60_000)
      h.send({ type: "init", connection: spec.connection, mode: spec.mode, owner: `fleet-worker-${h.index}`, trace: spec.trace })
      return ready
    }))
    return handles
  } catch (error) {
    killAll(handles)
    throw error
  }
}

/** Each worker's CPU time so far, microseconds. */
export const cpu = (handles: ReadonlyArray<Handle>): Promise<ReadonlyArray<number>> =>
  Promise.all(handles.map((h) => {
    const reply = h.next("cpu", 10_000)
    h.send({ type: "cpu" })
    return reply.then((m) => m.us)
  }))

/** How often the tool ran on each path, summed over the workers. */
export const toolRuns = async (handles: ReadonlyArray<Handle>): Promise<Map<string, number>> => {
  const replies = await Promise.all(handles.map((h) => {
    const reply = h.next("stats", 10_000)
    h.send({ type: "stats" })
    return reply
  }))
  const out = new Map<string, number>()
  for (const reply of replies) for (const [path, count] of reply.ran) out.set(path, (out.get(path) ?? 0) + count)
  return out
}

/** Asks every worker to leave and waits (bounded) for it; kills those that did not. */
export const stop = async (handles: ReadonlyArray<Handle>): Promise<void> => {
  await Promise.all(handles.map((h) =>
    h.process.exitCode !== null ? undefined : withTimeout(10_000, `stopping worker ${h.index}`, new Promise<void>((resolve) => {
      h.process.once("exit", () => resolve())
      h.send({ type: "stop" })
    })).catch(() => undefined)
  ))
  killAll(handles)
}

/** Kills every worker still running. */
export const killAll = (handles: ReadonlyArray<Handle>): void => {
  for (const h of handles) if (h.process.exitCode === null && h.process.signalCode === null) h.process.kill("SIGKILL")
}
