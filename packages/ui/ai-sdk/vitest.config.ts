import { defineProject } from "vitest/config"
import { sourceAliases } from "../../../vitest.shared.js"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "ai-sdk-ui",
    include: ["test/**/*.test.ts"],
    // The browser test bundles a React page and starts a real Chromium (unpacked on first use).
    testTimeout: 90_000,
    hookTimeout: 90_000
  }
})
