/**
 * Scenario 13's part of RESULTS.md: one row per fault with its counts and
 * its time to recover, and its target, met when every fault ran and every
 * count that must be 0 is 0. Used by `report.ts`.
 */
import type * as Faults from "../scenarios/faults.js"
import type * as Soak from "./soak.js"

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const seconds = (millis: number): string => (millis / 1000).toFixed(1)

/** The counts that must be 0. */
export const zeros = (row: Soak.Counts): number => row.doubleRuns + row.wrongResults + row.lostDecisions + row.unexpectedErrors

const errors = (row: Soak.Counts): string =>
  Object.entries(row.errors).map(([kind, n]) => `${kind} ${n}`).join(", ") || "none"

/** The target: every fault ran and none gave a double run, a wrong result, a lost decision or an unexpected error. */
export const target = (result: Faults.Result): { readonly goal: string; readonly actual: string; readonly met: boolean } => {
  const broken = result.rows.filter((row) => zeros(row) > 0)
  const ran = result.known.filter((id) => result.rows.some((row) => row.fault === id))
  return {
    goal: "under each fault: 0 double runs, 0 wrong stored results, 0 lost decisions, 0 unexpected errors",
    actual: `${ran.length} of ${result.known.length} faults ran` +
      (broken.length === 0 ? "; every count 0" : `; not 0 under ${broken.map((row) => row.fault).join(", ")}`),
    met: ran.length === result.known.length && broken.length === 0
  }
}

/** The table of every fault. */
export const section = (result: Faults.Result): string => {
  const c = result.config
  return [
    `${c.workers} worker processes, ${c.conversations} conversations per fault, each paused on one approval and decided at ` +
    `${c.rate} a second (a conversation's loop hands it to the next worker after ${seconds(c.attemptMillis)} s without an ` +
    `answer; leases of ${seconds(c.leaseMillis)} s). The fault is injected once a quarter of them are decided. ` +
    `Load average when this scenario started: ${result.loadAverageAtStart} (${result.cores} cores).`,
    "",
    table(
      [
        "Database", "Fault", "double runs", "wrong results", "lost decisions", "unexpected errors", "fault lasted s",
        "recovered in s", "bit (writes refused, turns moved)", "interrupted calls", "hand-overs", "errors answered (expected)"
      ],
      result.rows.map((row) => [
        row.database,
        row.name,
        String(row.doubleRuns),
        String(row.wrongResults),
        String(row.lostDecisions),
        String(row.unexpectedErrors),
        seconds(row.faultMillis),
        seconds(row.recoverMillis),
        String(row.bitten),
        String(row.interrupted),
        String(row.handedOver),
        errors(row)
      ])
    ),
    ...result.rows.flatMap((row) => row.unexpected.length === 0 ? [] : ["", `${row.fault}: ${row.unexpected.join("; ")}`]),
    "",
    "**Recovered in** is from the fault's end until every conversation decided by then has ended (nothing pending, the",
    "model's answer stored last). **Bit** counts the writes refused for want of space (the full-disk faults: each shows",
    "the fault reached the store) and, for the workflow runner cut off, the turns it had started (its model called) whose",
    "call then ran on another runner. An **interrupted** call was `Running` in the store when the fault cut its turn: it is",
    "failed as interrupted, never run again. Errors answered are each worker's answers to one resume, all of them",
    "kinds the README's loop skips (a retryable `StoreError`, a lease held by another, a lost race) or, for a full disk,",
    "the typed refusal of the save that did not fit; for the workflow runner cut off, an approval sent again after its",
    "call ran (refused typed) and a start on the cut-off runner refused with a retryable `StoreError` (the engine could",
    "not store it), both followed by the conversation's loop going on through another runner."
  ].join("\n")
}
