/**
 * Scenario 10's part of RESULTS.md: its tables (throughput and CPU per
 * cell, latency at the fixed rates, how saturation moves with workers and
 * conversations, the statements of one decision) and its target, "a fleet
 * measured", met when every cell of the matrix ran with its floor and every
 * check held. Used by `report.ts`.
 */
import type * as Fleet from "../scenarios/fleet.js"

/** The matrix of the full run, every cell of which the target asks for. */
export const matrix = {
  databases: ["PostgreSQL", "SQLite"],
  workers: [1, 4],
  conversations: [1000, 10_000]
} as const

const fmt = (value: number | undefined, digits = 1): string =>
  value !== undefined && Number.isFinite(value)
    ? value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : "–"

const int = (value: number): string => Math.round(value).toLocaleString("en-US")

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const failed = (cell: Fleet.Cell): ReadonlyArray<string> =>
  Object.entries(cell.checks).flatMap(([name, ok]) => (ok ? [] : [name]))

const find = (cells: ReadonlyArray<Fleet.Cell>, database: string, workers: number, conversations: number) =>
  cells.find((c) => c.database === database && c.workers === workers && c.conversations === conversations)

/** The target: every cell of the matrix ran, with the floor beside it, and its checks held. */
export const target = (result: Fleet.Result): { readonly goal: string; readonly actual: string; readonly met: boolean } => {
  const wanted = matrix.databases.flatMap((d) => matrix.workers.flatMap((w) => matrix.conversations.map((n) => [d, w, n] as const)))
  const present = wanted.filter(([d, w, n]) => find(result.cells, d, w, n) !== undefined)
  const broken = result.cells.filter((c) => failed(c).length > 0)
  const ratios = result.cells.map((c) => c.chatTs.saturation / c.floor.saturation)
  return {
    goal: "a fleet measured: {PostgreSQL, SQLite} × {1, 4} workers × {1,000, 10,000} conversations, each beside its floor (no number set)",
    actual: `${present.length} of ${wanted.length} cells ran` +
      (ratios.length === 0 ? "" : `; chat-ts at saturation ${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}× the floor's decisions/s`) +
      (broken.length === 0 ? "; every check held" : `; checks failed in ${broken.length} cell(s): ${broken.map((c) => failed(c).join(", ")).join("; ")}`),
    met: present.length === wanted.length && broken.length === 0
  }
}

const throughputTable = (result: Fleet.Result): string =>
  table(
    [
      "Database", "Workers", "Conversations", "decided", "chat-ts decisions/s", "floor decisions/s", "× floor",
      "chat-ts worker CPU µs/decision", "floor worker CPU µs/decision", "chat-ts's own µs/decision", "chat-ts DB CPU µs/decision", "floor DB CPU µs/decision",
      "generator CPU µs/decision (chat-ts / floor)", "cores busy (chat-ts / floor)"
    ],
    result.cells.map((c) => [
      c.database,
      String(c.workers),
      int(c.conversations),
      int(c.decided),
      int(c.chatTs.saturation),
      int(c.floor.saturation),
      fmt(c.chatTs.saturation / c.floor.saturation, 2),
      int(c.chatTs.workerCpuUsPerDecision),
      int(c.floor.workerCpuUsPerDecision),
      int(c.chatTs.workerCpuUsPerDecision - c.floor.workerCpuUsPerDecision),
      c.chatTs.databaseCpuUsPerDecision === undefined ? "(in the workers)" : int(c.chatTs.databaseCpuUsPerDecision),
      c.floor.databaseCpuUsPerDecision === undefined ? "(in the workers)" : int(c.floor.databaseCpuUsPerDecision),
      `${int(c.chatTs.generatorCpuUsPerDecision)} / ${int(c.floor.generatorCpuUsPerDecision)}`,
      `${fmt(c.chatTs.coresBusy, 2)} / ${fmt(c.floor.coresBusy, 2)}`
    ])
  )

const latencyTable = (result: Fleet.Result): string =>
  table(
    ["Database", "Workers", "Conversations", "rate (decisions/s)", "× chat-ts saturation", "chat-ts p50 ms", "chat-ts p99 ms", "floor p50 ms", "floor p99 ms", "chat-ts closed-loop p50 / p99 ms"],
    result.cells.flatMap((c) =>
      c.chatTs.open.map((o, i) => {
        const f = c.floor.open[i]
        return [
          c.database,
          String(c.workers),
          int(c.conversations),
          int(o.rate),
          fmt(o.fraction, 2),
          fmt(o.p50Ms, 1),
          fmt(o.p99Ms, 1),
          fmt(f?.p50Ms, 1),
          fmt(f?.p99Ms, 1),
          `${fmt(c.chatTs.saturationLatency.p50Ms, 1)} / ${fmt(c.chatTs.saturationLatency.p99Ms, 1)}`
        ]
      })
    )
  )

const ratio = (a: Fleet.Cell | undefined, b: Fleet.Cell | undefined, f: (c: Fleet.Cell) => number): string =>
  a === undefined || b === undefined ? "–" : `${fmt(f(b) / f(a), 2)}×`

const p99At = (fraction: number) => (c: Fleet.Cell) => c.chatTs.open.find((o) => o.fraction === fraction)?.p99Ms ?? Number.NaN

const scalingTable = (result: Fleet.Result): string => {
  const fraction = result.cells[0]?.chatTs.open[0]?.fraction ?? 0.5
  const dbs = [...new Set(result.cells.map((c) => c.database))]
  const rows: Array<Array<string>> = []
  for (const d of dbs) {
    for (const n of matrix.conversations) {
      rows.push([d, `1 → 4 workers at ${int(n)} conversations`,
        ratio(find(result.cells, d, 1, n), find(result.cells, d, 4, n), (c) => c.chatTs.saturation),
        ratio(find(result.cells, d, 1, n), find(result.cells, d, 4, n), (c) => c.floor.saturation),
        ratio(find(result.cells, d, 1, n), find(result.cells, d, 4, n), p99At(fraction))])
    }
    for (const w of matrix.workers) {
      rows.push([d, `1,000 → 10,000 conversations, ${w} worker${w === 1 ? "" : "s"}`,
        ratio(find(result.cells, d, w, 1000), find(result.cells, d, w, 10_000), (c) => c.chatTs.saturation),
        ratio(find(result.cells, d, w, 1000), find(result.cells, d, w, 10_000), (c) => c.floor.saturation),
        ratio(find(result.cells, d, w, 1000), find(result.cells, d, w, 10_000), p99At(fraction))])
    }
  }
  return table(["Database", "change", "chat-ts decisions/s", "floor decisions/s", `chat-ts p99 at ${fmt(fraction, 2)}× saturation`], rows)
}

const traceTable = (result: Fleet.Result): string =>
  table(
    ["Database", "statements", "transactions", "commits", "round trips", "writes", "lease acquire / renew / release", "loads", "checkpoints (row writes)", "message-row INSERTs", "bytes written"],
    result.traces.map((t) => [
      t.database,
      String(t.statements),
      String(t.transactions),
      t.commits === undefined ? "–" : String(t.commits),
      String(t.roundTrips),
      String(t.writes),
      `${t.leaseAcquire} / ${t.leaseRenew} / ${t.leaseRelease}`,
      String(t.loads),
      String(t.checkpoints),
      String(t.messageWrites),
      int(t.bytesWritten)
    ])
  )

/** The section of RESULTS.md. */
export const section = (result: Fleet.Result): string =>
  [
    `PostgreSQL pool: ${result.pool} connections per worker; closed loop: ${result.window} decisions in flight per worker; ` +
    `${result.cores} cores; load average ${result.loadAverageAtStart} when the scenario started. Each cell decides a sample of its ` +
    "conversations once each (the rest stay paused, checked untouched); the floor gets the same arrival rates as chat-ts." +
    (result.sqliteFsync === undefined ? "" :
      ` One 4 KB append + fsync beside the SQLite file (each SQLite commit waits for one): median ${int(result.sqliteFsync.before.medianUs)} µs, ` +
      `p90 ${int(result.sqliteFsync.before.p90Us)} µs before its cells, ${int(result.sqliteFsync.after.medianUs)} / ${int(result.sqliteFsync.after.p90Us)} µs after.`),
    "",
    "Saturation (closed loop) and CPU per decision:",
    "",
    throughputTable(result),
    "",
    "Latency from a decision's scheduled arrival to the worker's report that its result is saved (open loop, fixed rates):",
    "",
    latencyTable(result),
    "",
    "How saturation and latency change (the second cell over the first):",
    "",
    scalingTable(result),
    "",
    "One decision's statements (traced from chat-ts; the floor replays exactly these). Round trips count each",
    "statement and each transaction's `BEGIN` and `COMMIT`: on PostgreSQL each crosses the socket, on SQLite it is",
    "a call into the library inside the worker; every commit (each transaction, and each write outside one)",
    "takes SQLite's one write lock and waits for its WAL sync. A statement outside a transaction is its own",
    "commit: on PostgreSQL a save is one statement (a compare-and-set `UPDATE` and the changed message rows",
    "in one `WITH`), the lease and the load another, the release folded into the last save.",
    "",
    traceTable(result)
  ].join("\n")
