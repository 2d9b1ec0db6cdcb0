/**
 * How many scenarios the property kit needs to catch each planted bug of
 * `lawAgents.ts` (docs/benchmarks.md, "13. The property kit"): for seeds 1 to
 * 20, `Properties.check` with up to 300 scenarios; prints how many seeds
 * caught it, the median and largest number of scenarios to the first failure,
 * and the size of the shrunk counterexamples (calls / steps). A script, not a
 * test:
 *
 *     npx tsx --tsconfig packages/core/tsconfig.test.json packages/core/test/support/catchRates.ts [name]
 */
import * as Properties from "../../src/testing/Properties.js"
import * as Agents from "./lawAgents.js"

const bugs = [
  ["a strategy letting refunds up to 500 run", Agents.lenientStrategy],
  ["a middleware retrying a refund", Agents.retryingMiddleware],
  ["a decision path dropping the policy", Agents.policyDroppingDecide],
  ["a store losing its last checkpoint", Agents.forgetfulStore],
  ["an answer handed back undecoded", Agents.undecodedAnswer],
  ["a late approval that runs", Agents.lateApprovalRuns],
  ["a revoke path that records nothing", Agents.revokeIgnored],
  ["a reviewer's ask-a-person taken as advice", Agents.reviewerIgnored],
  ["a store ignoring leases", Agents.leaseIgnoringStore]
] as const

/** Only the bugs whose name contains this (the first argument), when given. */
const only = process.argv[2]

const main = async () => {
  for (const [name, agent] of bugs) {
    if (only !== undefined && !name.includes(only)) continue
    const runs: Array<number> = []
    const sizes = new Set<string>()
    for (let seed = 1; seed <= 20; seed++) {
      const result = await Properties.check(agent, { numRuns: 300, seed })
      runs.push(result.failed ? result.numRuns : Infinity)
      const shrunk = result.counterexample
      if (shrunk !== undefined) sizes.add(`${shrunk.responses.reduce((n, response) => n + response.calls.length, 0)} call(s) / ${shrunk.steps.length} step(s)`)
    }
    const sorted = [...runs].sort((a, b) => a - b)
    console.log(`${name}: caught on ${runs.filter(Number.isFinite).length}/20 seeds; scenarios to catch: median ${sorted[10]}, max ${sorted[19]}; shrunk to ${[...sizes].join(", ")}`)
  }
}

void main()
