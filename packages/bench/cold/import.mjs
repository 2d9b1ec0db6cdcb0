// Import cost of one entry point in a fresh Node process (scenario 8, the entry-point table).
//   node import.mjs <specifier...>          prints { importMs, cpuMs }: the time of `await import(...)`
//   node import.mjs --modules <specifier...> prints { modules }: every module URL loaded (recorded by a
//                                           synchronous load hook, so this run is not timed)
// Several specifiers are imported together (the floor: Effect's modules chat-ts uses).
import { registerHooks } from "node:module"

const args = process.argv.slice(2)
const listing = args[0] === "--modules"
const specifiers = listing ? args.slice(1) : args
const loaded = []
if (listing) registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) })
const started = performance.now()
const cpu = process.cpuUsage()
await Promise.all(specifiers.map((specifier) => import(specifier)))
const used = process.cpuUsage(cpu)
const importMs = performance.now() - started
console.log(JSON.stringify(listing ? { modules: loaded } : { importMs, cpuMs: (used.user + used.system) / 1000 }))
process.exit(0)
