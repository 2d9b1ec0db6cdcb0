import { defineProject } from "vitest/config"
import { sourceAliases } from "../../vitest.shared.js"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "sql",
    include: ["test/**/*.test.ts"],
    // A real PostgreSQL for every test file, started once and stopped after the run.
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
