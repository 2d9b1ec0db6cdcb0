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

export interface FakeOpenAi {
  readonly baseURL: string
  readonly requests: ReadonlyArray<Recorded>
}

const completion = (model: string, text: string) => ({
  id: "chatcmpl-fake",
  object: "chat.completion",
  created: 0,
  model,
  choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: "stop", logprobs: null }],
  usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 }
})

const chunks = (model: string, text: string): string => {
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 0, model }
  const pieces = text.match(/.{1,5}/g) ?? []
  const events = [
    ...pieces.map((piece, i) => ({
      ...base,
      choices: [{ index: 0, delta: i === 0 ? { role: "assistant", content: piece } : { content: piece }, finish_reason: null }]
    })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    { ...base, choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }
  ]
  return events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") + "data: [DONE]\n\n"
}

/** Starts the server for the scope; every chat completion answers `text`. */
export const make = (text: string): Effect.Effect<FakeOpenAi, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ server: http.Server; fake: FakeOpenAi }>((resume) => {
      const requests: Array<Recorded> = []
      const server = http.createServer((req, res) => {
        let raw = ""
        req.on("data", (chunk) => (raw += chunk))
        req.on("end", () => {
          const body = (raw === "" ? {} : JSON.parse(raw)) as { readonly [key: string]: unknown }
          requests.push({ path: req.url ?? "", authorization: req.headers.authorization, body })
          const model = String(body["model"] ?? "unknown")
          if (req.url === "/v1/chat/completions" && body["stream"] === true) {
            res.writeHead(200, { "content-type": "text/event-stream" })
            res.end(chunks(model, text))
          } else if (req.url === "/v1/chat/completions") {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify(completion(model, text)))
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
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map(({ fake }) => fake))
