/**
 * The stream server of scenario 3 as a process of its own, so its pacing and
 * writes do not count in the consumers' CPU time. Started with
 * `child_process.fork`; argv: deltas, interval in microseconds. It sends
 * `{ baseURL }` once listening and exits when the parent disconnects.
 */
import { buildBody, serve } from "./sse.js"

const [deltas = "10000", interval = "0"] = process.argv.slice(2)
const server = await serve(buildBody(Number(deltas)), Number(interval))
process.send?.({ baseURL: server.baseURL })
process.on("disconnect", () => {
  void server.close().finally(() => process.exit(0))
})
