/**
 * The fault soak on the workflow engine's runners: runner processes
 * (`packages/workflow/test/support/runner.ts`, `effect/cluster` socket runners
 * on PostgreSQL hosting the durable turn) start turns that pause on an
 * approval of `delete_files` (each run recorded with its runner's pid, which
 * it returns), and each conversation's loop approves it a moment later
 * through the next runner until the turn has ended, while the fault (runner 0
 * cut off from the database, later back) is injected once a turn the cut-off
 * runner started has not run its call yet. The same counts
 * as the workers' soak (`soak.ts`): a call run twice, a stored result that is
 * not its runner's, a turn that never ends, an error the fault does not
 * explain; and as the fault's bite, the turns moved off the cut-off runner
 * (its model started them, another runner ran their call).
 */
import { ConversationStore, Messages } from "@chat-ts/core"
import type { EmbeddedPostgres } from "@chat-ts/sql/testing"
import { SqlConversationStore } from "@chat-ts/sql"
import { Effect, Option, Schedule } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Base, Config, Counts, Fault, Injection, Live } from "./soak.js"
import { injectWhen, kind, parentOf, retried } from "./soak.js"
import * as Workers from "./Workers.js"

/** The workflow engine's runner, run from its package's folder. */
const runner: Workers.Script = {
  file: fileURLToPath(new URL("../../../workflow/test/support/runner.ts", import.meta.url)),
  cwd: fileURLToPath(new URL("../../../workflow", import.meta.url))
}

/** How many shards the runners split (as `runner.ts` configures them). */
export const shardsPerGroup = 8

/** The runners' bound beyond the workers' one: a cut-off runner's shard locks expire, the others take them. */
const extraDeadlineMillis = 60_000

/** How long after a turn paused its approval comes (a person's moment: long enough for the fault to come first). */
const approvalMillis = 1_000

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, millis)))

/** One line a runner recorded: a model call (with the user's text it was asked for) or a tool run, with its pid. */
interface Run {
  readonly pid: number
  readonly model?: number
  readonly asked?: string
  readonly tool?: string
  readonly paths?: ReadonlyArray<string>
}

const runsOf = (file: string): ReadonlyArray<Run> =>
  fs.existsSync(file)
    ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Run)
    : []

/** The shards `worker` holds now, asked of it (none when it does not answer in time). */
export const shardsOf = async (worker: Workers.WorkerProcess, millis = 10_000): Promise<ReadonlyArray<number>> =>
  (await worker.send({ shards: true }, millis).catch(() => ({ shards: [] }) as Workers.Reply)).shards ?? []

/** Waits (bounded) until `check` holds, polling every 100 ms. */
export const until = async (check: () => Promise<boolean>, millis: number, what: string): Promise<void> => {
  const deadline = Date.now() + millis
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`faults: ${what}: not within ${millis} ms`)
    await sleep(100)
  }
}

/** Whether `workers` hold every shard between them, each at least one, none twice. */
const spread = async (workers: ReadonlyArray<Workers.WorkerProcess>): Promise<boolean> => {
  const held = await Promise.all(workers.map((worker) => shardsOf(worker)))
  const all = held.flat()
  return held.every((shards) => shards.length > 0) && all.length === shardsPerGroup && new Set(all).size === shardsPerGroup
}

let soaks = 0

/** Runs one soak of runner processes under `fault` on `server`. */
export const run = async (fault: Fault, config: Config, server: EmbeddedPostgres.Server | undefined): Promise<Counts> => {
  if (server === undefined) throw new Error("faults: the workflow runners run on PostgreSQL")
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-faults-wf-"))
  const runsFile = path.join(dir, "runs.log")
  const table = `wf_soak_${process.pid}_${++soaks}`
  const parent = parentOf("PostgreSQL", server.url, undefined, table)
  const base: Base = { database: "PostgreSQL", server, filename: undefined, table, parent, leaseMillis: config.leaseMillis }
  const injection = await fault.setup(base)
  let workers: ReadonlyArray<Workers.WorkerProcess> = []
  try {
    await parent.runPromise(Effect.orDie(SqlConversationStore.migrate({ table })))
    const count = Math.max(2, config.workers)
    workers = Array.from({ length: count }, (_, i) =>
      Workers.start({ DATABASE_URL: server.url, TABLE: table, RUNS_FILE: runsFile, ...injection.env?.(i) }, runner))
    const ready = await Promise.all(workers.map((worker) => worker.ready))
    const notReady = ready.find((reply) => reply.ready !== true)
    if (notReady !== undefined) throw new Error(`faults: a runner did not start: ${notReady.error}`)
    // Every runner holds shards before the soak, the cut-off one too.
    await until(() => spread(workers), 120_000, "the shards spreading over every runner")
    const live: Live = {
      ...base,
      workers,
      broadcast: async (command) => {
        await Promise.all(workers.map((worker, i) => worker.send(command(i), 30_000)))
      }
    }
    return await soak(fault, config, injection, live, runsFile)
  } finally {
    await Promise.all(workers.map(Workers.stop))
    await injection.close?.()
    await parent.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** A turn's stored call `d1` and whether the turn ended (the model's "done" last). */
const stateOf = async (live: Live, executionId: string) => {
  const stored = await live.parent.runPromise(
    Effect.flatMap(ConversationStore.ConversationStore, (store) => store.load(executionId)).pipe(
      Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 600 })
    )
  )
  const messages = Option.isSome(stored) ? stored.value.messages : []
  const last = messages[messages.length - 1]
  return {
    call: Messages.findTool(messages, "d1"),
    ended: last?.role === "assistant" && Messages.toolCallsOf(last).length === 0 && Messages.textOf(last) === "done"
  }
}

/** A command of `runner.ts`: start a turn, or decide its call. */
type Command =
  | { readonly start: string; readonly text: string }
  | { readonly decide: string; readonly call: string; readonly approve: boolean }

/** Where a command went: which runner (0 is the cut-off one), a start or a decision. */
interface Sent {
  readonly runner: number
  readonly what: "start" | "decide"
}

/**
 * The answers this fault explains, beyond the retryable ones of every fault, by kind: the approval sent again
 * (the same one: the loop sends it again while the turn has not ended) refused typed once the call has run; a
 * start sent to the cut-off runner refused with a retryable `StoreError` (the engine could not store it: `start`
 * fails typed, and starting again through another runner is the same execution). Every other answer is unexpected.
 */
const lateKind = (to: Sent, reply: Workers.Reply): string | undefined =>
  to.what === "decide" && reply.error === "ToolCallAlreadyResolved"
    ? "ToolCallAlreadyResolved (the approval sent again after its call ran)"
    : to.what === "start" && to.runner === 0 && reply.error === "StoreError" && reply.retryable === true
    ? "StoreError (retryable; a start on the cut-off runner)"
    : undefined

const soak = async (fault: Fault, config: Config, injection: Injection, live: Live, runsFile: string): Promise<Counts> => {
  const ids = Array.from({ length: config.conversations }, (_, i) => `wf-${i}`)
  const textOf = (id: string) => `delete ${id}`
  const started = Date.now()
  const deadline = started + config.deadlineMillis + extraDeadlineMillis
  const errors: Record<string, number> = {}
  const unexpected: Array<string> = []
  let handedOver = 0
  const outstanding: Array<Promise<unknown>> = []
  const executions = new Map<string, string>()
  const ended = new Map<string, number>()
  const record = (id: string, to: Sent) => (reply: Workers.Reply) => {
    if (reply.defect === undefined && reply.error === undefined) return
    const k = lateKind(to, reply) ?? kind(reply)
    errors[k] = (errors[k] ?? 0) + 1
    if (lateKind(to, reply) === undefined && (reply.defect !== undefined || !retried(reply))) {
      unexpected.push(`${id}: ${reply.defect ?? `${reply.error} ${reply.message ?? ""}`}`)
    }
  }
  /** Sends `command` to the next runner; waits for its answer at most `attemptMillis` (a late one is still counted). */
  const attempt = async (id: string, index: number, command: Command) => {
    const to: Sent = { runner: index % live.workers.length, what: "start" in command ? "start" : "decide" }
    const reply = live.workers[to.runner]!.send(command, 120_000)
    outstanding.push(reply.then(record(id, to), (error: unknown) => void unexpected.push(`${id}: ${String(error)}`)))
    const answered = await Promise.race([reply.catch(() => undefined), sleep(config.attemptMillis).then(() => "late" as const)])
    if (answered === "late") {
      handedOver++
      return undefined
    }
    return answered
  }
  const arrival = (i: number) => started + Math.round((i * 1000) / config.rate)
  const drive = async (id: string, i: number) => {
    await sleep(arrival(i) - Date.now())
    let tries = 0
    // The turn starts (the same execution whichever runner starts it, however often).
    while (!executions.has(id) && Date.now() < deadline) {
      const reply = await attempt(id, i + tries++, { start: id, text: textOf(id) })
      if (reply?.id !== undefined) executions.set(id, reply.id)
    }
    const executionId = executions.get(id)
    if (executionId === undefined) return
    // It pauses on the approval, which a person gives a moment later; it is sent again (the same decision:
    // idempotent) until the turn has ended.
    let paused = false
    while (Date.now() < deadline) {
      const state = await stateOf(live, executionId)
      if (state.ended) return void ended.set(id, Date.now())
      if (state.call?.status._tag === "AwaitingApproval") {
        if (!paused) await sleep(approvalMillis)
        paused = true
        await attempt(id, i + tries++, { decide: executionId, call: "d1", approve: true })
        const waitUntil = Math.min(deadline, Date.now() + config.attemptMillis)
        while (Date.now() < waitUntil && !(await stateOf(live, executionId)).ended) await sleep(100)
      } else await sleep(100)
    }
  }
  // The fault comes once a quarter of the conversations have arrived and a turn the cut-off runner's model
  // started has not run its call yet (so that the cut-off runner has work to lose).
  const cut = live.workers[0]!.pid
  const started0 = () => {
    const runs = runsOf(runsFile)
    const ran = new Set(runs.filter((run) => run.tool === "delete_files").map((run) => run.paths?.[0]))
    return runs.some((run) => run.model !== undefined && run.pid === cut && !ran.has(run.asked))
  }
  const faultOver = injectWhen(
    arrival(Math.floor(ids.length / 4)),
    deadline,
    started0,
    `faults: ${fault.id}: the cut-off runner's model never started a turn`,
    () => injection.inject(live)
  )
  await Promise.all(ids.map(drive))
  const { at, over } = await faultOver
  await Promise.all(outstanding)
  return counts(fault, live, ids, runsFile, {
    errors, unexpected, handedOver, executions, ended, started, at, over, textOf, cut: live.workers[0]!.pid,
    decidedByOver: ids.filter((_, i) => arrival(i) <= over)
  })
}

const counts = async (
  fault: Fault,
  live: Live,
  ids: ReadonlyArray<string>,
  runsFile: string,
  seen: {
    readonly errors: Record<string, number>
    readonly unexpected: ReadonlyArray<string>
    readonly handedOver: number
    readonly executions: ReadonlyMap<string, string>
    readonly ended: ReadonlyMap<string, number>
    readonly started: number
    readonly at: number
    readonly over: number
    readonly textOf: (id: string) => string
    /** The cut-off runner's pid. */
    readonly cut: number
    readonly decidedByOver: ReadonlyArray<string>
  }
): Promise<Counts> => {
  const runs = runsOf(runsFile)
  let doubleRuns = 0
  let wrongResults = 0
  let interrupted = 0
  let moved = 0
  for (const id of ids) {
    const text = seen.textOf(id)
    const tools = runs.filter((run) => run.tool === "delete_files" && run.paths?.[0] === text)
    const models = runs.filter((run) => run.model !== undefined && run.asked === text)
    if (tools.length > 1) doubleRuns++
    if (tools.length === 1 && tools[0]!.pid !== seen.cut && models.some((run) => run.pid === seen.cut)) moved++
    const executionId = seen.executions.get(id)
    if (executionId === undefined) continue
    const status = (await stateOf(live, executionId)).call?.status
    if (status?._tag === "Completed") {
      if (tools.length !== 1 || JSON.stringify(status.result) !== JSON.stringify({ deleted: 1, by: tools[0]!.pid })) wrongResults++
    } else if (status?._tag === "Failed") interrupted++
  }
  const last = Math.max(seen.started, ...seen.ended.values())
  const recovered = Math.max(seen.over, ...seen.decidedByOver.map((id) => seen.ended.get(id) ?? Infinity))
  return {
    fault: fault.id,
    database: fault.database,
    name: fault.name,
    conversations: ids.length,
    workers: live.workers.length,
    doubleRuns,
    wrongResults,
    lostDecisions: ids.length - seen.ended.size,
    unexpectedErrors: seen.unexpected.length,
    unexpected: seen.unexpected.slice(0, 5),
    interrupted,
    errors: seen.errors,
    bitten: moved,
    handedOver: seen.handedOver,
    runs: runs.filter((run) => run.tool === "delete_files").length,
    injectedAtMillis: seen.at - seen.started,
    faultMillis: seen.over - seen.at,
    recoverMillis: recovered - seen.over,
    totalMillis: last - seen.started
  }
}
