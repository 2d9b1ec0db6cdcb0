import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "install",
    include: ["test/**/*.test.ts"],
    // Builds the libraries (a no-op after `tsc -b`) and packs them once for every test file.
    globalSetup: ["test/pack.ts"],
    // npm installs and strict compiles of a whole app: bounded, but minutes on a busy machine.
    testTimeout: 300_000,
    hookTimeout: 300_000
  }
})
