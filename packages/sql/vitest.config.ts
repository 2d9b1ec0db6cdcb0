import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "sql",
    include: ["test/**/*.test.ts"]
  }
})
