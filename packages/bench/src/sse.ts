/**
 * A long Chat Completions stream built from the chunk shapes of the recorded
 * fixtures (`/work/shared/fixtures/openai/chat-completions/*.sse`, copied to
 * `fixtures/`): the role chunk, many one-word content deltas, a tool call
 * whose arguments arrive in fragments, the finish chunk and the usage chunk.
 * And a loopback HTTP server that serves it on 127.0.0.1.
 */
import { readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

const fixture = (name: string): ReadonlyArray<Record<string, unknown>> =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, unknown>)

interface Chunk {
  readonly choices: ReadonlyArray<{ readonly delta: Record<string, unknown>; readonly finish_reason: string | null }>
}

/** What a consumer of the stream must end up with. */
export interface Expected {
  readonly text: string
  readonly toolName: string
  readonly toolCallId: string
  readonly arguments: string
}

export interface Body {
  readonly bytes: Buffer
  readonly events: number
  readonly expected: Expected
}

const clone = <A>(value: A): A => JSON.parse(JSON.stringify(value)) as A

/**
 * The stream: `deltas` content chunks (words taken in turn from the recorded
 * text stream), then one tool call with `fragments` argument chunks.
 */
export const buildBody = (deltas: number, fragments = 16): Body => {
  const text = fixture("stream-text.sse")
  const tool = fixture("stream-tool-call.sse")
  const role = clone(text[0]!)
  const contentTemplate = text.find((c) => typeof (c as unknown as Chunk).choices[0]?.delta.content === "string" &&
    (c as unknown as Chunk).choices[0]!.delta.content !== "")!
  const words = text
    .map((c) => (c as unknown as Chunk).choices[0]?.delta.content)
    .filter((w): w is string => typeof w === "string" && w !== "")
  const toolStart = clone(tool[0]!)
  const toolDelta = tool[1]!
  const finish = tool.find((c) => (c as unknown as Chunk).choices[0]?.finish_reason === "tool_calls")!
  const usage = tool[tool.length - 1]!
  const startCall = ((toolStart as unknown as Chunk).choices[0]!.delta.tool_calls as Array<
    { id: string; function: { name: string } }
  >)[0]!
  const args = JSON.stringify({ city: "San Francisco, CA", unit: "celsius", days: 3, include: ["wind", "humidity"] })
  const pieces: Array<string> = []
  const size = Math.ceil(args.length / fragments)
  for (let i = 0; i < args.length; i += size) pieces.push(args.slice(i, i + size))

  const events: Array<string> = [JSON.stringify(role)]
  let full = ""
  const content = clone(contentTemplate) as unknown as { choices: Array<{ delta: { content: string } }> }
  for (let i = 0; i < deltas; i++) {
    const word = words[i % words.length]!
    full += word
    content.choices[0]!.delta.content = word
    events.push(JSON.stringify(content))
  }
  events.push(JSON.stringify(toolStart))
  const delta = clone(toolDelta) as unknown as { choices: Array<{ delta: { tool_calls: Array<{ function: { arguments: string } }> } }> }
  for (const piece of pieces) {
    delta.choices[0]!.delta.tool_calls[0]!.function.arguments = piece
    events.push(JSON.stringify(delta))
  }
  events.push(JSON.stringify(finish), JSON.stringify(usage))
  const body = events.map((e) => `data: ${e}\n\n`).join("") + "data: [DONE]\n\n"
  return {
    bytes: Buffer.from(body, "utf8"),
    events: events.length,
    expected: { text: full, toolName: startCall.function.name, toolCallId: startCall.id, arguments: args }
  }
}

/**
 * A server answering every POST with the stream. With `intervalUs` > 0 it
 * writes one event at a time, one every `intervalUs` microseconds (spinning
 * between writes, so run it in a process of its own): every event then reaches
 * the client in its own read, as with a real model, and a consumer's CPU time
 * is its cost of handling the events. With 0 it writes everything at once.
 */
export const serve = async (
  body: Body,
  intervalUs = 0
): Promise<{ readonly baseURL: string; readonly close: () => Promise<void> }> => {
  const frames = body.bytes.toString("utf8").split(/(?<=\n\n)/)
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      res.socket?.setNoDelay(true)
      if (intervalUs <= 0) {
        res.end(body.bytes)
        return
      }
      const interval = BigInt(Math.round(intervalUs * 1000))
      let due = process.hrtime.bigint()
      for (const frame of frames) {
        while (process.hrtime.bigint() < due) {
          // spin: timers cannot pace writes tens of microseconds apart
        }
        res.write(frame)
        due += interval
      }
      res.end()
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
  }
}
