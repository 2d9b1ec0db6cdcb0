/**
 * Bytes allocated per step of the loop turn (scenario 7's: a no-op tool N times, then an answer),
 * by the function that allocated them: V8's sampling heap profiler, counting the objects the
 * collector has already freed too (`includeObjectsCollectedByMinorGC` / `…MajorGC`), so the
 * figure is the garbage a step makes, not what it keeps. Sampled, so it moves by a few percent
 * from run to run, but not with the machine's load (CPU time does).
 *
 *   npx tsx packages/bench/src/allocation-profile.ts [steps=100] [top=30]
 *
 * Run from the repository's root it loads core's build (`npx tsc -b` first); from
 * `packages/bench`, as the scenarios do, core's sources.
 *
 * Inlined functions are counted in the function they were inlined into; add
 * `--no-turbo-inlining --no-maglev-inlining` (node options) to see each on its own (that changes
 * what V8 can avoid allocating, so the total moves).
 */
import { Session } from "node:inspector/promises"
import * as Effect from "effect/Effect"
import * as chatts from "./peers/chatts.js"

interface Node {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<Node>
}

/** Runs `turn` `runs` times under the sampling heap profiler; bytes per run by function, and in all. */
export const sample = async (turn: Effect.Effect<unknown>, runs: number) => {
  const session = new Session()
  session.connect()
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  for (let i = 0; i < runs; i++) await Effect.runPromise(turn)
  const { profile } = await session.post("HeapProfiler.stopSampling")
  session.disconnect()
  const byFunction = new Map<string, number>()
  let total = 0
  const walk = (node: Node) => {
    const frame = node.callFrame
    const key = `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*\/node_modules\//, "")}:${frame.lineNumber + 1}`
    total += node.selfSize
    if (node.selfSize > 0) byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize / runs)
    node.children.forEach(walk)
  }
  walk(profile.head as unknown as Node)
  return { perRun: total / runs, byFunction: [...byFunction].sort((a, b) => b[1] - a[1]) }
}

const main = async () => {
  const steps = Number(process.argv[2] ?? 100)
  const top = Number(process.argv[3] ?? 30)
  const turn = await chatts.loopTurnEffect(steps)
  // Warm: the first runs compile and build what is made lazily.
  for (let i = 0; i < 50; i++) await Effect.runPromise(turn)
  const { byFunction, perRun } = await sample(turn, Math.max(20, Math.floor(20_000 / (steps + 1))))
  const calls = steps + 1
  console.log(`N=${steps}: ${Math.round(perRun / calls)} bytes allocated per model call (sampled)`)
  for (const [key, bytes] of byFunction.slice(0, top)) console.log(`${String(Math.round(bytes / calls)).padStart(7)}  ${key}`)
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) await main()
