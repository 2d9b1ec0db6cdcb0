/**
 * The messages between the fleet's load generator (the parent) and its
 * worker processes, over Node's IPC channel: the parent decides, the workers
 * resume and report.
 */
import type { Recorded } from "./trace.js"

export const modes = ["chat-ts", "floor"] as const
/** chat-ts's `Worker.resume`, or the floor: the same statements issued by hand. */
export type Mode = (typeof modes)[number]

export const databases = ["PostgreSQL", "SQLite"] as const
export type Database = (typeof databases)[number]

/** Where a worker finds the database. */
export type Connection =
  | { readonly database: "PostgreSQL"; readonly url: string; readonly pool: number }
  | { readonly database: "SQLite"; readonly filename: string }

export type ToWorker =
  | {
    readonly type: "init"
    readonly connection: Connection
    readonly mode: Mode
    /** The owner of the leases this worker takes. */
    readonly owner: string
    /** The floor's statements (the trace of one chat-ts decision). */
    readonly trace?: { readonly statements: ReadonlyArray<Recorded>; readonly token: string } | undefined
  }
  /** Decide conversation `n` (approve its call) and resume it. */
  | { readonly type: "decide"; readonly seq: number; readonly n: number }
  | { readonly type: "cpu" }
  | { readonly type: "stats" }
  | { readonly type: "stop" }

export type FromWorker =
  | { readonly type: "ready" }
  /** The decision `seq` resumed to its end, its result saved (or why not). */
  | { readonly type: "done"; readonly seq: number; readonly error?: string | undefined }
  /** The worker's CPU time so far (user + system), microseconds. */
  | { readonly type: "cpu"; readonly us: number }
  /** The paths the tool ran on, with how often each. */
  | { readonly type: "stats"; readonly ran: ReadonlyArray<readonly [path: string, count: number]> }
