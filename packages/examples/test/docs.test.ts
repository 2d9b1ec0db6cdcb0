/**
 * The docs cannot drift from the code: every TypeScript block of the README
 * and of the docs pages written here is marked with the file (and region) it
 * is copied from, `<!-- snippet: packages/examples/src/tools.ts#tool -->`, and
 * must equal it. Those files are type-checked with the package and the
 * examples run in the other tests. Relative links must point at files that
 * exist.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

/** The pages this package owns; every TypeScript block in them must be a snippet. */
export const pages = [
  "README.md",
  "docs/getting-started.md",
  "docs/tools.md",
  "docs/tools-with-context.md",
  "docs/human-in-the-loop.md",
  "docs/scheduled-calls.md",
  "docs/streaming.md",
  "docs/structured-output.md",
  "docs/embeddings.md",
  "docs/middleware.md",
  "docs/routing.md",
  "docs/errors-and-retries.md",
  "docs/persistence.md",
  "docs/inbox.md",
  "docs/mcp.md",
  "docs/testing.md",
  "docs/architecture.md",
  "docs/anthropic.md",
  "docs/google.md",
  "packages/providers/google/README.md",
  "docs/scale.md",
  "docs/ui.md",
  "docs/coming-from-ai-sdk.md"
]

/** Pages written with other packages (providers, bench), linked from here. */
const othersPages = ["docs/providers.md", "docs/benchmarks.md"]

interface Block {
  readonly page: string
  readonly line: number
  readonly lang: string
  readonly code: string
  /** The `<!-- snippet: … -->` marker just above the block, if any. */
  readonly snippet: string | undefined
}

/** The fenced code blocks of a markdown text. */
export const blocks = (page: string, text: string): ReadonlyArray<Block> => {
  const lines = text.split("\n")
  const out: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const start = i
    const body: Array<string> = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!)
    let above = start - 1
    while (above >= 0 && lines[above]!.trim() === "") above--
    const marker = above >= 0 ? /^<!--\s*snippet:\s*(\S+)\s*-->$/.exec(lines[above]!.trim()) : null
    out.push({ page, line: start + 1, lang: open[1]!, code: body.join("\n"), snippet: marker?.[1] })
  }
  return out
}

const isRegionMarker = (line: string) => /^\s*\/\/ #(end)?region\b/.test(line)

const dedent = (lines: ReadonlyArray<string>): ReadonlyArray<string> => {
  const indents = lines.filter((line) => line.trim() !== "").map((line) => /^ */.exec(line)![0].length)
  const cut = indents.length === 0 ? 0 : Math.min(...indents)
  return lines.map((line) => line.slice(cut))
}

/** The text of a snippet: a whole file, or the region `name` of it (`path#name`), without region markers. */
export const snippetText = (reference: string): string => {
  const [path, region] = reference.split("#") as [string, string | undefined]
  const file = join(root, path)
  if (!existsSync(file)) throw new Error(`snippet file ${path} does not exist`)
  const lines = readFileSync(file, "utf8").split("\n")
  let selected: ReadonlyArray<string> = lines
  if (region !== undefined) {
    const start = lines.findIndex((line) => line.trim() === `// #region ${region}`)
    const end = lines.findIndex((line) => line.trim() === `// #endregion ${region}`)
    if (start === -1 || end === -1 || end < start) throw new Error(`${path} has no region '${region}'`)
    selected = lines.slice(start + 1, end)
  }
  return dedent(selected.filter((line) => !isRegionMarker(line))).join("\n").trim()
}

const read = (page: string) => readFileSync(join(root, page), "utf8")

describe("docs", () => {
  it("every page exists", () => {
    for (const page of pages) expect(existsSync(join(root, page)), page).toBe(true)
  })

  for (const page of pages) {
    describe(page, () => {
      it("every TypeScript block is a snippet of a type-checked file, and equals it", () => {
        if (!existsSync(join(root, page))) return
        const code = blocks(page, read(page)).filter((block) => block.lang === "ts" || block.lang === "typescript" || block.lang === "tsx")
        for (const block of code) {
          expect(block.snippet, `${page}:${block.line} has no <!-- snippet: … --> marker`).toBeDefined()
          expect(block.code.trim(), `${page}:${block.line} differs from ${block.snippet}`).toBe(snippetText(block.snippet!))
        }
      })

      it("relative links point at files that exist", () => {
        if (!existsSync(join(root, page))) return
        const text = read(page).replace(/```[\s\S]*?```/g, "")
        for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = match[1]!.split("#")[0]!
          if (target === "" || /^[a-z]+:/.test(target)) continue
          const file = resolve(dirname(join(root, page)), target)
          expect(existsSync(file), `${page} links to missing ${target}`).toBe(true)
        }
      })
    })
  }

  it("snippet markers anywhere in docs/ match their files too", () => {
    for (const page of othersPages) {
      for (const block of blocks(page, read(page))) {
        if (block.snippet !== undefined) expect(block.code.trim()).toBe(snippetText(block.snippet))
      }
    }
  })

  it("the README's quick start is exactly the two commands", () => {
    const shell = blocks("README.md", read("README.md")).filter((block) => block.lang === "sh").map((block) => block.code.trim())
    expect(shell.slice(0, 2)).toEqual(["npm ci && npm start", "npm ci && npm test"])
  })

  it("the snippet reader handles regions, nesting and indentation", () => {
    const text = blocks("x.md", "<!-- snippet: a.ts#r -->\n```ts\nconst a = 1\n```\n\n```sh\nls\n```")
    expect(text).toEqual([
      { page: "x.md", line: 2, lang: "ts", code: "const a = 1", snippet: "a.ts#r" },
      { page: "x.md", line: 6, lang: "sh", code: "ls", snippet: undefined }
    ])
    expect(snippetText("packages/examples/src/snippets/hitl-extras.ts#edit")).toBe(
      `Messages.approve(messages, id, { paths: ["app-2025-03.log"] })`
    )
  })
})
