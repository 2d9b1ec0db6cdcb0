/**
 * How long the disk under SQLite's file takes to make a write durable: 4 KB
 * appended and `fsync`ed, 50 times, in the directory of the database. Every
 * SQLite commit (WAL, `synchronous = FULL`, SQLite's default) waits for one
 * such sync, so this bounds what a single writer can commit per second.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Load from "./load.js"

/** Median and p90 of one append + fsync, microseconds. */
export interface Fsync {
  readonly medianUs: number
  readonly p90Us: number
}

/** Measures `fsync` in `dir` (the file is removed after). */
export const probe = (dir: string, times = 50): Fsync => {
  const file = path.join(dir, "fsync-probe")
  const fd = fs.openSync(file, "w")
  const block = Buffer.alloc(4096, 1)
  const samples: Array<number> = []
  try {
    for (let i = 0; i < times; i++) {
      const start = performance.now()
      fs.writeSync(fd, block)
      fs.fsyncSync(fd)
      samples.push((performance.now() - start) * 1000)
    }
  } finally {
    fs.closeSync(fd)
    fs.rmSync(file, { force: true })
  }
  return { medianUs: Load.quantile(samples, 0.5), p90Us: Load.quantile(samples, 0.9) }
}
