/**
 * `npm run bench`: runs every scenario in a child process of its own (scenario
 * 5 once per library), prints the tables, and writes `results/latest.json` and
 * `RESULTS.md`.
 *
 *   tsx src/main.ts [--smoke] [--only=loop,pause,...] [--out=<dir>]
 *   tsx src/main.ts --render [--out=<dir>]
 *
 * `--smoke` runs tiny sizes (what the tests run); `--only` picks scenarios
 * (loop, pause, streaming, reducer, many); `--out` writes the two files under
 * another directory (default: this package). `--render` runs nothing: it
 * writes RESULTS.md again from `results/latest.json` (after editing the notes).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { evaluate, machine, markdown, type Results, type Scenarios, sections, targetsTable, versions } from "./report.js"
import { type Job, jobsFor, type Mode, type ScenarioId, scenarioIds } from "./scenarios/index.js"
import { libraries as manyLibraries } from "./scenarios/many.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
/**
 * The tsconfig a job runs under: chat-ts's packages as published (their "exports": tsc's dist/), not
 * the workspace's source mappings, which tsx would compile with esbuild's keepNames (a call per named
 * closure made, about a third of a loop step). Its processes inherit it. Build first: `npx tsc -b`.
 */
const publishedTsconfig = path.join(packageDir, "tsconfig.published.json")

/** The environment a job runs in: chat-ts as published (see above). */
export const jobEnv = (): NodeJS.ProcessEnv => ({ ...process.env, TSX_TSCONFIG_PATH: publishedTsconfig })

export interface Options {
  readonly mode: Mode
  readonly only: ReadonlyArray<ScenarioId>
  readonly out: string
  /** Only render RESULTS.md from the existing results/latest.json. */
  readonly render: boolean
  /** Print progress and tables. */
  readonly verbose: boolean
}

export const parseArgs = (argv: ReadonlyArray<string>): Options => {
  let mode: Mode = "full"
  let only: ReadonlyArray<ScenarioId> = scenarioIds
  let out = packageDir
  let render = false
  for (const arg of argv) {
    if (arg === "--smoke") mode = "smoke"
    else if (arg === "--render") render = true
    else if (arg.startsWith("--only=")) {
      const ids = arg.slice("--only=".length).split(",").filter((id) => id !== "")
      for (const id of ids) {
        if (!(scenarioIds as ReadonlyArray<string>).includes(id)) throw new Error(`unknown scenario ${id}; known: ${scenarioIds.join(", ")}`)
      }
      only = ids as Array<ScenarioId>
    } else if (arg.startsWith("--out=")) out = path.resolve(arg.slice("--out=".length))
    else throw new Error(`unknown argument ${arg}`)
  }
  return { mode, only, out, render, verbose: true }
}

const jobName = (job: Job): string => (job.scenario === "many" ? `many:${job.library}` : job.scenario)

/** The packages the jobs import, as built: a source file newer than its package's build is a stale measurement. */
export const staleBuilds = (
  packages = ["core", "sql", "workflow", "providers/openai", "providers/ai-sdk"],
  root = path.join(packageDir, "..")
): Array<string> => {
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
      const file = path.join(dir, entry.name)
      return Math.max(latest, entry.isDirectory() ? newest(file) : statSync(file).mtimeMs)
    }, 0)
  return packages.filter((name) => {
    const dir = path.join(root, name)
    const built = path.join(dir, "dist", ".tsbuildinfo")
    try {
      return newest(path.join(dir, "src")) > statSync(built).mtimeMs
    } catch {
      return true
    }
  }).map((name) => `packages/${name}`)
}

/** The running child; `main` ends it with this process, so a stopped run leaves no benchmark behind. */
let running: ChildProcess | undefined

/** Runs one job in a child process and returns its result. */
const runChild = (job: Job, dir: string): Promise<{ seconds: number; result: unknown }> =>
  new Promise((resolve, reject) => {
    const file = path.join(dir, `${jobName(job).replace(/[^a-z0-9]+/gi, "_")}.json`)
    const child = spawn(
      process.execPath,
      ["--expose-gc", "--import", "tsx", fileURLToPath(new URL("./child.ts", import.meta.url)), JSON.stringify(job), file],
      { cwd: packageDir, stdio: ["ignore", "inherit", "inherit"], env: jobEnv() }
    )
    running = child
    child.once("error", reject)
    child.once("exit", (code, signal) => {
      running = undefined
      if (code !== 0) {
        reject(new Error(`job ${jobName(job)} failed (exit ${code ?? signal})`))
        return
      }
      try {
        const parsed = JSON.parse(readFileSync(file, "utf8")) as { seconds: number; result: unknown }
        resolve(parsed)
      } catch (error) {
        reject(error)
      }
    })
  })

/** Runs the jobs one after the other and gathers the results. */
export const runAll = async (options: Options): Promise<Results> => {
  const startMachine = machine()
  const jobs = jobsFor(options.only, options.mode, manyLibraries)
  const dir = mkdtempSync(path.join(os.tmpdir(), "chat-ts-bench-"))
  const seconds: Record<string, number> = {}
  const scenarios: { -readonly [K in keyof Scenarios]: Scenarios[K] } = {}
  try {
    for (const job of jobs) {
      if (options.verbose) console.error(`running ${jobName(job)} (${options.mode})…`)
      const { seconds: took, result } = await runChild(job, dir)
      seconds[jobName(job)] = took
      if (job.scenario === "many") {
        scenarios.many = [...(scenarios.many ?? []), result as NonNullable<Scenarios["many"]>[number]]
      } else {
        ;(scenarios as Record<string, unknown>)[job.scenario] = result
      }
      if (options.verbose) console.error(`  done in ${took} s`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return {
    mode: options.mode,
    date: new Date().toISOString(),
    machine: startMachine,
    versions: versions(),
    seconds,
    scenarios,
    targets: evaluate(scenarios)
  }
}

/** Writes `results/latest.json` and `RESULTS.md` under `out`. */
export const write = (results: Results, out: string): void => {
  mkdirSync(path.join(out, "results"), { recursive: true })
  writeFileSync(path.join(out, "results", "latest.json"), `${JSON.stringify(results, null, 2)}\n`)
  writeFileSync(path.join(out, "RESULTS.md"), markdown(results))
}

const main = async (): Promise<void> => {
  process.once("exit", () => running?.kill())
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      running?.kill()
      process.exit(130)
    })
  }
  const options = parseArgs(process.argv.slice(2))
  if (options.render) {
    const file = path.join(options.out, "results", "latest.json")
    const saved = JSON.parse(readFileSync(file, "utf8")) as Results
    writeFileSync(path.join(options.out, "RESULTS.md"), markdown(saved))
    console.error(`wrote ${path.join(options.out, "RESULTS.md")} from ${file}`)
    return
  }
  const stale = staleBuilds()
  if (stale.length > 0) {
    console.error(`the bench runs chat-ts as built; these sources are newer than their build: ${stale.join(", ")}. Run \`npx tsc -b\` first.`)
    process.exit(2)
  }
  const results = await runAll(options)
  console.log(`\n${sections(results)}\n\n### Targets\n\n${targetsTable(results.targets)}\n`)
  write(results, options.out)
  console.error(`wrote ${path.join(options.out, "results", "latest.json")} and ${path.join(options.out, "RESULTS.md")}`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
