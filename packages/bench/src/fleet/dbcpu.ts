/**
 * The CPU time of a PostgreSQL server (its postmaster and every process it
 * started: the backends serving the pools, the WAL writer…), read from
 * /proc on Linux. The server is found by its port on its command line, so
 * other servers on the machine are not counted. Clock ticks (10 ms) are the
 * resolution: phases of a second or more read it well enough.
 */
import * as fs from "node:fs"

const ticksPerSecond = 100

interface Stat {
  readonly pid: number
  readonly ppid: number
  readonly ticks: number
}

const stat = (pid: string): Stat | undefined => {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command may hold spaces and parentheses: the fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    return { pid: Number(pid), ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) }
  } catch {
    return undefined
  }
}

const postmaster = (port: number): number | undefined => {
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      const p = args.indexOf("-p")
      if (args[0]?.endsWith("postgres") && p >= 0 && args[p + 1] === String(port)) return Number(pid)
    } catch {
      // Gone already.
    }
  }
  return undefined
}

/** A reader of the server's CPU time so far, microseconds; undefined where /proc is not there. */
export const reader = (port: number): (() => number) | undefined => {
  if (!fs.existsSync("/proc/self/stat")) return undefined
  const root = postmaster(port)
  if (root === undefined) return undefined
  return () => {
    let ticks = 0
    for (const pid of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue
      const s = stat(pid)
      if (s !== undefined && (s.pid === root || s.ppid === root)) ticks += s.ticks
    }
    return (ticks / ticksPerSecond) * 1e6
  }
}
