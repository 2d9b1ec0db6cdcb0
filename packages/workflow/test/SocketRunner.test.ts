/**
 * `SocketRunner.layer` in this process, on a SQLite file: the address a
 * runner announces to the others is the one it listens on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Result, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as SqliteClient from "../../sql/src/SqliteClient.js"
import * as SocketRunner from "../src/SocketRunner.js"

const database = () =>
  SqliteClient.layer({ filename: path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-socket-")), "cluster.db") })

/** Whether something accepts TCP connections on 127.0.0.1:`port` (bounded). */
const accepts = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.setTimeout(5_000)
    const done = (ok: boolean) => (socket.destroy(), resume(Effect.succeed(ok)))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
    socket.once("timeout", () => done(false))
  })

/** The address the one runner registered in `cluster_runners` (registration runs in the background: bounded retries). */
const registered = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ address: string }>`SELECT address FROM cluster_runners`.pipe(
    Effect.flatMap((rows) => rows.length === 1 ? Effect.succeed(rows[0]!.address) : Effect.fail("not registered yet")),
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 100 })
  ))

describe("SocketRunner", () => {
  it.live("port 0: the runner listens on a free port of 127.0.0.1 and registers that address for the others", () =>
    Effect.gen(function*() {
      yield* Layer.build(SocketRunner.layer())
      const address = yield* registered
      const [, host, port] = address.match(/^(.+):(\d+)$/) ?? []
      expect(host).toBe("127.0.0.1")
      expect(Number(port)).toBeGreaterThan(0)
      expect(yield* accepts(Number(port))).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(database())), 30_000)

  it.live("listening on every address without saying which one to reach: refused before it listens, with the reason", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(SocketRunner.layer({ host: "0.0.0.0" }))))
      expect(Exit.isFailure(exit)).toBe(true)
      const defect = Exit.isFailure(exit) ? Option.getOrUndefined(Result.getSuccess(Cause.findDefect(exit.cause))) : undefined
      expect(String(defect)).toContain("set advertiseHost")
    }).pipe(Effect.provide(database())), 30_000)

  it.live("with an advertised host: that host is registered, with the port the runner got", () =>
    Effect.gen(function*() {
      yield* Layer.build(SocketRunner.layer({ advertiseHost: "localhost" }))
      const address = yield* registered
      expect(address).toMatch(/^localhost:[1-9]\d*$/)
      expect(yield* accepts(Number(address.split(":")[1]))).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(database())), 30_000)
})
