/** Starts and stops a server, sets `process.exitCode` to argv[2], and lets the process end by itself. */
import { EmbeddedPostgres } from "../../src/testing/index.js"

const server = await EmbeddedPostgres.start()
await server.stop()
process.exitCode = Number(process.argv[2])
