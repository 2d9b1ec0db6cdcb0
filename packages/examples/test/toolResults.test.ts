/** The docs' snippet of results with a size (docs/tools.md, "Results with a size") runs. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ToolResults from "../src/snippets/tool-results.js"

describe("doc snippets: results with a size", () => {
  it.effect("a 1 MB result reaches the model and the state as its first 20,000 characters and the marker; the store has it all", () =>
    Effect.gen(function*() {
      const { kept, seen, storedChars } = yield* ToolResults.readBigLog
      expect(seen.startsWith("boot ok\n".repeat(2_500))).toBe(true)
      expect(seen).toContain("shown 20,000 of 1,048,576 characters (the limit is 20,000)")
      expect(seen).toContain("kept by the application as \"results/l1.json\"")
      expect(storedChars).toBeLessThan(25_000)
      expect(kept).toBe(true)
    }))
})
