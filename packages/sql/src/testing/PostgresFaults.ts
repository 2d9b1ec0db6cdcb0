/**
 * Faults of a PostgreSQL server, injected from a test or a benchmark through
 * an `effect/sql` client on it (as a superuser): every client connection
 * terminated (`pg_terminate_backend`), and a disk that cannot take more
 * (the server processes serving the clients may not grow a file past a
 * size: `RLIMIT_FSIZE`, set with `prlimit` as the server's own user, so no
 * root is needed; Linux). With the limit, a statement that must extend a
 * table's file fails as on a full disk ("could not extend file …: File too
 * large", SQLSTATE `XX000`, where a full disk says "No space left on
 * device", `53100`): the same path in the server, the statement errors and
 * its transaction rolls back. The limit must stay above the WAL's segment
 * size (16 MB by default), which every backend writes into; files already
 * larger than it (grow one with `fill`) are the ones that are full.
 *
 * @since 0.3.0
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"

/** A field of a process's `/proc/<pid>/status` (`Uid`, `Gid`, `PPid`): its first number. */
const status = (pid: number, field: string): number =>
  Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1])

/** The pids of every client backend but this session's, and of the postmaster (connections opened later fork from it). */
const serverProcesses = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly pid: number; readonly own: boolean }>`SELECT pid, pid = pg_backend_pid() AS own
    FROM pg_stat_activity WHERE backend_type = 'client backend'`
  const own = rows.find((row) => row.own)
  return [
    ...(own === undefined ? [] : [status(Number(own.pid), "PPid")]),
    ...rows.filter((row) => !row.own).map((row) => Number(row.pid))
  ]
})

/**
 * Terminates every other client connection (`pg_terminate_backend`, SQLSTATE `57P01` on their side);
 * gives how many.
 *
 * @since 0.3.0
 * @category faults
 */
export const terminateConnections = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly done: boolean }>`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
    WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`
  return rows.filter((row) => row.done).length
})

/** The real uid and gid of a process (prlimit on another's process must run as its owner). */
const owner = (pid: number): { readonly uid: number; readonly gid: number } => ({ uid: status(pid, "Uid"), gid: status(pid, "Gid") })

/**
 * Sets the largest file every other client backend, and the postmaster (so every connection opened
 * later), may write (bytes; `"unlimited"` lifts it: the disk has room again). Only the soft limit
 * moves, so it can be lifted again. Gives how many processes it set. This session's backend and
 * the server's background processes keep theirs (a checkpoint writes pages inside the files).
 *
 * @since 0.3.0
 * @category faults
 */
export const limitFileSize = (bytes: number | "unlimited") =>
  Effect.flatMap(serverProcesses, (pids) =>
    Effect.sync(() => {
      let set = 0
      for (const pid of pids) {
        try {
          execFileSync("prlimit", ["--pid", String(pid), `--fsize=${bytes}:unlimited`], { ...owner(pid), stdio: "pipe" })
          set++
        } catch {
          // The backend ended meanwhile.
        }
      }
      return set
    }))

/**
 * Appends rows to the message rows (`messagesTable`) under `conversation` until its file holds at
 * least `bytes`; gives the file's size then (`pg_relation_size`). Each row is sized so that eight
 * fill a page to its last 8 bytes: a later write finds no room in them and must grow the file.
 *
 * @since 0.3.0
 * @category faults
 */
export const fill = (messagesTable: string, conversation: string, bytes: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = Math.ceil(bytes / 8192) * 8
    // 8 × (24 header + 16 of id and position + 976 body, 4 the line pointer) = 8,160 of a page's 8,168.
    yield* sql`INSERT INTO ${sql(messagesTable)} (conversation_id, position, body)
      SELECT ${conversation.slice(0, 6).padEnd(6, "_")}, g, repeat('x', 976) FROM generate_series(1, ${rows}) AS g`
    const size = yield* sql<{ readonly size: unknown }>`SELECT pg_relation_size(${messagesTable}) AS size`
    return Number(size[0]!.size)
  })
