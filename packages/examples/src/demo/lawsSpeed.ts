/**
 * How fast the property kit runs on the demo's agent (docs/benchmarks.md,
 * "13. The property kit"): `Properties.check` of `demoAgent` for 200
 * scenarios, five seeds, after a warm-up; scenarios per second at the median,
 * in CPU time of the process and wall-clock time. Each scenario without a
 * crash runs on three paths (plain, stored, streamed), one with a crash on the
 * stored path and the worker path (`Worker.resume` under leases; the default
 * `worker: "crashes"`), and again with the worker path off (`worker: "never"`).
 *
 *     npx tsx --tsconfig packages/examples/tsconfig.json packages/examples/src/demo/lawsSpeed.ts
 */
import * as Properties from "@chat-ts/core/testing/Properties"
import { demoAgent } from "./laws.js"

const numRuns = 200
const seeds = [1, 2, 3, 4, 5]

const median = (values: ReadonlyArray<number>): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const speed = async (worker: "crashes" | "never") => {
  await Properties.check(demoAgent, { numRuns: 50, seed: 0, worker })
  const cpu: Array<number> = []
  const wall: Array<number> = []
  for (const seed of seeds) {
    const startCpu = process.cpuUsage()
    const startWall = performance.now()
    const result = await Properties.check(demoAgent, { numRuns, seed, worker })
    if (result.failed) throw new Error(result.report)
    const used = process.cpuUsage(startCpu)
    cpu.push(numRuns / ((used.user + used.system) / 1e6))
    wall.push(numRuns / ((performance.now() - startWall) / 1e3))
  }
  console.log(`demo agent, worker path ${worker}, ${numRuns} scenarios x ${seeds.length} seeds: ${median(cpu).toFixed(0)} scenarios/s (CPU), ${median(wall).toFixed(0)} scenarios/s (wall); node ${process.version}`)
}

const main = async () => {
  await speed("crashes")
  await speed("never")
}

void main()
