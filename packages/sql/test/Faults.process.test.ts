/**
 * Worker processes resuming approved conversations on a PostgreSQL that, in
 * the middle of the work, is restarted as `pg_ctl restart -m immediate` does
 * (every backend ends at once, every connection cut, crash recovery), or has
 * every worker connection terminated (`pg_terminate_backend`). The soak, its
 * worker processes and its faults are the bench's fault scenario's
 * (`packages/bench/src/faults`, which runs every other fault too). The
 * counts the fleet must keep at 0 through it: double runs, wrong stored
 * results, lost decisions (a conversation that never reaches an end) and
 * unexpected errors (any but a retryable `StoreError`, a busy refusal or a lost race).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Faults from "../../bench/src/faults/faults.js"
import * as Soak from "../../bench/src/faults/soak.js"
import { EmbeddedPostgres } from "../src/testing/index.js"

const config: Soak.Config = { conversations: 24, rate: 24, workers: 3, leaseMillis: 2_000, attemptMillis: 3_000, deadlineMillis: 60_000 }

const faults = Faults.all({ fullMillis: 1_000, lockMillis: 6_000, busyTimeoutMillis: 5_000 }).filter((fault) => fault.id === "pg-restart" || fault.id === "pg-terminate")

describe("worker processes on PostgreSQL restarted or cut off mid-soak", () => {
  it.each(faults.map((fault) => [fault.name, fault] as const))(`%s: no call runs twice, every result is the runner's, every conversation ends`, async (_, fault) => {
    // Commits are durable (synchronous_commit on): a crash of the server loses no answered commit.
    const server = await EmbeddedPostgres.start({ synchronousCommit: true })
    try {
      const counts = await Soak.run(fault, config, server)
      console.log(JSON.stringify(counts))
      expect({ doubleRuns: counts.doubleRuns, wrongResults: counts.wrongResults, lostDecisions: counts.lostDecisions, unexpected: counts.unexpected })
        .toEqual({ doubleRuns: 0, wrongResults: 0, lostDecisions: 0, unexpected: [] })
      // Each conversation's call ran once, or was cut by the fault and failed as interrupted, never run again.
      expect(counts.runs).toBeLessThanOrEqual(config.conversations)
      expect(counts.runs).toBeGreaterThanOrEqual(config.conversations - counts.interrupted)
    } finally {
      await server.stop()
    }
  }, 180_000)
})
