/**
 * Core's layout is a checked property: `src/` is domain folders in layers (docs/architecture.md
 * draws the map). Read from the import lines of every source file (type-only ones included):
 *
 * - a module imports only from its own folder and from folders of a lower layer;
 * - a folder's `internal/` is imported only from inside that folder (the root `internal/` is the
 *   shared bottom layer: every folder may use it, and it uses nothing above it);
 * - no import cycle;
 * - a flat module the package does not export says `@internal` in its header.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { fileURLToPath } from "node:url"

const src = fileURLToPath(new URL("../src", import.meta.url))

/** The layers, lowest first; folders in one layer may not import each other. */
const layers: ReadonlyArray<ReadonlyArray<string>> = [
  ["internal"],
  ["data"],
  ["turn"],
  ["model"],
  ["tools"],
  ["chat"],
  ["governance", "durable", "provider"],
  ["testing"],
  [""]
]
const layerOf = (folder: string): number => layers.findIndex((names) => names.includes(folder))

/**
 * Imports that break a rule today, written `from -> to`. It may only shrink: an entry that no
 * longer occurs fails the test until it is removed.
 */
const allowed: ReadonlyArray<string> = []

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

const files = sources(src).map((file) => relative(src, file))

/** The core files a file imports (relative specifiers, `.js` written for `.ts`). */
const importsOf = (file: string): ReadonlyArray<string> =>
  [...readFileSync(join(src, file), "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((match) =>
    normalize(join(dirname(file), match[1]!)).replace(/\.js$/, ".ts")
  )

const folderOf = (file: string): string => file.includes("/") ? file.split("/")[0]! : ""
/** The folder whose `internal/` holds a file (`undefined`: not internal; `"internal"`: the shared root one). */
const internalOwner = (file: string): string | undefined => {
  const parts = file.split("/")
  const at = parts.indexOf("internal")
  return at === -1 || at === parts.length - 1 ? undefined : at === 0 ? "internal" : parts.slice(0, at).join("/")
}

type Graph = ReadonlyMap<string, ReadonlyArray<string>>
const graph: Graph = new Map(files.map((file) => [file, importsOf(file)]))

const violationsOf = (graph: Graph): ReadonlyArray<string> =>
  [...graph].flatMap(([file, targets]) =>
    targets.flatMap((target) => {
      const from = folderOf(file)
      const to = folderOf(target)
      const owner = internalOwner(target)
      if (owner !== undefined && owner !== "internal" && !file.startsWith(`${owner}/`)) {
        return [`${file} -> ${target} (into ${owner}'s internal/)`]
      }
      if (from === to) return []
      if (layerOf(from) === -1 || layerOf(to) === -1) return [`${file} -> ${target} (a folder no layer names)`]
      return layerOf(to) < layerOf(from) ? [] : [`${file} -> ${target} (up from ${from || "src"} to ${to})`]
    })
  )

/** The cycles of the import graph, each as the files round it (Tarjan's strongly connected components). */
const cyclesOf = (edges: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const found: Array<ReadonlyArray<string>> = []
  const visit = (file: string): void => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    for (const next of edges.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (stack.includes(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!))
    }
    if (low.get(file) === index.get(file)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        component.push(member)
      } while (member !== file)
      if (component.length > 1 || (edges.get(file) ?? []).includes(file)) found.push(component.sort())
    }
  }
  for (const file of edges.keys()) if (!index.has(file)) visit(file)
  return found
}

const exported = new Set(
  Object.values((JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    exports: Record<string, string | { readonly import: string }>
  }).exports).flatMap((target) => typeof target === "string" ? [] : [target.import]).map((target) => target.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts"))
)

describe("core's layers", () => {
  it("every source file sits in a folder a layer names", () => {
    expect(files.filter((file) => layerOf(folderOf(file)) === -1)).toEqual([])
    expect(files).toContain("turn/Turn.ts")
  })

  it("no import goes up a layer or into another folder's internal/, beyond the allow-list", () => {
    expect(violationsOf(graph).filter((violation) => !allowed.includes(violation))).toEqual([])
  })

  it("the allow-list holds only imports that still break a rule (it only shrinks)", () => {
    const now = new Set(violationsOf(graph))
    expect(allowed.filter((entry) => !now.has(entry))).toEqual([])
  })

  it("no import cycle, type-only imports included", () => {
    expect(cyclesOf(graph)).toEqual([])
  })

  it("a flat module the package does not export says @internal in its header", () => {
    const flat = files.filter((file) => internalOwner(file) === undefined && !file.startsWith("testing/") && file !== "index.ts")
    const header = (file: string) => /^\/\*\*([\s\S]*?)\*\//.exec(readFileSync(join(src, file), "utf8"))?.[1] ?? ""
    expect(flat.filter((file) => !exported.has(file) && !header(file).includes("@internal"))).toEqual([])
    expect(flat.filter((file) => exported.has(file))).toContain("turn/Messages.ts")
  })

  it("the checks see what they check: made-up upward, internal and cyclic imports are found", () => {
    const made: Graph = new Map([
      ["turn/Turn.ts", ["chat/Chat.ts", "internal/schema.ts"]],
      ["chat/Chat.ts", ["turn/internal/policy.ts", "turn/Turn.ts"]],
      ["durable/Worker.ts", ["provider/ProviderCall.ts"]],
      ["internal/schema.ts", ["data/Usage.ts"]]
    ])
    expect(violationsOf(made)).toEqual([
      "turn/Turn.ts -> chat/Chat.ts (up from turn to chat)",
      "chat/Chat.ts -> turn/internal/policy.ts (into turn's internal/)",
      "durable/Worker.ts -> provider/ProviderCall.ts (up from durable to provider)",
      "internal/schema.ts -> data/Usage.ts (up from internal to data)"
    ])
    expect(cyclesOf(made)).toEqual([["chat/Chat.ts", "turn/Turn.ts"]])
  })
})
