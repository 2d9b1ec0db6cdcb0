#!/usr/bin/env node
/**
 * Refreshes the screenshots in docs/images: runs the two browser tests (the
 * `useChat` page, packages/ui/ai-sdk/test/Browser.test.ts, and the approvals
 * inbox, packages/inbox/test/Browser.test.ts), which write their screenshots
 * to their package's test-output/ only, then copies the ones the docs show
 * into docs/images. Tests never write outside ignored folders; this script is
 * the one explicit step that changes docs/images.
 *
 *   npm run docs:images
 */
import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** Each browser test, where it writes its screenshots, and the ones docs/*.md show. */
const sources = [
  {
    test: "packages/ui/ai-sdk/test/Browser.test.ts",
    output: "packages/ui/ai-sdk/test-output",
    images: ["ui-usechat-approval.png", "ui-usechat-decided.png", "ui-usechat-reloaded.png", "ui-usechat-steered.png"]
  },
  {
    test: "packages/inbox/test/Browser.test.ts",
    output: "packages/inbox/test-output",
    images: ["inbox-list.png", "inbox-detail.png", "inbox-edit-error.png", "inbox-decided.png", "inbox-policy.png"]
  }
]

const run = spawnSync("npx", ["vitest", "run", ...sources.map((source) => source.test)], { cwd: root, stdio: "inherit" })
if (run.status !== 0) {
  console.error("docs:images: the browser tests failed; docs/images is unchanged")
  process.exit(run.status ?? 1)
}
for (const source of sources) {
  for (const image of source.images) {
    const from = join(root, source.output, image)
    if (!existsSync(from)) {
      console.error(`docs:images: ${source.test} took no ${image}`)
      process.exit(1)
    }
    copyFileSync(from, join(root, "docs", "images", image))
    console.log(`docs/images/${image} <- ${source.output}/${image}`)
  }
}
