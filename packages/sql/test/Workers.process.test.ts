/**
 * Many worker processes on one database (PostgreSQL and SQLite): six start
 * together after the migration, race to resume the same pauses, find a
 * conversation busy mid-call, and take over from a worker killed with
 * SIGKILL once its lease expired; six more start at once on an empty
 * database, each running the migrations itself. Every worker is a real OS
 * process (see `packages/bench/src/faults/worker.ts`); the tools record each run in a file all
 * of them append to.
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlConversationStore } from "../src/index.js"
import { freshPostgresDatabase, pgClient, sqliteClient, tempDatabase, uniqueTable } from "./support/Databases.js"
import * as Workers from "../../bench/src/faults/Workers.js"

const rounds = 100

const paused = (conversation: string, tool: "pay" | "sync", slow = false): Messages.Messages => [
  Messages.user("Pay the bill."),
  {
    role: "assistant",
    parts: [{
      _tag: "ToolCall",
      id: "c1",
      name: tool,
      arguments: JSON.stringify({ conversation, slow }),
      status: { _tag: "AwaitingApproval" }
    }]
  }
]

interface Database {
  readonly env: Record<string, string>
  readonly client: Layer.Layer<SqlClient.SqlClient, unknown>
}

const databases: ReadonlyArray<readonly [string, () => Promise<Database>]> = [
  ["SQLite", async () => {
    const file = tempDatabase()
    return { env: { SQLITE_FILE: file }, client: sqliteClient(file) }
  }],
  ["PostgreSQL", async () => {
    const url = await Effect.runPromise(freshPostgresDatabase)
    return { env: { DATABASE_URL: url }, client: pgClient(url) }
  }]
]

for (const [name, database] of databases) {
  describe(`worker processes on ${name}`, () => {
    const table = uniqueTable()
    const runsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-runs-")), "runs.log")
    let runtime: ManagedRuntime.ManagedRuntime<ConversationStore.ConversationStore, unknown>
    let workers: Array<Workers.WorkerProcess> = []
    let readiness: Array<Workers.Reply> = []

    /** Runs an effect on this test process's own connection to the database. */
    const withStore = <A, E>(f: (store: ConversationStore.Service) => Effect.Effect<A, E>) =>
      runtime.runPromise(Effect.flatMap(ConversationStore.ConversationStore, f))

    const call = async (conversation: string) => {
      const stored = Option.getOrThrow(await withStore((store) => store.load(conversation)))
      return Messages.toolCalls(stored.messages)[0]!
    }

    beforeAll(async () => {
      const { client, env } = await database()
      runtime = ManagedRuntime.make(
        SqlConversationStore.layer({ table }).pipe(Layer.provideMerge(client), Layer.orDie)
      )
      // The deployer migrates once; then six workers start together on the empty tables.
      await runtime.runPromise(Effect.provide(SqlConversationStore.migrate({ table }), client))
      workers = Array.from({ length: 6 }, () => Workers.start({ ...env, TABLE: table, RUNS_FILE: runsFile }))
      readiness = await Promise.all(workers.map((worker) => worker.ready))
    }, 120_000)

    afterAll(async () => {
      await Promise.all(workers.map(Workers.stop))
      await runtime?.dispose()
    }, 60_000)

    it("six workers starting together after the migration all start", () => {
      expect(readiness).toEqual(Array.from({ length: 6 }, () => ({ ready: true })))
    })

    for (const racers of [2, 5]) {
      it(`${racers} workers race to resume the same pause, ${rounds} rounds: the call runs once, by the worker whose result is stored`, async () => {
        let busy = 0
        for (let round = 0; round < rounds; round++) {
          const conversation = `race-${racers}-${round}`
          await withStore((store) => store.save(conversation, paused(conversation, "pay"), { expectedVersion: 0 }))
          const replies = await Promise.all(workers.slice(0, racers).map((worker) => worker.send({ resume: conversation })))
          const runs = Workers.runsOf(runsFile, conversation)
          expect(runs).toHaveLength(1)
          const runner = runs[0]!.pid
          replies.forEach((reply, i) => {
            expect(reply.defect).toBeUndefined()
            if (workers[i]!.pid === runner) expect(reply.outcome).toBe("Complete")
            // The others were refused before running anything, or came after the turn was over and found nothing to run.
            else if (reply.error !== undefined) expect(["ConversationBusy", "ConcurrentModification"]).toContain(reply.error)
            else expect(reply.outcome).toBe("Complete")
            if (reply.error !== undefined) busy++
          })
          expect((await call(conversation)).status).toEqual({ _tag: "Completed", result: { by: runner, attempt: 1 } })
        }
        // The workers did collide: the refusals above were exercised.
        expect(busy).toBeGreaterThan(0)
      }, 180_000)
    }

    it("a worker that resumes while another is mid-call is busy, and nothing is marked failed", async () => {
      const conversation = "mid-call"
      const [owner, other] = [workers[0]!, workers[1]!]
      await withStore((store) => store.save(conversation, paused(conversation, "pay", true), { expectedVersion: 0 }))
      const running = owner.send({ resume: conversation })
      await Workers.eventually(() => Workers.runsOf(runsFile, conversation).length === 1, "the call starting")
      expect(await other.send({ resume: conversation })).toMatchObject({ error: "ConversationBusy" })
      expect((await call(conversation)).status).toEqual({ _tag: "Running" })
      fs.writeFileSync(`${runsFile}.release-${conversation}`, "")
      expect(await running).toMatchObject({ outcome: "Complete" })
      expect(Workers.runsOf(runsFile, conversation).map((run) => run.pid)).toEqual([owner.pid])
      expect((await call(conversation)).status).toEqual({ _tag: "Completed", result: { by: owner.pid, attempt: 1 } })
    }, 60_000)

    for (const place of ["one process", "two processes"] as const) {
      it(`two resumes with the same owner mid-call, in ${place}: the second is busy and changes nothing, and the first saves to the end`, async () => {
        const second = place === "one process" ? workers[0]! : workers[1]!
        const conversation = `same-owner-${place.replace(" ", "-")}`
        const owner = `shared-owner-${conversation}`
        await withStore((store) => store.save(conversation, paused(conversation, "pay", true), { expectedVersion: 0 }))
        const running = workers[0]!.send({ resume: conversation, owner })
        await Workers.eventually(() => Workers.runsOf(runsFile, conversation).length === 1, "the call starting")
        expect(await second.send({ resume: conversation, owner })).toMatchObject({ error: "ConversationBusy" })
        expect((await call(conversation)).status).toEqual({ _tag: "Running" })
        fs.writeFileSync(`${runsFile}.release-${conversation}`, "")
        expect(await running).toMatchObject({ outcome: "Complete" })
        expect(Workers.runsOf(runsFile, conversation).map((run) => run.pid)).toEqual([workers[0]!.pid])
        expect((await call(conversation)).status).toEqual({ _tag: "Completed", result: { by: workers[0]!.pid, attempt: 1 } })
      }, 60_000)
    }

    it(`two resumes at once with the same owner, in one process and in two, ${rounds} rounds: the call runs once, and its result is stored`, async () => {
      for (let round = 0; round < rounds; round++) {
        const conversation = `same-owner-race-${round}`
        const owner = `shared-owner-${round}`
        await withStore((store) => store.save(conversation, paused(conversation, "pay"), { expectedVersion: 0 }))
        const senders = [workers[2]!, workers[2]!, workers[3]!]
        const replies = await Promise.all(senders.map((worker) => worker.send({ resume: conversation, owner })))
        const runs = Workers.runsOf(runsFile, conversation)
        expect(runs).toHaveLength(1)
        for (const reply of replies) {
          expect(reply.defect).toBeUndefined()
          // Refused before running anything, or after the turn was over with nothing left to run.
          if (reply.error !== undefined) expect(["ConversationBusy", "ConcurrentModification"]).toContain(reply.error)
          else expect(reply.outcome).toBe("Complete")
        }
        expect((await call(conversation)).status).toEqual({ _tag: "Completed", result: { by: runs[0]!.pid, attempt: 1 } })
      }
    }, 180_000)

    for (const tool of ["pay", "sync"] as const) {
      it(`kill -9 of the owner mid-call: after its lease expires another worker finishes the turn (${tool === "pay" ? "interrupted" : "idempotent: run again"})`, async () => {
        const conversation = `killed-${tool}`
        const victim = tool === "pay" ? workers[4]! : workers[5]!
        const survivor = workers[0]!
        await withStore((store) => store.save(conversation, paused(conversation, tool, true), { expectedVersion: 0 }))
        void victim.send({ resume: conversation, leaseMillis: 1500 }).catch(() => undefined)
        await Workers.eventually(() => Workers.runsOf(runsFile, conversation).length === 1, "the call starting")
        victim.process.kill("SIGKILL")
        await victim.exited
        fs.writeFileSync(`${runsFile}.release-${conversation}`, "")
        // Until the dead worker's lease expires the conversation is busy, and its call stays Running.
        expect(await survivor.send({ resume: conversation })).toMatchObject({ error: "ConversationBusy" })
        expect((await call(conversation)).status).toEqual({ _tag: "Running" })
        let reply: Workers.Reply = {}
        for (let tries = 0; reply.outcome === undefined && tries < 100; tries++) {
          reply = await survivor.send({ resume: conversation })
          if (reply.error === "ConversationBusy") await new Promise((resolve) => setTimeout(resolve, 100))
          else expect(reply).toMatchObject({ outcome: "Complete" })
        }
        expect(reply).toMatchObject({ outcome: "Complete" })
        const runs = Workers.runsOf(runsFile, conversation).map((run) => [run.pid, run.attempt])
        const status = (await call(conversation)).status
        if (tool === "pay") {
          expect(runs).toEqual([[victim.pid, 1]])
          expect(status).toMatchObject({ _tag: "Failed", error: expect.stringContaining("interrupted") })
        } else {
          expect(runs).toEqual([[victim.pid, 1], [survivor.pid, 2]])
          expect(status).toEqual({ _tag: "Completed", result: { by: survivor.pid, attempt: 2 } })
        }
      }, 60_000)
    }
  })
}

for (const [name, database] of databases) {
  describe(`worker processes migrating at once on an empty ${name} database`, () => {
    it("six workers that each run the migrations at startup all start; the migration is applied once, and the store works", async () => {
      const { client, env } = await database()
      const table = uniqueTable()
      const runsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-runs-")), "runs.log")
      const goFile = `${runsFile}.go`
      const workers = Array.from({ length: 6 }, () =>
        Workers.start({ ...env, TABLE: table, RUNS_FILE: runsFile, MIGRATE: "1", GO_FILE: goFile }))
      try {
        // Every process has its client; then all of them migrate at the same moment.
        await Promise.all(workers.map((worker) => worker.loaded))
        fs.writeFileSync(goFile, "")
        const readiness = await Promise.all(workers.map((worker) => worker.ready))
        for (const ready of readiness) expect(ready).toMatchObject({ ready: true, applied: expect.any(Number) })
        // One of them applied the migrations; the others waited for it and found nothing left to do.
        const all = Object.keys(SqlConversationStore.migrations()).length
        expect(readiness.map((ready) => ready.applied).sort()).toEqual([0, 0, 0, 0, 0, all])
        const runtime = ManagedRuntime.make(SqlConversationStore.layer({ table }).pipe(Layer.provideMerge(client), Layer.orDie))
        try {
          expect(await runtime.runPromise(Effect.provide(SqlConversationStore.migrate({ table }), client))).toEqual([])
          await runtime.runPromise(Effect.flatMap(ConversationStore.ConversationStore, (store) =>
            store.save("after-migration", paused("after-migration", "pay"), { expectedVersion: 0 })))
          expect((await workers[3]!.send({ pending: true })).ids).toEqual(["after-migration"])
          expect(await workers[5]!.send({ resume: "after-migration" })).toMatchObject({ outcome: "Complete" })
          expect(Workers.runsOf(runsFile, "after-migration").map((run) => run.pid)).toEqual([workers[5]!.pid])
        } finally {
          await runtime.dispose()
        }
      } finally {
        await Promise.all(workers.map(Workers.stop))
      }
    }, 180_000)
  })
}
