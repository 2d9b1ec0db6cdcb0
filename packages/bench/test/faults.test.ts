/**
 * Scenario 13 at its smoke size, as `npm test` runs it: every fault is
 * injected into a soak of real worker processes on a real PostgreSQL and a
 * SQLite file (the workflow runner's fault into a soak of the workflow
 * engine's runner processes), and every count that must be 0 is 0. The
 * full-disk faults must also be seen refusing writes, and turns of the
 * cut-off runner moving to another (or they tested nothing). No timing is
 * asserted.
 */
import { describe, expect, it } from "vitest"
import * as FaultsReport from "../src/faults/render.js"
import { configs } from "../src/scenarios/index.js"
import * as Faults from "../src/scenarios/faults.js"

describe("13. the fleet under faults (smoke size)", () => {
  it("every fault on its database: no call runs twice, every stored result is its runner's, every decision ends, no unexpected error", async () => {
    const config = configs.smoke.faults
    const result = await Faults.run(config)
    expect(result.rows.map((row) => row.fault)).toEqual(result.known)
    expect(result.known).toEqual([
      "pg-restart", "pg-terminate", "pg-stall", "pg-full", "pg-clock", "wf-runner-cut", "sqlite-locked", "sqlite-full",
      "sqlite-clock"
    ])
    for (const row of result.rows) {
      expect({ fault: row.fault, doubleRuns: row.doubleRuns, wrongResults: row.wrongResults, lostDecisions: row.lostDecisions, unexpected: row.unexpected })
        .toEqual({ fault: row.fault, doubleRuns: 0, wrongResults: 0, lostDecisions: 0, unexpected: [] })
      // Every conversation's call ran at most once; the interrupted ones never ran again.
      expect(row.runs).toBeLessThanOrEqual(config.conversations)
      expect(row.runs).toBeGreaterThanOrEqual(config.conversations - row.interrupted)
    }
    // The full disks refused writes; turns of the cut-off workflow runner moved to another runner and ran there.
    for (const id of ["pg-full", "sqlite-full", "wf-runner-cut"]) expect(result.rows.find((row) => row.fault === id)!.bitten).toBeGreaterThan(0)
    expect(FaultsReport.target(result)).toMatchObject({ met: true })
    expect(FaultsReport.section(result)).toContain("| PostgreSQL | restarted")
  }, 300_000)
})
