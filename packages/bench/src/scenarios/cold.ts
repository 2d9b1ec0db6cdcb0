/**
 * Scenario 8: cold start. Each library in a fresh `node` process (plain
 * JavaScript, published code: chat-ts from `packages/core/dist`), timed from
 * the start of the script: until its modules are imported, until the model
 * receives the first request, and until 100 turns (scenario 1's turn at N=1)
 * are done. What a serverless function pays on its first requests. Processes
 * alternate between libraries, `runs` times; medians are reported. chat-ts runs
 * twice: importing the barrel `@chat-ts/core`, and importing only the modules
 * the program uses through core's per-module entry points. Then the import cost
 * of every entry point of the published packages (`coldImports.ts`). With
 * `bundled`, the same script is also bundled by esbuild (one build, every
 * library in it, split so each loads only its own chunks) and every library
 * runs again from the bundle: what a deployment that bundles its function pays.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Imports from "./coldImports.js"

export interface Config {
  readonly runs: number
  readonly turns: number
  /** The entry-point table: timed processes per entry point, and which entry points (all when undefined). */
  readonly imports: Imports.Config
  /** Also run every library from an esbuild bundle of the same script. */
  readonly bundled: boolean
}

export const libraries = ["chat-ts", "chat-ts (entry points)", "ai", "@openai/agents", "effect/ai", "effect (floor)"] as const

export interface Sample {
  readonly importMs: number
  readonly firstRequestMs: number
  readonly firstTurnMs: number
  readonly first100Ms: number
}

export interface Row {
  readonly library: string
  readonly runs: number
  readonly turns: number
  /** Medians over the runs, milliseconds from the start of the script. */
  readonly importMs: number
  readonly firstRequestMs: number
  readonly firstTurnMs: number
  readonly turnsMs: number
}

export interface Result {
  readonly rows: ReadonlyArray<Row>
  /** The import cost of each entry point (and the reference rows). */
  readonly imports: ReadonlyArray<Imports.Row>
  /** The same libraries run from the esbuild bundle (when `bundled`). */
  readonly bundled?: ReadonlyArray<Row> | undefined
}

const script = fileURLToPath(new URL("../../cold/start.mjs", import.meta.url))
const coreDist = fileURLToPath(new URL("../../../core/dist/index.js", import.meta.url))

const once = (library: string, turns: number, from: string = script): Promise<Sample> =>
  new Promise((resolve, reject) => {
    execFile(process.execPath, [from, library, String(turns)], { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error !== null) {
        reject(new Error(`cold start of ${library} failed: ${error.message}\n${stderr}`))
        return
      }
      try {
        resolve(JSON.parse(stdout.trim().split("\n").pop()!) as Sample)
      } catch (cause) {
        reject(new Error(`cold start of ${library}: no result in ${JSON.stringify(stdout)}`, { cause }))
      }
    })
  })

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  const value = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  return Math.round(value * 10) / 10
}

/** Bundles the cold-start script with esbuild into `dir` (ESM, split per dynamic import) and returns the entry. */
const bundle = async (dir: string): Promise<string> => {
  const esbuild = await import("esbuild")
  await esbuild.build({
    entryPoints: [script],
    bundle: true,
    platform: "node",
    format: "esm",
    splitting: true,
    outdir: dir,
    logLevel: "error",
    // Some peers' CommonJS dependencies call `require`; an ESM bundle has none of its own.
    banner: { js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);" }
  })
  return path.join(dir, "start.js")
}

/** Runs every library `runs` times, alternating, from `from`; medians per library. */
const measure = async (config: Config, from: string): Promise<Array<Row>> => {
  const samples = new Map<string, Array<Sample>>(libraries.map((library) => [library, []]))
  for (let i = 0; i < config.runs; i++) {
    for (const library of libraries) samples.get(library)!.push(await once(library, config.turns, from))
  }
  return libraries.map((library) => {
    const s = samples.get(library)!
    return {
      library,
      runs: s.length,
      turns: config.turns,
      importMs: median(s.map((x) => x.importMs)),
      firstRequestMs: median(s.map((x) => x.firstRequestMs)),
      firstTurnMs: median(s.map((x) => x.firstTurnMs)),
      turnsMs: median(s.map((x) => x.first100Ms))
    }
  })
}

export const run = async (config: Config): Promise<Result> => {
  if (!existsSync(coreDist)) throw new Error(`cold start measures the built package: run \`npx tsc -b\` first (${coreDist} is missing)`)
  const rows = await measure(config, script)
  let bundled: Array<Row> | undefined
  if (config.bundled) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "chat-ts-cold-bundle-"))
    try {
      bundled = await measure(config, await bundle(dir))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const imports = await Imports.run(config.imports)
  return { imports, rows, bundled }
}
