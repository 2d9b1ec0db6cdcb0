/**
 * The orchestration of `npm run bench`: a job runs in a child process and its
 * result comes back; latest.json and RESULTS.md are written. (The reducer
 * scenario alone, at smoke size, keeps this fast; every scenario's own smoke
 * run is in scenarios.test.ts.)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { parseArgs, runAll, write } from "../src/main.js"
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
