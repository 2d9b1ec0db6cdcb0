/**
 * A tiny OpenAI-compatible server on 127.0.0.1 for testing the examples'
 * "OpenAI when a key is set" path without a network: it answers
 * POST /v1/chat/completions (JSON or SSE) with a fixed text and
 * POST /v1/embeddings with small vectors, and records every request.
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

/** What the fake answers to one chat completion request. */
export type Reply =
  | { readonly text: string }
  | { readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }> }

export interface FakeOpenAi {
  readonly baseURL: string
  readonly requests: ReadonlyArray<Recorded>
}

const toolCallsOf = (reply: Reply) =>
  "toolCalls" in reply
    ? reply.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }))
    : undefined

const completion = (model: string, reply: Reply) => ({
  id: "chatcmpl-fake",
  object: "chat.completion",
  created: 0,
  model,
  choices: [{
    index: 0,
    message: "text" in reply
      ? { role: "assistant", content: reply.text, refusal: null }
      : { role: "assistant", content: null, refusal: null, tool_calls: toolCallsOf(reply) },
    finish_reason: "text" in reply ? "stop" : "tool_calls",
    logprobs: null
  }],
  usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 }
})

const chunks = (model: string, reply: Reply): string => {
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 0, model }
  const pieces = "text" in reply ? reply.text.match(/.{1,5}/g) ?? [] : []
  const calls = (toolCallsOf(reply) ?? []).map((call, index) => ({
    ...base,
    choices: [{ index: 0, delta: { role: "assistant", tool_calls: [{ index, ...call }] }, finish_reason: null }]
  }))
  const events = [
    ...pieces.map((piece, i) => ({
      ...base,
      choices: [{ index: 0, delta: i === 0 ? { role: "assistant", content: piece } : { content: piece }, finish_reason: null }]
    })),
    ...calls,
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "text" in reply ? "stop" : "tool_calls" }] },
    { ...base, choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }
  ]
  return events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") + "data: [DONE]\n\n"
}

/** Starts the server for the scope; chat completions answer `text`, or what `answer` gives for the request body. */
export const make = (
  answer: string | ((body: { readonly [key: string]: unknown }) => Reply)
): Effect.Effect<FakeOpenAi, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ server: http.Server; fake: FakeOpenAi }>((resume) => {
      const requests: Array<Recorded> = []
      const server = http.createServer((req, res) => {
        let raw = ""
        req.on("data", (chunk) => (raw += chunk))
        req.on("end", () => {
          const body = (raw === "" ? {} : JSON.parse(raw)) as { readonly [key: string]: unknown }
          requests.push({ path: req.url ?? "", authorization: req.headers.authorization, body })
          const model = String(body["model"] ?? "unknown")
          const reply: Reply = typeof answer === "string" ? { text: answer } : answer(body)
          if (req.url === "/v1/chat/completions" && body["stream"] === true) {
            res.writeHead(200, { "content-type": "text/event-stream" })
            res.end(chunks(model, reply))
          } else if (req.url === "/v1/chat/completions") {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify(completion(model, reply)))
          } else if (req.url === "/v1/embeddings") {
            const inputs = body["input"] as ReadonlyArray<string>
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify({
              object: "list",
              model,
              data: inputs.map((input, index) => ({
                object: "embedding",
                index,
                // Texts mentioning refunds point one way, the rest another.
                embedding: /refund/i.test(input) ? [1, 0, 0] : [0, 1, 0]
              })),
              usage: { prompt_tokens: 5, total_tokens: 5 }
            }))
          } else {
            res.writeHead(404, { "content-type": "application/json" })
            res.end(JSON.stringify({ error: { message: `no route ${req.url}` } }))
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, fake: { baseURL: `http://127.0.0.1:${port}/v1`, requests } }))
      })
    }),
    ({ server }) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map(({ fake }) => fake))
