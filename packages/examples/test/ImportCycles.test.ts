/**
 * No import cycle anywhere in the repository: between the files of every package (relative
 * imports, type-only ones included) and between the packages (`@chat-ts/*` dependencies). Core's
 * own layer order is checked beside its sources (packages/core/test/Layers.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const skipped = new Set(["node_modules", "dist", ".tsbuild", "test-output"])

const walk = (dir: string, keep: (name: string) => boolean): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? skipped.has(entry.name) ? [] : walk(join(dir, entry.name), keep)
      : keep(entry.name) ? [join(dir, entry.name)] : []
  )

type Graph = ReadonlyMap<string, ReadonlyArray<string>>

/** The strongly connected components of more than one node, or with a self-loop (Tarjan). */
const cyclesOf = (edges: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const found: Array<ReadonlyArray<string>> = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) !== index.get(node)) return
    const component: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (edges.get(node) ?? []).includes(node)) found.push(component.sort())
  }
  for (const node of edges.keys()) if (!index.has(node)) visit(node)
  return found
}

const sources = walk(join(root, "packages"), (name) => /\.(ts|tsx|mts)$/.test(name) && !name.endsWith(".d.ts"))
const known = new Set(sources)
/** The file a relative specifier names (`./X.js` is `./X.ts` or `./X.tsx`). */
const resolve = (from: string, specifier: string): string | undefined => {
  const base = normalize(join(dirname(from), specifier))
  return [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), base, `${base}.ts`].find((file) => known.has(file))
}
const fileGraph: Graph = new Map(sources.map((file) => [
  file,
  [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].flatMap((match) => {
    const target = resolve(file, match[1]!)
    return target === undefined ? [] : [target]
  })
]))

const manifests = walk(join(root, "packages"), (name) => name === "package.json")
  .map((file) => JSON.parse(readFileSync(file, "utf8")) as { name?: string; dependencies?: object; peerDependencies?: object })
  .filter((manifest) => manifest.name?.startsWith("@chat-ts/"))
const packageGraph: Graph = new Map(manifests.map((manifest) => [
  manifest.name!,
  Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((name) => name.startsWith("@chat-ts/"))
]))

describe("imports across the repository", () => {
  it("are read: every package's sources and manifests are found", () => {
    expect(existsSync(join(root, "packages/core/src/turn/Turn.ts"))).toBe(true)
    expect(fileGraph.get(join(root, "packages/core/src/turn/Turn.ts"))?.length).toBeGreaterThan(3)
    expect(packageGraph.get("@chat-ts/ag-ui")).toContain("@chat-ts/core")
  })

  it("form no cycle between files, type-only imports included", () => {
    expect(cyclesOf(fileGraph).map((cycle) => cycle.map((file) => relative(root, file)))).toEqual([])
  })

  it("form no cycle between packages", () => {
    expect(cyclesOf(packageGraph)).toEqual([])
  })

  it("the cycle finder finds a made-up cycle and its self-loops", () => {
    const made: Graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["d"]], ["e", ["a"]]])
    expect(cyclesOf(made)).toEqual([["a", "b", "c"], ["d"]])
  })
})
