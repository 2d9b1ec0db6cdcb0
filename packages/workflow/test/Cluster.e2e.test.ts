/**
 * End to end on `effect/cluster` with a real PostgreSQL: durable turns on
 * runner processes that are killed with SIGKILL, runners that start at
 * the same moment on an empty database, and a runner cut off from the
 * database (its connection stalled by a loopback proxy) and later back, with
 * a turn paused or in flight on it. The runs of the model and the tools are
 * recorded by the runners in a file (see `support/runner.ts`).
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Option, Redacted, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlConversationStore } from "../../sql/src/index.js"
import { EmbeddedPostgres, StallingProxy } from "../../sql/src/testing/index.js"
import * as SocketRunner from "../src/SocketRunner.js"
import * as Runners from "./support/Runners.js"

const table = "turns"

describe("durable turns on runner processes and PostgreSQL", () => {
  let server: EmbeddedPostgres.Server
  let runtime: ManagedRuntime.ManagedRuntime<ConversationStore.ConversationStore, unknown>
  const runsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-wf-")), "runs.log")
  const runners: Array<Runners.RunnerProcess> = []
  let env: Record<string, string> = {}

  const startRunner = async () => {
    const runner = Runners.start(env)
    runners.push(runner)
    expect(await runner.ready).toEqual({ ready: true })
    return runner
  }

  /** Starts `count` runners that build their layers (and create missing tables) at the same moment. */
  const startRunners = async (count: number, with_: Record<string, string> = env) => {
    const started = await Runners.startTogether(count, with_)
    runners.push(...started)
    expect(await Promise.all(started.map((runner) => runner.ready))).toEqual(started.map(() => ({ ready: true })))
    return started
  }

  /** The published state of a turn, read by this test process from the database. */
  const view = async (executionId: string) =>
    Option.getOrUndefined(
      await runtime.runPromise(Effect.flatMap(ConversationStore.ConversationStore, (store) => store.load(executionId)))
    )

  const statusOf = async (executionId: string, call: string) =>
    Messages.findTool((await view(executionId))?.messages ?? [], call)?.status._tag

  beforeAll(async () => {
    server = await EmbeddedPostgres.start()
    env = { DATABASE_URL: server.url, TABLE: table, RUNS_FILE: runsFile, REMIND_MILLIS: "8000" }
    runtime = ManagedRuntime.make(
      SqlConversationStore.layer({ table }).pipe(
        Layer.provideMerge(PgClient.layer({ url: Redacted.make(server.url) })),
        Layer.orDie
      )
    )
    await runtime.runPromise(Effect.provide(SqlConversationStore.migrate({ table }), PgClient.layer({ url: Redacted.make(server.url) })))
    // As docs/scale.md advises for the runners' database: a runner cut off between two statements of a transaction
    // would otherwise keep its `cluster_messages` rows locked while away, and the turns it had read wait for it.
    await runtime.runPromise(Effect.provide(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.unsafe(
          "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET idle_in_transaction_session_timeout = %L', current_database(), '2s'); END $$"
        )),
      PgClient.layer({ url: Redacted.make(server.url) })
    ))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(runners.map((runner) => Runners.kill(runner).catch(() => undefined)))
    await runtime?.dispose()
    await server?.stop()
  }, 60_000)

  /** The shards each runner holds, asked of the runners themselves. */
  const shardsOf = async (runner: Runners.RunnerProcess) => (await runner.send({ shards: true })).shards ?? []

  /** Waits until these runners hold every shard between them, each at least one, none twice. */
  const spread = (live: ReadonlyArray<Runners.RunnerProcess>, what: string) =>
    Runners.until(async () => {
      const held = await Promise.all(live.map(shardsOf))
      const all = held.flat()
      return held.every((shards) => shards.length > 0) && all.length === Runners.shardsPerGroup &&
        new Set(all).size === Runners.shardsPerGroup
    }, 60_000, what)

  /** A conversation whose turn lands on a shard `runner` holds (or does not hold), found by asking it. */
  const conversationOn = async (runner: Runners.RunnerProcess, owned: boolean, prefix: string) => {
    for (let i = 0; i < 64; i++) {
      const text = `delete ${prefix}-${i}`
      const id = (await runner.send({ executionOf: `${prefix}-${i}`, text })).id!
      if ((await runner.send({ owns: id })).owns === owned) return { conversation: `${prefix}-${i}`, text, id }
    }
    throw new Error(`no conversation found on the ${owned ? "asked" : "other"} runner`)
  }

  const completed = async (id: string) => {
    const last = (await view(id))?.messages.at(-1)
    return last?.role === "assistant" && Messages.textOf(last) === "done"
  }

  it("two active runners: turns started on either run on both; kill -9 one, decide through the other: it completes there, the tool ran once", async () => {
    // Both runners start at the same moment on the empty database: one creates the cluster's tables, under
    // an advisory lock, while the other waits for it.
    const [a, b] = await startRunners(2) as [Runners.RunnerProcess, Runners.RunnerProcess]
    await spread([a, b], "the shards spreading over both runners")

    // One turn on each runner's shards, each started through the other runner: the start is sent over
    // the socket (or stored and announced), and answers at once; no runner waits for a lock.
    const onA = await conversationOn(a, true, "conv-a")
    const onB = await conversationOn(a, false, "conv-b")
    expect((await b.send({ start: onA.conversation, text: onA.text }, 15_000)).id).toBe(onA.id)
    expect((await a.send({ start: onB.conversation, text: onB.text }, 15_000)).id).toBe(onB.id)
    await Runners.until(async () => (await statusOf(onA.id, "d1")) === "AwaitingApproval", 60_000, "the turn on A pausing")
    await Runners.until(async () => (await statusOf(onB.id, "d1")) === "AwaitingApproval", 60_000, "the turn on B pausing")
    const modelCalls = (text: string) => Runners.runsOf(runsFile).filter((r) => r.model !== undefined && r.asked === text)
    expect(modelCalls(onA.text).map((r) => r.pid)).toEqual([a.pid])
    expect(modelCalls(onB.text).map((r) => r.pid)).toEqual([b.pid])

    // A dies without a word; B takes its shards and the paused turn with them.
    await Runners.kill(a)
    expect(await b.send({ decide: onA.id, call: "d1", approve: true }, 60_000)).toEqual({ n: expect.any(Number) })
    await Runners.until(() => completed(onA.id), 60_000, "the turn of A completing on B")
    expect(await shardsOf(b)).toHaveLength(Runners.shardsPerGroup)
    // Two different decisions for one call at once: one wins, the other is refused.
    const [approved, rejected] = await Promise.all([
      b.send({ decide: onB.id, call: "d1", approve: true }),
      b.send({ decide: onB.id, call: "d1", approve: false })
    ])
    expect([approved.error, rejected.error].filter((error) => error !== undefined)).toEqual(["ToolCallAlreadyResolved"])
    await Runners.until(() => completed(onB.id), 60_000, "the turn of B completing")
    expect(await statusOf(onB.id, "d1")).toBe(approved.error === undefined ? "Completed" : "Rejected")

    const tools = Runners.runsOf(runsFile).filter((r) => r.tool === "delete_files")
    expect(tools.filter((r) => r.paths?.[0] === onA.text)).toEqual([{ tool: "delete_files", paths: [onA.text], pid: b.pid }])
    expect(tools.filter((r) => r.paths?.[0] === onB.text)).toEqual(
      approved.error === undefined ? [{ tool: "delete_files", paths: [onB.text], pid: b.pid }] : []
    )
    expect(modelCalls(onA.text).map((r) => r.pid)).toEqual([a.pid, b.pid])
    expect(modelCalls(onB.text).map((r) => r.pid)).toEqual([b.pid, b.pid])
    expect(await statusOf(onA.id, "d1")).toBe("Completed")
    // The ended turns remove their claim and decision records (right after their last publish).
    for (const turn of [onA.id, onB.id]) {
      await Runners.until(async () =>
        (await view(`${turn}/claim/d1/1`)) === undefined && (await view(`${turn}/decision/d1`)) === undefined, 30_000, "the records going")
    }
    // A second decision is refused, and nothing runs again.
    expect((await b.send({ decide: onA.id, call: "d1", approve: true })).error).toBe("ToolCallAlreadyResolved")
    expect(Runners.runsOf(runsFile).filter((r) => r.tool === "delete_files")).toHaveLength(approved.error === undefined ? 2 : 1)
  }, 240_000)

  it("a call scheduled 8 seconds out fires after both runners were killed and restarted", async () => {
    // Start from a fresh runner, so that the turn runs there.
    for (const runner of runners) await Runners.kill(runner)
    const c = await startRunner()
    const id = (await c.send({ start: "conv-2", text: "remind me" })).id!
    await Runners.until(async () => (await statusOf(id, "r1")) === "Scheduled", 30_000, "the turn waiting")
    for (const runner of runners) await Runners.kill(runner)
    expect(Runners.runsOf(runsFile).filter((r) => r.tool === "remind")).toEqual([])

    const [d, e] = await Promise.all([startRunner(), startRunner()])
    await Runners.until(async () => (await statusOf(id, "r1")) === "Completed", 60_000, "the reminder firing")
    const reminders = Runners.runsOf(runsFile).filter((r) => r.tool === "remind")
    expect(reminders).toHaveLength(1)
    expect([d.pid, e.pid]).toContain(reminders[0]!.pid)
    await Runners.until(async () => Messages.textOf((await view(id))!.messages.at(-1)!) === "done", 30_000, "the turn completing")
  }, 240_000)
  it("four runners starting at the same moment on an empty database, each creating the tables it needs, all start and share the work", async () => {
    for (const runner of runners) await Runners.kill(runner)
    // A database with no table at all: the four runners create the cluster's tables and the turn store's.
    const fresh = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE DATABASE fresh_start`
      const url = new URL(server.url)
      url.pathname = "/fresh_start"
      return url.href
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(server.url) }))))
    const freshRuns = path.join(path.dirname(runsFile), "fresh.log")
    const started = await startRunners(4, { ...env, DATABASE_URL: fresh, RUNS_FILE: freshRuns, MIGRATE_STORE: "1" })
    await spread(started, "the shards spreading over the four runners")

    // The tables are there once, and work: a turn started through one runner is decided through another.
    const freshView = ManagedRuntime.make(
      SqlConversationStore.layer({ table }).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(fresh) })), Layer.orDie)
    )
    try {
      const load = (id: string) =>
        freshView.runPromise(Effect.flatMap(ConversationStore.ConversationStore, (store) => store.load(id))).then(Option.getOrUndefined)
      const id = (await started[0]!.send({ start: "conv-fresh", text: "delete fresh" })).id!
      await Runners.until(async () => Messages.findTool((await load(id))?.messages ?? [], "d1")?.status._tag === "AwaitingApproval", 60_000, "the turn pausing")
      expect(await started[3]!.send({ decide: id, call: "d1", approve: true }, 60_000)).toEqual({ n: expect.any(Number) })
      await Runners.until(async () => {
        const last = (await load(id))?.messages.at(-1)
        return last?.role === "assistant" && Messages.textOf(last) === "done"
      }, 60_000, "the turn completing")
      expect(Runners.runsOf(freshRuns).filter((r) => r.tool === "delete_files")).toHaveLength(1)
      const migrations = await Effect.runPromise(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return {
          cluster: yield* sql`SELECT migration_id FROM cluster_migrations ORDER BY migration_id`,
          store: yield* sql`SELECT migration_id FROM ${sql(`${table}_migrations`)}`
        }
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(fresh) }))))
      expect(migrations.store).toEqual([{ migration_id: 1 }, { migration_id: 2 }, { migration_id: 3 }])
      expect(migrations.cluster.length).toBeGreaterThan(0)
    } finally {
      await freshView.dispose()
    }
  }, 240_000)
  it("a runner on an empty database waits while another process holds the cluster's migration lock, then creates the tables", async () => {
    for (const runner of runners) await Runners.kill(runner)
    const url = new URL(server.url)
    url.pathname = "/locked_start"
    await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE DATABASE locked_start`).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(server.url) }))
    ))
    const hold = SqlClient.SqlClient.pipe(
      Effect.flatMap((sql) => sql.reserve),
      Effect.tap((conn) => conn.executeValues("SELECT pg_advisory_lock(hashtextextended($1, 0))", [SocketRunner.migrationLock]))
    )
    const clusterTables = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT to_regclass('cluster_runners')::text AS found`)
    const waitingForLock = Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(
        sql`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = 'locked_start' AND pid <> pg_backend_pid() AND query LIKE 'SELECT pg_try_advisory_xact_lock%'`,
        (rows) => rows[0]?.["n"] === 1
      ))
    await Effect.runPromise(Effect.gen(function*() {
      const conn = yield* hold
      yield* Effect.promise(() => SqlConversationStore.migrate({ table }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url.href) })), Effect.runPromise))
      const runner = Runners.start({ ...env, DATABASE_URL: url.href })
      runners.push(runner)
      let ready = false
      void runner.ready.then(() => (ready = true))
      // The runner has asked for the lock (its session's last statement), and asks again while it waits.
      yield* waitingForLock.pipe(
        Effect.repeat({ until: (waiting) => waiting, schedule: Schedule.spaced("100 millis") }),
        Effect.timeoutOrElse({ duration: "60 seconds", orElse: () => Effect.die(new Error("the runner never asked for the lock")) })
      )
      yield* Effect.sleep("1 second")
      // Still waiting for the lock: no table yet, not ready.
      expect(ready).toBe(false)
      expect(yield* clusterTables).toEqual([{ found: null }])
      yield* conn.executeValues("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [SocketRunner.migrationLock])
      expect(yield* Effect.promise(() => runner.ready)).toEqual({ ready: true })
      expect(yield* clusterTables).toEqual([{ found: "cluster_runners" }])
    }).pipe(Effect.scoped, Effect.provide(PgClient.layer({ url: Redacted.make(url.href) }))))
  }, 120_000)

  it("a runner cut off from the database and later back: its shards move to the other runner, the turn decided there completes, nothing runs twice", async () => {
    for (const runner of runners) await Runners.kill(runner)
    const proxy = await StallingProxy.start(server.port)
    try {
      // A reaches the database only through the proxy; B directly.
      const a = Runners.start({ ...env, DATABASE_URL: StallingProxy.via(proxy, server.url) })
      runners.push(a)
      expect(await a.ready).toEqual({ ready: true })
      const b = await startRunner()
      await spread([a, b], "the shards spreading over both runners")
      const before = await conversationOn(a, true, "conv-cut")
      expect((await a.send({ start: before.conversation, text: before.text }, 15_000)).id).toBe(before.id)
      await Runners.until(async () => (await statusOf(before.id, "d1")) === "AwaitingApproval", 60_000, "the turn on A pausing")

      // A's connection stops forwarding: its shard locks' session goes idle and the server ends it
      // (`idle_session_timeout` = the lock's expiration), so B takes every shard; the decision runs there.
      proxy.stall()
      await Runners.until(async () => (await shardsOf(b)).length === Runners.shardsPerGroup, 90_000, "B taking A's shards")
      expect(await b.send({ decide: before.id, call: "d1", approve: true }, 60_000)).toEqual({ n: expect.any(Number) })
      await Runners.until(() => completed(before.id), 60_000, "the turn completing on B")

      // A is back: what it held back is delivered (and refused where it lost its locks); it takes shards again and works.
      proxy.resume()
      await spread([a, b], "the shards spreading over both runners again")
      const after = await conversationOn(a, true, "conv-back")
      expect((await b.send({ start: after.conversation, text: after.text }, 15_000)).id).toBe(after.id)
      await Runners.until(async () => (await statusOf(after.id, "d1")) === "AwaitingApproval", 60_000, "the turn on A pausing")
      expect(await a.send({ decide: after.id, call: "d1", approve: true }, 60_000)).toEqual({ n: expect.any(Number) })
      await Runners.until(() => completed(after.id), 60_000, "the turn completing on A")
      // Some time for anything A still held back to show.
      await new Promise((resolve) => setTimeout(resolve, 3_000))

      const tools = Runners.runsOf(runsFile).filter((r) => r.tool === "delete_files")
      expect(tools.filter((r) => r.paths?.[0] === before.text)).toEqual([{ tool: "delete_files", paths: [before.text], pid: b.pid }])
      expect(tools.filter((r) => r.paths?.[0] === after.text)).toEqual([{ tool: "delete_files", paths: [after.text], pid: a.pid }])
      expect(await statusOf(before.id, "d1")).toBe("Completed")
      expect(await statusOf(after.id, "d1")).toBe("Completed")
    } finally {
      proxy.resume()
      await proxy.close()
    }
  }, 360_000)

  it("a turn in flight on a runner when it is cut off moves to the other runner and completes there while the first is still cut off, nothing runs twice", async () => {
    for (const runner of runners) await Runners.kill(runner)
    const proxy = await StallingProxy.start(server.port)
    try {
      // A reaches the database only through the proxy; B directly.
      const a = Runners.start({ ...env, DATABASE_URL: StallingProxy.via(proxy, server.url) })
      runners.push(a)
      expect(await a.ready).toEqual({ ready: true })
      const b = await startRunner()
      await spread([a, b], "the shards spreading over both runners")
      // A "slow" turn: its model call takes seconds, so the turn is mid-way on A when A is cut off.
      const flight = await conversationOn(a, true, "slow-flight")
      const modelCalls = () => Runners.runsOf(runsFile).filter((r) => r.model !== undefined && r.asked === flight.text).map((r) => r.pid)
      expect((await a.send({ start: flight.conversation, text: flight.text }, 15_000)).id).toBe(flight.id)
      await Runners.until(() => modelCalls().includes(a.pid), 60_000, "the model called on A")

      // A is cut off mid-turn, before the turn paused: B takes the shards and runs the turn again from
      // what was recorded (the model call A made is not).
      proxy.stall()
      expect(await statusOf(flight.id, "d1")).toBeUndefined()
      await Runners.until(async () => (await shardsOf(b)).length === Runners.shardsPerGroup, 90_000, "B taking A's shards")
      await Runners.until(async () => (await statusOf(flight.id, "d1")) === "AwaitingApproval", 90_000, "the turn pausing on B")
      expect(await b.send({ decide: flight.id, call: "d1", approve: true }, 60_000)).toEqual({ n: expect.any(Number) })
      await Runners.until(() => completed(flight.id), 60_000, "the turn completing on B")
      expect(proxy.stalled()).toBe(true)
      expect(modelCalls()).toContain(b.pid)
      const stored = Messages.findTool((await view(flight.id))!.messages, "d1")!.status
      expect(stored).toMatchObject({ _tag: "Completed", result: { deleted: 1, by: b.pid } })

      // A is back: what it held back is refused or lands on work already done; nothing runs again.
      proxy.resume()
      await spread([a, b], "the shards spreading over both runners again")
      await new Promise((resolve) => setTimeout(resolve, 3_000))
      const tools = Runners.runsOf(runsFile).filter((r) => r.tool === "delete_files" && r.paths?.[0] === flight.text)
      expect(tools).toEqual([{ tool: "delete_files", paths: [flight.text], pid: b.pid }])
      expect(Messages.findTool((await view(flight.id))!.messages, "d1")!.status).toEqual(stored)
      expect(await completed(flight.id)).toBe(true)
    } finally {
      proxy.resume()
      await proxy.close()
    }
  }, 360_000)
})
