/**
 * A tiny Anthropic Messages API server on 127.0.0.1 for testing the examples'
 * "Claude when ANTHROPIC_API_KEY is set" path without a network: it answers
 * POST /v1/messages with queued messages (as JSON, or as SSE events when the
 * request streams) and records every request.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Recorded {
  readonly path: string
  readonly authorization: string | undefined
  readonly body: { readonly [key: string]: unknown }
}

/** What the fake answers: text, one tool call, or a 529 "overloaded" error. */
export type Reply =
  | { readonly text: string }
  | { readonly toolUse: { readonly id: string; readonly name: string; readonly input: object } }
  | { readonly overloaded: true }

type Answer = Exclude<Reply, { readonly overloaded: true }>

export interface FakeAnthropic {
  readonly baseURL: string
  readonly requests: ReadonlyArray<Recorded>
}

const message = (model: string, reply: Answer) => ({
  id: "msg_fake",
  type: "message",
  role: "assistant",
  model,
  content: "text" in reply ? [{ type: "text", text: reply.text }] : [{ type: "tool_use", ...reply.toolUse }],
  stop_reason: "text" in reply ? "end_turn" : "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 7, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
})

const events = (model: string, reply: Answer): string => {
  const whole = message(model, reply)
  const block = whole.content[0]!
  const list: Array<object> = [
    { type: "message_start", message: { ...whole, content: [], stop_reason: null, usage: { ...whole.usage, output_tokens: 1 } } },
    "text" in reply
      ? { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }
      : { type: "content_block_start", index: 0, content_block: { ...block, input: {} } },
    "text" in reply
      ? { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: reply.text } }
      : { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.toolUse.input) } },
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: whole.stop_reason, stop_sequence: null }, usage: { output_tokens: 3 } },
    { type: "message_stop" }
  ]
  return list.map((event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`).join("")
}

/** Starts the fake for the scope's lifetime; it answers with `replies` in order, then repeats the last. */
export const make = (...replies: ReadonlyArray<Reply>): Effect.Effect<FakeAnthropic, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ server: http.Server; fake: FakeAnthropic }>((resume) => {
      const requests: Array<Recorded> = []
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { readonly [key: string]: unknown }
          requests.push({ path: req.url ?? "", authorization: req.headers.authorization, body })
          const reply = replies[Math.min(requests.length - 1, replies.length - 1)]!
          const model = String(body["model"])
          if ("overloaded" in reply) {
            res.writeHead(529, { "content-type": "application/json" })
            res.end(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }))
          } else if (body["stream"] === true) {
            res.writeHead(200, { "content-type": "text/event-stream" })
            res.end(events(model, reply))
          } else {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify(message(model, reply)))
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, fake: { baseURL: `http://127.0.0.1:${port}`, requests } }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ fake }) => fake))
