/**
 * The server of scenario 12 as a process of its own, so its work does not
 * count in the callers' CPU time: every POST is answered with one whole Chat
 * Completions response (a short text). Started with `child_process.fork`; it
 * sends `{ origin }` once listening and exits when the parent disconnects.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** The answer's text, which every caller must get back. */
export const answer = "The capital of France is Paris."

const body = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1764633600,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: answer, refusal: null }, logprobs: null, finish_reason: "stop" }],
  usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 }
})

if (process.send !== undefined) {
  const server = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      response.end(body)
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, "127.0.0.1", () => {
    process.send?.({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
  })
  process.on("disconnect", () => server.close(() => process.exit(0)))
}
