/**
 * The README shows the example's code word for word (every TypeScript block
 * is a region of packages/examples/src/effect-ai.ts, type-checked and run
 * there), and the package depends on no `@effect/ai*` package, as it says.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const file = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)), "utf8")

/** The lines of `region` in `text`, dedented, without the markers. */
const region = (text: string, name: string): string => {
  const lines = text.split("\n")
  const start = lines.findIndex((line) => line.trim() === `// #region ${name}`)
  const end = lines.findIndex((line) => line.trim() === `// #endregion ${name}`)
  return lines.slice(start + 1, end).join("\n").trim()
}

describe("README", () => {
  it("every TypeScript block is a region of the example, word for word", () => {
    const readme = file("../README.md")
    const example = file("../../../examples/src/effect-ai.ts")
    const blocks = [...readme.matchAll(/<!-- snippet: packages\/examples\/src\/effect-ai\.ts#(\w+) -->\n```ts\n([\s\S]*?)\n```/g)]
    expect(blocks.map((block) => block[1])).toEqual(["layer", "toolkit"])
    for (const [, name, code] of blocks) expect(code).toBe(region(example, name!))
    expect(readme.match(/```ts\n/g)).toHaveLength(blocks.length)
  })

  it("no @effect/ai package is a dependency (none loads on Effect 4.1)", () => {
    const manifest = JSON.parse(file("../package.json")) as Record<string, Record<string, string> | undefined>
    const all = ["dependencies", "peerDependencies", "devDependencies", "optionalDependencies"].flatMap((key) => Object.keys(manifest[key] ?? {}))
    expect(all.filter((name) => name.startsWith("@effect/ai"))).toEqual([])
  })
})
