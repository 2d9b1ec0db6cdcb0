/**
 * Scenario 8's second table: the import cost of each entry point. Every
 * published package's `.` and subpath exports (as far as its `dist` is built),
 * each imported alone by a fresh `node` process (`cold/import.mjs`): the
 * median wall and CPU time of `await import(...)` over the runs, and, from one
 * more process with a load hook, the modules it loads: how many, how many of
 * them are Effect's, and which Effect modules and Node built-ins it pulls beyond
 * the floor (the Effect modules chat-ts itself uses). Reference rows: the floor,
 * `effect/Schema` alone, and the AI SDK with zod, the fastest peer's imports.
 */
import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export interface Config {
  /** Timed processes per entry point. */
  readonly runs: number
  /** Only these entry points (all when undefined). */
  readonly only?: ReadonlyArray<string>
}

export interface Row {
  /** The import specifier, or a reference row's name. */
  readonly entry: string
  readonly reference: boolean
  readonly runs: number
  /** Medians over the runs, milliseconds. */
  readonly importMs: number
  readonly cpuMs: number
  readonly modules: number
  readonly effectModules: number
  /** Modules of the chat-ts packages (the workspace's own dist files). */
  readonly ownModules: number
  /** Effect modules and Node built-ins loaded that the floor does not load. */
  readonly beyondFloor: ReadonlyArray<string>
}

/** The published packages measured, by folder under packages/. */
export const packageFolders = [
  "core", "providers/openai", "providers/anthropic", "providers/google", "providers/effect-ai",
  "sql", "workflow", "mcp", "inbox", "ui/ag-ui", "ui/ai-sdk"
] as const

/** The Effect modules chat-ts uses (the same as the cold-start floor's imports). */
export const floor = ["effect/Effect", "effect/Schema", "effect/Stream", "effect/Layer", "effect/Queue"] as const

const references: ReadonlyArray<{ readonly entry: string; readonly specifiers: ReadonlyArray<string> }> = [
  { entry: "effect (floor)", specifiers: floor },
  { entry: "effect/Schema", specifiers: ["effect/Schema"] },
  { entry: "ai + zod", specifiers: ["ai", "zod"] }
]

const script = fileURLToPath(new URL("../../cold/import.mjs", import.meta.url))
const packagesDir = fileURLToPath(new URL("../../../", import.meta.url))

interface Manifest {
  readonly name: string
  readonly exports?: Readonly<Record<string, unknown>>
}

/** The import specifiers of the packages whose dist exists: the name plus every subpath export but package.json. */
export const entryPoints = (): Array<string> =>
  packageFolders.flatMap((folder) => {
    const dir = `${packagesDir}${folder}`
    if (!existsSync(`${dir}/dist`)) return []
    const manifest = JSON.parse(readFileSync(`${dir}/package.json`, "utf8")) as Manifest
    return Object.keys(manifest.exports ?? { ".": null })
      .filter((subpath) => subpath !== "./package.json")
      .map((subpath) => subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`)
  })

const node = (args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(process.execPath, [script, ...args], { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`import of ${args.join(" ")} failed: ${error.message}\n${stderr}`))
      else resolve(stdout.trim().split("\n").pop()!)
    })
  })

const timed = async (specifiers: ReadonlyArray<string>): Promise<{ importMs: number; cpuMs: number }> =>
  JSON.parse(await node(specifiers)) as { importMs: number; cpuMs: number }

const loaded = async (specifiers: ReadonlyArray<string>): Promise<ReadonlyArray<string>> =>
  (JSON.parse(await node(["--modules", ...specifiers])) as { modules: ReadonlyArray<string> }).modules

/** `effect/Schema` for an Effect module, `node:crypto` for a built-in; undefined for anything else. */
const shortName = (url: string): string | undefined => {
  if (url.startsWith("node:")) return url
  const match = /\/node_modules\/effect\/dist\/(.+)\.js$/.exec(url)
  return match === null ? undefined : `effect/${match[1]}`
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  const value = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  return Math.round(value * 10) / 10
}

export const run = async (config: Config): Promise<ReadonlyArray<Row>> => {
  const entries = [
    ...references,
    ...entryPoints().filter((entry) => config.only === undefined || config.only.includes(entry)).map((entry) => ({ entry, specifiers: [entry] }))
  ]
  const floorSet = new Set((await loaded(floor)).flatMap((url) => shortName(url) ?? []))
  const samples = new Map(entries.map((e) => [e.entry, [] as Array<{ importMs: number; cpuMs: number }>]))
  // Rounds: every entry point once per round, so that load on the machine spreads over all of them.
  for (let i = 0; i < config.runs; i++) {
    for (const e of entries) samples.get(e.entry)!.push(await timed(e.specifiers))
  }
  const rows: Array<Row> = []
  for (const e of entries) {
    const urls = await loaded(e.specifiers)
    const s = samples.get(e.entry)!
    rows.push({
      entry: e.entry,
      reference: references.includes(e),
      runs: s.length,
      importMs: median(s.map((x) => x.importMs)),
      cpuMs: median(s.map((x) => x.cpuMs)),
      modules: urls.length,
      effectModules: urls.filter((url) => url.includes("/node_modules/effect/")).length,
      ownModules: urls.filter((url) => url.startsWith(`file://${packagesDir}`) && !url.includes("/node_modules/")).length,
      beyondFloor: [...new Set(urls.flatMap((url) => {
        const name = shortName(url)
        return name === undefined || floorSet.has(name) ? [] : [name]
      }))]
    })
  }
  return rows
}
