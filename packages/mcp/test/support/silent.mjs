// A "server" that never answers `initialize`: it writes its pid to the file named by its first argument,
// ignores SIGTERM and the end of its stdin, and would run forever unless killed.
import { writeFileSync } from "node:fs"

process.on("SIGTERM", () => undefined)
process.stdin.resume()
process.stdin.on("end", () => undefined)
writeFileSync(process.argv[2], String(process.pid))
setInterval(() => undefined, 1000)
