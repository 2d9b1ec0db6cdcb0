/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): the functions with
 * the most self time, and the most inclusive time, with their source places.
 *
 *   npx tsx packages/bench/src/profile-summary.ts <file.cpuprofile> [top=25] [filter]
 *
 * `filter` keeps only functions whose URL contains it (e.g. `core/src`).
 */
import { readFileSync } from "node:fs"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export const summarise = (profile: Profile, top: number, filter?: string): string => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  const key = (node: Node) => {
    const url = node.callFrame.url.replace(/^file:\/\//, "").replace(/.*node_modules\//, "").replace(/.*packages\//, "")
    return `${node.callFrame.functionName || "(anonymous)"} ${url}:${node.callFrame.lineNumber + 1}`
  }
  const selfByKey = new Map<string, number>()
  const inclusiveByKey = new Map<string, number>()
  for (const [id, time] of self) {
    const node = byId.get(id)!
    selfByKey.set(key(node), (selfByKey.get(key(node)) ?? 0) + time)
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(byId.get(cur)!)
      if (seen.has(k)) continue
      seen.add(k)
      inclusiveByKey.set(k, (inclusiveByKey.get(k) ?? 0) + time)
    }
  }
  const show = (map: Map<string, number>) =>
    [...map.entries()]
      .filter(([k]) => filter === undefined || k.includes(filter))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, t]) => `${((t / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
      .join("\n")
  return `total ${(total / 1000).toFixed(0)} ms\n-- self --\n${show(selfByKey)}\n-- inclusive --\n${show(inclusiveByKey)}`
}

if (process.argv[1]?.endsWith("profile-summary.ts")) {
  const [file, top = "25", filter] = process.argv.slice(2)
  if (file === undefined) {
    console.error("usage: profile-summary <file.cpuprofile> [top] [filter]")
    process.exit(2)
  }
  console.log(summarise(JSON.parse(readFileSync(file, "utf8")) as Profile, Number(top), filter))
}
