/**
 * The property kit on the demo's agent (docs/testing.md, "Check your agent's
 * laws"): the demo keeps every law of the loop over seeded scenarios, and a
 * demo with a hasty strategy is caught, with the report docs/testing.md shows.
 */
// #region imports
import * as Properties from "@chat-ts/core/testing/Properties"
import { describe, expect, it } from "@effect/vitest"
import { demoAgent } from "../src/demo/laws.js"
// #endregion imports
import { readFileSync } from "node:fs"
import { hastyAgent } from "../src/demo/laws.js"

describe("the demo agent's laws", () => {
  // #region check
  it("keeps every law of the loop", () => Properties.checkAll(demoAgent, { numRuns: 60, seed: 35 }), 60_000)
  // #endregion check

  it("a demo whose strategy deletes a single file without asking is caught, as docs/testing.md shows", async () => {
    const result = await Properties.check(hastyAgent, { numRuns: 60, seed: 35 })
    expect(result.failed).toBe(true)
    expect(result.violations.map((violation) => violation.law)).toEqual(["approvedBeforeRun"])
    // The report in the docs is this one, word for word (a change of the arbitraries changes it: paste the new one).
    const page = readFileSync(new URL("../../../docs/testing.md", import.meta.url), "utf8")
    const shown = /<!-- report: hastyAgent -->\n```text\n([\s\S]*?)\n```/.exec(page)?.[1]
    expect(shown).toBe(result.report.split("\n\nThe scenario (")[0])
  }, 60_000)
})
