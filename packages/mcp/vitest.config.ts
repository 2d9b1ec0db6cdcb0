import { defineProject } from "vitest/config"
import { sourceAliases } from "../../vitest.shared.js"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "mcp",
    include: ["test/**/*.test.ts"],
    // Real MCP servers (child processes and a loopback HTTP server): bounded, but not instant on a loaded machine.
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
