import { defineProject } from "vitest/config"
import { sourceAliases } from "../../../vitest.shared.js"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "ai-sdk-provider",
    // A bound, not a measure: generous so a busy CI machine does not fail a correct test.
    testTimeout: 30_000,
    include: ["test/**/*.test.ts"]
  }
})
