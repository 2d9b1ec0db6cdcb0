import { defineProject } from "vitest/config"
import { sourceAliases } from "../../vitest.shared.js"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "effect-ai",
    include: ["test/**/*.test.ts"]
  }
})
