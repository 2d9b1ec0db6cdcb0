/**
 * The measuring harness shared by every scenario: tinybench for timings
 * (warm-up, a time budget and a minimum number of iterations, every sample
 * kept so medians and p95 are exact), V8's GC profiler for allocated bytes,
 * and a forced GC for retained heap.
 */
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { Bench } from "tinybench"

/** How long and how often to measure one task. */
export interface Budget {
  /** Milliseconds of warm-up (tinybench also runs at least `warmupIterations`). */
  readonly warmupTime: number
  readonly warmupIterations: number
  /** Milliseconds of measuring; tinybench runs at least `iterations` samples. */
  readonly time: number
  readonly iterations: number
}

/**
 * Timing statistics of one task, in microseconds. The main figures are CPU
 * time of this process (user + system, every thread: GC helpers included),
 * which other load on the machine barely disturbs; `wall*` are wall-clock.
 */
export interface Timing {
  readonly samples: number
  readonly medianUs: number
  readonly p95Us: number
  readonly meanUs: number
  readonly minUs: number
  readonly maxUs: number
  /** Relative margin of error of the mean at 95%, in percent. */
  readonly rmePct: number
  readonly wallMedianUs: number
  readonly wallP95Us: number
}

/** A smoke budget: one warm-up and two samples, for tests. */
export const smokeBudget: Budget = { warmupTime: 0, warmupIterations: 1, time: 0, iterations: 2 }

const quantile = (sorted: ReadonlyArray<number>, q: number): number => {
  if (sorted.length === 0) return Number.NaN
  const index = (sorted.length - 1) * q
  const lo = Math.floor(index)
  const hi = Math.ceil(index)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (index - lo)
}

const round = (value: number, digits = 3): number => {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

/** Summarises CPU and wall samples given in milliseconds (tinybench's unit) as microseconds. */
export const summarise = (cpuMs: ReadonlyArray<number>, wallMs: ReadonlyArray<number>, rmePct = Number.NaN): Timing => {
  const sorted = [...cpuMs].sort((a, b) => a - b)
  const wall = [...wallMs].sort((a, b) => a - b)
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)
  return {
    samples: sorted.length,
    medianUs: round(quantile(sorted, 0.5) * 1000),
    p95Us: round(quantile(sorted, 0.95) * 1000),
    meanUs: round(mean * 1000),
    minUs: round((sorted[0] ?? Number.NaN) * 1000),
    maxUs: round((sorted[sorted.length - 1] ?? Number.NaN) * 1000),
    rmePct: round(rmePct, 2),
    wallMedianUs: round(quantile(wall, 0.5) * 1000),
    wallP95Us: round(quantile(wall, 0.95) * 1000)
  }
}

/** CPU time of this process (all threads), in milliseconds. */
export const cpuNow = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** A task to time; `beforeEach` prepares each call and is not timed. */
export interface Task {
  readonly name: string
  readonly fn: () => unknown
  readonly beforeEach?: () => unknown
}

/**
 * Times each task with tinybench on the CPU clock (wall time is recorded
 * alongside), one task after the other in this process. Each task is called
 * once first (its result checked by the task itself); the results are per call.
 * A task with `beforeEach` is measured by iterations only: its untimed
 * preparation may cost far more than the call, and a time budget counted in
 * call time would then take forever.
 */
export const timeTasks = async (tasks: ReadonlyArray<Task>, budget: Budget): Promise<Record<string, Timing>> => {
  const out: Record<string, Timing> = {}
  for (const task of tasks) {
    await task.beforeEach?.()
    const probe = task.fn()
    const isAsync = probe instanceof Promise
    if (isAsync) await probe
    const prepared = task.beforeEach !== undefined
    const bench = new Bench({
      now: cpuNow,
      time: prepared ? 0 : budget.time,
      iterations: budget.iterations,
      warmup: budget.warmupIterations > 0 || budget.warmupTime > 0,
      warmupTime: prepared ? 0 : budget.warmupTime,
      warmupIterations: budget.warmupIterations,
      retainSamples: true,
      throws: true
    })
    const wall: Array<number> = []
    const fn = isAsync
      ? async () => {
        const start = performance.now()
        await task.fn()
        wall.push(performance.now() - start)
      }
      : () => {
        const start = performance.now()
        task.fn()
        wall.push(performance.now() - start)
      }
    const beforeEach = task.beforeEach
    bench.add(task.name, fn, {
      async: isAsync,
      ...(beforeEach === undefined ? {} : {
        beforeEach: async () => {
          await beforeEach()
        }
      })
    })
    await bench.run()
    const result = bench.tasks[0]!.result
    if (result.state !== "completed") throw new Error(`task ${task.name} did not complete: ${result.state}`)
    const samples = result.latency.samples ?? []
    // Warm-up calls come first in the wall samples: keep the measured ones.
    out[task.name] = summarise(samples, wall.slice(-samples.length), result.latency.rme)
  }
  return out
}

/** Times one task. */
export const timeTask = async (task: Task, budget: Budget): Promise<Timing> =>
  (await timeTasks([task], budget))[task.name]!

let gcFn: (() => void) | undefined

/** A full garbage collection (exposes `gc` when node was not started with `--expose-gc`). */
export const gc = (): void => {
  if (gcFn === undefined) {
    const global = globalThis as { gc?: () => void }
    if (typeof global.gc === "function") gcFn = global.gc
    else {
      v8.setFlagsFromString("--expose-gc")
      gcFn = vm.runInNewContext("gc") as () => void
    }
  }
  gcFn()
  gcFn()
}

/** Heap in use after a full collection, in bytes. */
export const retainedHeap = (): number => {
  gc()
  return process.memoryUsage().heapUsed
}

/**
 * Bytes allocated on the V8 heap while running `fn` `runs` times, per run.
 * Allocations are the growth of the used heap plus what every collection in
 * between freed (from V8's GC profiler), so collections do not hide them.
 */
export const allocatedPerRun = async (fn: () => unknown, runs: number): Promise<number> => {
  gc()
  const profiler = new v8.GCProfiler()
  const start = v8.getHeapStatistics().used_heap_size
  profiler.start()
  for (let i = 0; i < runs; i++) await fn()
  const end = v8.getHeapStatistics().used_heap_size
  const stats = profiler.stop()
  let freed = 0
  for (const entry of stats?.statistics ?? []) {
    freed += entry.beforeGC.heapStatistics.usedHeapSize - entry.afterGC.heapStatistics.usedHeapSize
  }
  return Math.round((end - start + freed) / runs)
}

/** A ratio rounded to 3 digits. */
export const ratio = (a: number, b: number): number => round(a / b)
