/**
 * The orchestration of `npm run bench`: a job runs in a child process and its
 * result comes back; latest.json and RESULTS.md are written. (The reducer
 * scenario alone, at smoke size, keeps this fast; every scenario's own smoke
 * run is in scenarios.test.ts.)
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { jobEnv, parseArgs, runAll, staleBuilds, write } from "../src/main.js"
import type { Results } from "../src/report.js"

const out = mkdtempSync(path.join(os.tmpdir(), "chat-ts-bench-test-"))
afterAll(() => rmSync(out, { recursive: true, force: true }))

describe("npm run bench", () => {
  it("parses its arguments", () => {
    expect(parseArgs([]).mode).toBe("full")
    const options = parseArgs(["--smoke", "--only=reducer,many", `--out=${out}`])
    expect(options).toMatchObject({ mode: "smoke", only: ["reducer", "many"], out })
    expect(parseArgs(["--render"]).render).toBe(true)
    expect(() => parseArgs(["--only=nope"])).toThrow(/unknown scenario/)
  })

  it("runs its jobs on chat-ts as published, where the workspace maps it to its sources", () => {
    const resolved = (env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", "console.log(import.meta.resolve('@chat-ts/sql'))"], {
        cwd: path.join(import.meta.dirname, ".."),
        env,
        encoding: "utf8",
        timeout: 20_000
      }).stdout.trim()
    expect(resolved(jobEnv())).toMatch(/\/packages\/sql\/dist\/index\.js$/)
    // What tsx would run without it: the TypeScript sources, compiled with esbuild's keepNames.
    const { TSX_TSCONFIG_PATH: _, ...workspace } = process.env
    expect(resolved(workspace)).toMatch(/\/packages\/sql\/src\/index\.ts$/)
  }, 30_000)

  it("refuses to measure a package whose sources are newer than its build", () => {
    const root = path.join(out, "packages")
    const make = (name: string, sourceSeconds: number, builtSeconds: number | undefined) => {
      mkdirSync(path.join(root, name, "src", "deep"), { recursive: true })
      mkdirSync(path.join(root, name, "dist"), { recursive: true })
      const source = path.join(root, name, "src", "deep", "A.ts")
      writeFileSync(source, "export {}")
      utimesSync(source, sourceSeconds, sourceSeconds)
      if (builtSeconds === undefined) return
      const built = path.join(root, name, "dist", ".tsbuildinfo")
      writeFileSync(built, "{}")
      utimesSync(built, builtSeconds, builtSeconds)
    }
    make("fresh", 1_000, 2_000)
    make("edited", 3_000, 2_000)
    make("unbuilt", 1_000, undefined)
    expect(staleBuilds(["fresh", "edited", "unbuilt"], root)).toEqual(["packages/edited", "packages/unbuilt"])
    // What `npm test` measures with: its `tsc -b` has just built every package the jobs import.
    expect(staleBuilds()).toEqual([])
  })

  it("runs a scenario in a child process and writes latest.json and RESULTS.md", async () => {
    const results = await runAll({ mode: "smoke", only: ["reducer"], out, render: false, verbose: false })
    expect(results.scenarios.reducer?.rows).toHaveLength(1)
    expect(results.seconds.reducer).toBeGreaterThanOrEqual(0)
    expect(results.machine.cores).toBeGreaterThan(0)
    expect(results.machine.node).toBe(process.version)
    write(results, out)
    const json = JSON.parse(readFileSync(path.join(out, "results", "latest.json"), "utf8")) as Results
    expect(json.scenarios.reducer?.rows[0]?.events).toBe(results.scenarios.reducer?.rows[0]?.events)
    expect(existsSync(path.join(out, "RESULTS.md"))).toBe(true)
    expect(readFileSync(path.join(out, "RESULTS.md"), "utf8")).toContain("### 4. Reducer throughput")
  }, 30_000)
})
