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

/** How one response was actually paced, as the server measured it. */
export interface Pace {
  /** SSE frames written (the final `[DONE]` included). */
  readonly frames: number
  /** Writes made (a late timer writes every event that is due in one write). */
  readonly writes: number
  /** Microseconds from the first write to the last, over the gaps between events. */
  readonly achievedUs: number
}

/** The base URL of a server of `serve` at `origin` for `deltas` text deltas paced every `intervalUs`. */
export const caseURL = (origin: string, deltas: number, intervalUs: number): string =>
  `${origin}/s/${deltas}/${Math.round(intervalUs)}/v1`

/**
 * A server answering every POST under `/s/<deltas>/<intervalUs>/` (see
 * `baseURL` of the result) with the stream of `deltas` text deltas. With
 * `intervalUs` > 0 it paces the events on the clock without ever blocking its
 * event loop, one event per write: a timer for paces of a millisecond and up
 * (Node's timers fire no sooner, often later on a busy machine: the next event
 * is then due a pace after the late one), `setImmediate` turns for finer paces,
 * each turn writing every event that is due by `process.hrtime` (a late turn
 * catches up with several events in one write). Every event then reaches the
 * client on its own, as from a real model, and the client's CPU time is its
 * cost of handling them. (The `setImmediate` turns keep the server's core busy:
 * run it in a process of its own.) With 0 it writes the whole body at once: the
 * burst. `onPaced` gets how each paced response was actually paced.
 */
export const serve = async (
  onPaced: (pace: Pace & { readonly intervalUs: number }) => void = () => {}
): Promise<{
  /** `http://127.0.0.1:<port>`: see `caseURL`. */
  readonly origin: string
  readonly close: () => Promise<void>
}> => {
  const bodies = new Map<number, { readonly bytes: Buffer; readonly frames: ReadonlyArray<string> }>()
  const bodyOf = (deltas: number) => {
    let body = bodies.get(deltas)
    if (body === undefined) {
      const { bytes } = buildBody(deltas)
      body = { bytes, frames: bytes.toString("utf8").split(/(?<=\n\n)/) }
      bodies.set(deltas, body)
    }
    return body
  }
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const match = /^\/s\/(\d+)\/(\d+)\//.exec(req.url ?? "")
      if (match === null) {
        res.writeHead(404).end()
        return
      }
      const { bytes, frames } = bodyOf(Number(match[1]))
      const intervalUs = Number(match[2])
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      res.socket?.setNoDelay(true)
      if (intervalUs <= 0) {
        res.end(bytes)
        return
      }
      const interval = BigInt(intervalUs * 1000)
      const timed = intervalUs >= 1000
      let next = 0
      let writes = 0
      let first = 0n
      let due = process.hrtime.bigint()
      const tick = (): void => {
        if (res.destroyed) return
        const now = process.hrtime.bigint()
        let batch = ""
        while (next < frames.length && due <= now && (!timed || batch === "")) {
          batch += frames[next++]!
          due += interval
        }
        if (batch !== "") {
          if (writes === 0) first = now
          writes++
          res.write(batch)
          if (timed && due <= now) due = now + interval
        }
        if (next === frames.length) {
          res.end()
          const gaps = Math.max(1, frames.length - 1)
          onPaced({ intervalUs, frames: frames.length, writes, achievedUs: Number(now - first) / 1000 / gaps })
          return
        }
        const wait = Number(due - process.hrtime.bigint()) / 1e6
        if (timed) setTimeout(tick, Math.max(1, Math.floor(wait)))
        else setImmediate(tick)
      }
      tick()
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
  }
}
