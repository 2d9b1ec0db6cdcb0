import { defineProject } from "vitest/config"
import { sourceAliases } from "../../vitest.shared.js"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "inbox",
    include: ["test/**/*.test.ts"],
    // The browser test starts a real Chromium (unpacked on first use).
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
