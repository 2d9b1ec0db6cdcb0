/**
 * The fleet's load generator: decisions sent to the workers either closed
 * loop (each worker keeps `window` decisions in flight: the most they can
 * do, saturation) or open loop (decision i arrives at start + i / rate,
 * whatever the workers' progress, dealt round-robin). A decision's latency
 * runs from its arrival (open loop: its scheduled time, so the generator's
 * own lateness counts against it) to the worker's report that its result is
 * saved, both on this process's clock.
 */
import type { Handle } from "./workers.js"

/** What a phase measured. */
export interface Phase {
  readonly decisions: number
  /** From the first arrival to the last report. */
  readonly seconds: number
  /** Decisions per second over the phase. */
  readonly throughput: number
  /** Latency of each decision, milliseconds, in order of completion. */
  readonly latenciesMs: ReadonlyArray<number>
}

/** Sends the next decision to `worker`, arrived at `at` (false when none is left). */
type Send = (worker: number, at: number) => boolean

/** How decisions are sent: at the start, and after each report. */
interface Policy {
  readonly start: (send: Send) => void
  readonly afterDone: (worker: number, send: Send) => void
  readonly stop: () => void
}

/** Runs `decisions` (conversation numbers) through the workers; resolves when every one is reported. */
const drive = (handles: ReadonlyArray<Handle>, decisions: ReadonlyArray<number>, deadlineMs: number, policy: Policy): Promise<Phase> =>
  new Promise((resolve, reject) => {
    const pending = new Map<number, { readonly n: number; readonly at: number }>()
    const latencies: Array<number> = []
    let next = 0
    let first = Number.POSITIVE_INFINITY
    let settled = false
    const exits = handles.map((h) => {
      const listener = () => finish(new Error(`fleet: worker ${h.index} exited during a phase`))
      h.process.once("exit", listener)
      return listener
    })
    const finish = (error?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      policy.stop()
      handles.forEach((h, i) => {
        h.onDone = () => undefined
        h.process.off("exit", exits[i]!)
      })
      if (error !== undefined) return reject(error)
      const seconds = (performance.now() - first) / 1000
      resolve({ decisions: latencies.length, seconds, throughput: latencies.length / seconds, latenciesMs: latencies })
    }
    const timer = setTimeout(
      () => finish(new Error(`fleet: ${decisions.length} decisions took longer than ${deadlineMs} ms (${latencies.length} done)`)),
      deadlineMs
    )
    const send: Send = (worker, at) => {
      if (next >= decisions.length || settled) return false
      const seq = next++
      const n = decisions[seq]!
      pending.set(seq, { n, at })
      first = Math.min(first, at)
      try {
        handles[worker]!.send({ type: "decide", seq, n })
      } catch (error) {
        finish(error as Error)
      }
      return true
    }
    for (const h of handles) {
      h.onDone = (seq, error) => {
        const p = pending.get(seq)
        if (p === undefined) return
        pending.delete(seq)
        if (error !== undefined) return finish(new Error(`fleet: conversation ${p.n} failed in worker ${h.index}: ${error}`))
        latencies.push(performance.now() - p.at)
        if (latencies.length === decisions.length) return finish()
        policy.afterDone(h.index, send)
      }
    }
    if (decisions.length === 0) return finish()
    policy.start(send)
  })

/** Closed loop: `window` decisions in flight per worker; each report sends the next to the same worker. */
export const closedLoop = (handles: ReadonlyArray<Handle>, decisions: ReadonlyArray<number>, window: number, deadlineMs: number): Promise<Phase> =>
  drive(handles, decisions, deadlineMs, {
    start: (send) => {
      for (let k = 0; k < window; k++) for (const h of handles) send(h.index, performance.now())
    },
    afterDone: (worker, send) => void send(worker, performance.now()),
    stop: () => undefined
  })

/** Open loop: decision i arrives at start + i / `rate` (per second), dealt round-robin, whatever is still in flight. */
export const openLoop = (handles: ReadonlyArray<Handle>, decisions: ReadonlyArray<number>, rate: number, deadlineMs: number): Promise<Phase> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const gapMs = 1000 / rate
  return drive(handles, decisions, deadlineMs, {
    start: (send) => {
      const start = performance.now() + 1
      let i = 0
      const tick = () => {
        const now = performance.now()
        // Every decision whose time has come, each with its own scheduled time.
        while (start + i * gapMs <= now) {
          if (!send(i % handles.length, start + i * gapMs)) return
          i++
        }
        timer = setTimeout(tick, Math.max(0, start + i * gapMs - performance.now()))
      }
      timer = setTimeout(tick, 1)
    },
    afterDone: () => undefined,
    stop: () => clearTimeout(timer)
  })
}

/** The q-quantile (0..1) of `values`, interpolated. */
export const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const index = (sorted.length - 1) * q
  const lo = Math.floor(index)
  const hi = Math.ceil(index)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (index - lo)
}
