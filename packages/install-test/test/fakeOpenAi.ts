/**
 * A fake OpenAI Chat Completions server on 127.0.0.1 (port 0) for the app:
 * asked without a tool result, it calls `delete_files`; asked with one, it
 * answers with text. JSON or SSE, as the request asks. It records each request.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface FakeOpenAi {
  readonly baseURL: string
  readonly requests: ReadonlyArray<{ readonly path: string; readonly body: Record<string, unknown> }>
  readonly close: () => Promise<void>
}

interface ChatMessage {
  readonly role: string
  readonly content?: unknown
}

const toolCall = {
  id: "call_1",
  type: "function",
  function: { name: "delete_files", arguments: JSON.stringify({ paths: ["a.log", "b.log"] }) }
}
const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }

export const start = (): Promise<FakeOpenAi> =>
  new Promise((resolve) => {
    const requests: Array<{ path: string; body: Record<string, unknown> }> = []
    const server = http.createServer((req, res) => {
      let raw = ""
      req.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")))
      req.on("end", () => {
        const body = JSON.parse(raw) as Record<string, unknown>
        requests.push({ path: req.url ?? "", body })
        const messages = (body["messages"] ?? []) as ReadonlyArray<ChatMessage>
        const answered = messages.some((message) => message.role === "tool")
        const message = answered
          ? { role: "assistant", content: "Deleted a.log and b.log." }
          : { role: "assistant", content: null, tool_calls: [toolCall] }
        const finish = answered ? "stop" : "tool_calls"
        const base = { id: `chatcmpl-${requests.length}`, created: 0, model: "fake-model" }
        if (body["stream"] === true) {
          const delta = answered
            ? { role: "assistant", content: message.content }
            : { role: "assistant", tool_calls: [{ index: 0, ...toolCall }] }
          const chunks = [
            { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] },
            { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: finish }] },
            { ...base, object: "chat.completion.chunk", choices: [], usage }
          ]
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.end(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n")
        } else {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({
            ...base,
            object: "chat.completion",
            choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
            usage
          }))
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        baseURL: `http://127.0.0.1:${port}/v1`,
        requests,
        close: () => new Promise((done) => server.close(() => done()))
      })
    })
  })
