/**
 * A loopback HTTP server (node:http on 127.0.0.1, port 0) that replays
 * recorded Gemini API responses to the real `@google/genai` SDK and records every
 * request it receives.
 *
 * Replies are queued and served in order, one per request. A reply is a JSON
 * body, an SSE body, an SSE body cut mid-way (part of it is written, then the
 * socket is destroyed) or a hanging reply (headers and maybe part of a body,
 * then nothing) used to watch the client close the connection.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** One queued reply. */
export type Reply =
  | { readonly _tag: "Body"; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: string }
  | { readonly _tag: "Cut"; readonly body: string }
  | { readonly _tag: "Hang"; readonly sse: boolean; readonly body: string }

/** One request the server received. */
export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The parsed JSON body (`undefined` when there was none). */
  readonly body: unknown
}

/** Reads a file of `test/fixtures`. */
export const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")

/** A JSON reply (status 200 unless told). */
export const json = (
  body: string | object,
  options: { readonly status?: number; readonly headers?: Readonly<Record<string, string>> } = {}
): Reply => ({
  _tag: "Body",
  status: options.status ?? 200,
  headers: { "content-type": "application/json", ...options.headers },
  body: typeof body === "string" ? body : JSON.stringify(body)
})

/** An SSE reply (status 200). */
export const sse = (body: string): Reply => ({
  _tag: "Body",
  status: 200,
  headers: { "content-type": "text/event-stream" },
  body
})

/** An SSE reply that breaks off: `body` is written, then the socket is destroyed. */
export const cut = (body: string): Reply => ({ _tag: "Cut", body })

/** A reply that never ends: headers (and `body`, when streaming) are written, then nothing. */
export const hang = (options: { readonly sse?: boolean; readonly body?: string } = {}): Reply => ({
  _tag: "Hang",
  sse: options.sse ?? false,
  body: options.body ?? ""
})

/** The first events of an SSE body: everything before the `count`-th blank-line separator. */
export const firstEvents = (body: string, count: number): string => {
  let index = -1
  for (let i = 0; i < count; i++) {
    index = body.indexOf("\n\n", index + 1)
    if (index === -1) return body
  }
  return body.slice(0, index + 2)
}

/** The running server. */
export interface ReplayServer {
  /** The base URL to give the SDK (`http://127.0.0.1:<port>`; the SDK adds `/v1beta/…`). */
  readonly baseURL: string
  /** Queues replies, served in order. */
  readonly enqueue: (...replies: ReadonlyArray<Reply>) => void
  /** Every request received so far. */
  readonly requests: ReadonlyArray<Recorded>
  /** How many connections the client closed before their response ended. */
  readonly clientCloses: () => number
  /** Resolves once `count` requests arrived. */
  readonly waitForRequests: (count: number) => Effect.Effect<void>
  /** Resolves once the client closed `count` connections before their response ended. */
  readonly waitForClientCloses: (count: number) => Effect.Effect<void>
}

const flatHeaders = (headers: http.IncomingHttpHeaders): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(headers)) out[name] = Array.isArray(value) ? value.join(", ") : value
  return out
}

/** Starts a server for the scope's lifetime. */
export const make: Effect.Effect<ReplayServer, never, Scope.Scope> = Effect.acquireRelease(
  Effect.async<{ server: http.Server; replay: ReplayServer }>((resume) => {
    const queue: Array<Reply> = []
    const requests: Array<Recorded> = []
    let closes = 0
    const waiters = new Set<() => void>()
    const notify = () => {
      for (const check of [...waiters]) check()
    }
    const waitFor = (condition: () => boolean): Effect.Effect<void> =>
      Effect.async<void>((done) => {
        const check = () => {
          if (condition()) {
            waiters.delete(check)
            done(Effect.void)
          }
        }
        waiters.add(check)
        check()
        return Effect.sync(() => waiters.delete(check))
      })

    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        let body: unknown
        try {
          body = raw === "" ? undefined : JSON.parse(raw)
        } catch {
          body = raw
        }
        requests.push({ method: req.method ?? "", path: req.url ?? "", headers: flatHeaders(req.headers), body })
        res.on("close", () => {
          if (!res.writableFinished) {
            closes++
            notify()
          }
        })
        const reply = queue.shift()
        notify()
        if (reply === undefined) {
          res.writeHead(599, { "content-type": "application/json" })
          res.end(JSON.stringify({ error: { message: "The replay server has no reply queued for this request." } }))
          return
        }
        switch (reply._tag) {
          case "Body":
            res.writeHead(reply.status, reply.headers)
            res.end(reply.body)
            return
          case "Cut":
            res.writeHead(200, { "content-type": "text/event-stream" })
            res.write(reply.body, () => {
              setTimeout(() => res.socket?.destroy(), 10)
            })
            return
          case "Hang":
            res.writeHead(200, { "content-type": reply.sse ? "text/event-stream" : "application/json" })
            res.flushHeaders()
            if (reply.body !== "") res.write(reply.body)
            return
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({
        server,
        replay: {
          baseURL: `http://127.0.0.1:${port}`,
          enqueue: (...replies) => {
            queue.push(...replies)
          },
          requests,
          clientCloses: () => closes,
          waitForRequests: (count) => waitFor(() => requests.length >= count),
          waitForClientCloses: (count) => waitFor(() => closes >= count)
        }
      }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ replay }) => replay))
