/**
 * Runs one job (a scenario, or one library of scenario 5) and writes its
 * result as JSON to the given file. Started by `main.ts` in a process of its
 * own: `node --expose-gc --import tsx src/child.ts '<job JSON>' <out file>`.
 */
import { writeFileSync } from "node:fs"
import { type Job, runJob } from "./scenarios/index.js"

const [jobText, out] = process.argv.slice(2)
if (jobText === undefined || out === undefined) {
  console.error("usage: child.ts '<job JSON>' <out file>")
  process.exit(2)
}
const job = JSON.parse(jobText) as Job
const started = performance.now()
const result = await runJob(job)
writeFileSync(out, JSON.stringify({ job, seconds: Math.round((performance.now() - started) / 100) / 10, result }))
// Some peers keep handles open (keep-alive sockets, timers): the result is written, so leave.
process.exit(0)
