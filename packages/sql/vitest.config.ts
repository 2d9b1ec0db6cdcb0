import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "sql",
    include: ["test/**/*.test.ts"],
    // A real PostgreSQL for every test file, started once and stopped after the run.
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
