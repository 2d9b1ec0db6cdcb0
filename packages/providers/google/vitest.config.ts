import { defineProject } from "vitest/config"
import { sourceAliases } from "../../../vitest.shared.js"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "google",
    // A bound, not a measure: generous so a busy CI machine does not fail a correct test.
    testTimeout: 30_000,
    include: ["test/**/*.test.ts"],
    // Every schema a test sends is checked against Gemini's v1beta Schema rules.
    setupFiles: ["test/support/specCheck.ts"]
  }
})
