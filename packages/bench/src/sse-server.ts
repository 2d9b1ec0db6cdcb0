/**
 * The stream server of scenario 3 as a process of its own, so its pacing and
 * writes neither count in the consumers' CPU time nor wait on the consumers'
 * event loop. Started with `child_process.fork`. It sends `{ origin }` once
 * listening, `{ pace }` after each paced response, and exits when the parent
 * disconnects.
 */
import { serve } from "./sse.js"

const server = await serve((pace) => process.send?.({ pace }))
process.send?.({ origin: server.origin })
process.on("disconnect", () => {
  void server.close().finally(() => process.exit(0))
})
