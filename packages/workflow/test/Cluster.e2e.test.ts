/**
 * End to end on `@effect/cluster` with a real PostgreSQL: durable turns on
 * runner processes that are killed with SIGKILL. The runs of the model and
 * the tools are recorded by the runners in a file (see `support/runner.ts`).
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlConversationStore } from "../../sql/src/index.js"
import { EmbeddedPostgres } from "../../sql/src/testing/index.js"
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

  /** The published state of a turn, read by this test process from the database. */
  const view = async (executionId: string) =>
    Option.getOrUndefined(
      await runtime.runPromise(Effect.flatMap(ConversationStore.ConversationStore, (store) => store.load(executionId)))
    )

  const statusOf = async (executionId: string, call: string) =>
    Messages.findTool((await view(executionId))?.messages ?? [], call)?.status._tag

  beforeAll(async () => {
    server = await EmbeddedPostgres.start()
    env = { DATABASE_URL: server.url, TABLE: table, RUNS_FILE: runsFile, REMIND_MILLIS: "3000" }
    runtime = ManagedRuntime.make(
      SqlConversationStore.layer({ table }).pipe(
        Layer.provideMerge(PgClient.layer({ url: Redacted.make(server.url) })),
        Layer.orDie
      )
    )
    await runtime.runPromise(Effect.provide(SqlConversationStore.migrate({ table }), PgClient.layer({ url: Redacted.make(server.url) })))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(runners.map((runner) => Runners.kill(runner).catch(() => undefined)))
    await runtime?.dispose()
    await server?.stop()
  }, 60_000)

  // Every runner here is a `SingleRunner` (support/runner.ts): the one holding the shard locks runs the
  // turns, the others wait for the locks; a runner killed with SIGKILL loses them when its connection drops.
  it("start on A, pause, kill -9 A, decide through B: completes on B; the tool ran once, the model twice", async () => {
    const a = await startRunner()
    const id = (await a.send({ start: "conv-1", text: "delete the logs" })).id!
    expect(typeof id).toBe("string")
    await Runners.until(async () => (await statusOf(id, "d1")) === "AwaitingApproval", 60_000, "the turn pausing")
    expect(Runners.runsOf(runsFile).filter((r) => r.model !== undefined)).toEqual([{ model: 1, pid: a.pid }])

    // B starts while A still holds the locks; A dies without a word.
    const b = await startRunner()
    await Runners.kill(a)
    expect(await b.send({ decide: id, call: "d1", approve: true })).toEqual({ n: expect.any(Number) })
    await Runners.until(async () => (await view(id))?.messages.at(-1)?.role === "assistant" &&
      Messages.textOf((await view(id))!.messages.at(-1)!) === "done", 60_000, "the turn completing on B")

    const runs = Runners.runsOf(runsFile)
    expect(runs.filter((r) => r.tool === "delete_files")).toEqual([{ tool: "delete_files", pid: b.pid }])
    expect(runs.filter((r) => r.model !== undefined).map((r) => r.pid)).toEqual([a.pid, b.pid])
    expect(await statusOf(id, "d1")).toBe("Completed")
    // A second decision is refused, and nothing runs again.
    expect((await b.send({ decide: id, call: "d1", approve: true })).error).toBe("ToolCallAlreadyResolved")
  }, 240_000)

  it("a call scheduled 3 seconds out fires after both runners were killed and restarted", async () => {
    // One runner at a time holds the shard locks (see support/runner.ts): start from a fresh one.
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
})
