import { defineProject } from "vitest/config"
import { sourceAliases } from "../../../vitest.shared.js"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "ag-ui",
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000
  }
})
