/**
 * Shared by every package's Vitest config: inside the workspace the
 * `@chat-ts/*` packages resolve to their TypeScript sources (the same mapping
 * as `paths` in tsconfig.base.json), so tests never need a build and never run
 * a stale dist/. Published packages resolve through their "exports" to dist/.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const source = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url))

/** core's per-module entry points (`@chat-ts/core/Messages`), read from its exports map: dist/<folder>/X.js is src/<folder>/X.ts. */
const coreModules = Object.entries(
  (JSON.parse(readFileSync(source("core/package.json"), "utf8")) as { exports: Record<string, { import?: string }> }).exports
).flatMap(([subpath, target]) => {
  const file = /^\.\/dist\/(.+)\.js$/.exec(target.import ?? "")?.[1]
  return subpath === "." || subpath === "./testing" || file === undefined
    ? []
    : [{ find: new RegExp(`^@chat-ts/core/${subpath.slice(2)}$`), replacement: source(`core/src/${file}.ts`) }]
})

export const sourceAliases = [
  { find: /^@chat-ts\/core$/, replacement: source("core/src/index.ts") },
  { find: /^@chat-ts\/core\/testing$/, replacement: source("core/src/testing/index.ts") },
  // core's per-module entry points (`@chat-ts/core/Messages`): the same source modules the barrel re-exports
  ...coreModules,
  { find: /^@chat-ts\/openai$/, replacement: source("providers/openai/src/index.ts") },
  { find: /^@chat-ts\/anthropic$/, replacement: source("providers/anthropic/src/index.ts") },
  { find: /^@chat-ts\/google$/, replacement: source("providers/google/src/index.ts") },
  { find: /^@chat-ts\/sql$/, replacement: source("sql/src/index.ts") },
  { find: /^@chat-ts\/sql\/testing$/, replacement: source("sql/src/testing/index.ts") },
  { find: /^@chat-ts\/inbox$/, replacement: source("inbox/src/index.ts") },
  { find: /^@chat-ts\/mcp$/, replacement: source("mcp/src/index.ts") },
  { find: /^@chat-ts\/workflow$/, replacement: source("workflow/src/index.ts") },
  { find: /^@chat-ts\/workflow\/SocketRunner$/, replacement: source("workflow/src/SocketRunner.ts") },
  { find: /^@chat-ts\/effect-ai$/, replacement: source("providers/effect-ai/src/index.ts") },
  { find: /^@chat-ts\/ai-sdk-provider$/, replacement: source("providers/ai-sdk/src/index.ts") },
  { find: /^@chat-ts\/ag-ui$/, replacement: source("ui/ag-ui/src/index.ts") },
  { find: /^@chat-ts\/ai-sdk-ui$/, replacement: source("ui/ai-sdk/src/index.ts") }
]
