/**
 * A loopback HTTP server for testing providers with their real SDKs: it
 * listens on 127.0.0.1 (port 0), replays queued replies (recorded API bodies)
 * and records every request it receives, so a test checks both what the
 * provider made of an answer and what it sent on the wire.
 *
 * Replies are served in order, one per request. A reply is a whole body (any
 * status and headers; JSON or SSE), an SSE body cut mid-way (part of it is
 * written, then the socket is destroyed) or a hanging reply (headers and maybe
 * part of a body, then nothing) used to watch the client give up. A request
 * with no reply queued gets a 599. Every wait on the server is bounded in real
 * time, so a test that expected a request that never came fails by itself.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * One queued reply.
 *
 * @category models
 * @since 0.1.0
 */
export type Reply =
  | { readonly _tag: "Body"; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: string }
  | { readonly _tag: "Cut"; readonly body: string; readonly headers: Readonly<Record<string, string>> }
  | { readonly _tag: "Hang"; readonly body: string; readonly headers: Readonly<Record<string, string>> }

/**
 * One request the server received.
 *
 * @category models
 * @since 0.1.0
 */
export interface Recorded {
  readonly method: string
  /** The path and query, as sent (`/v1/chat/completions`). */
  readonly path: string
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The parsed JSON body (the raw text when it is not JSON, `undefined` when there was none). */
  readonly body: unknown
}

const sseHeaders = { "content-type": "text/event-stream" }

/**
 * A JSON reply (status 200 unless told); a string body is sent as is.
 *
 * @category utils
 * @since 0.1.0
 */
export const json = (
  body: string | object,
  options: { readonly status?: number; readonly headers?: Readonly<Record<string, string>> } = {}
): Reply => ({
  _tag: "Body",
  status: options.status ?? 200,
  headers: { "content-type": "application/json", ...options.headers },
  body: typeof body === "string" ? body : JSON.stringify(body)
})

/**
 * An SSE reply (status 200 unless told).
 *
 * @category utils
 * @since 0.1.0
 */
export const sse = (
  body: string,
  options: { readonly status?: number; readonly headers?: Readonly<Record<string, string>> } = {}
): Reply => ({ _tag: "Body", status: options.status ?? 200, headers: { ...sseHeaders, ...options.headers }, body })

/**
 * Any reply: a status, headers and a body sent as is.
 *
 * @category utils
 * @since 0.1.0
 */
export const body = (status: number, headers: Readonly<Record<string, string>>, text: string): Reply => ({
  _tag: "Body",
  status,
  headers,
  body: text
})

/**
 * An SSE reply that breaks off: `body` is written with status 200, then the socket is destroyed.
 *
 * @category utils
 * @since 0.1.0
 */
export const cut = (body: string, options: { readonly headers?: Readonly<Record<string, string>> } = {}): Reply => ({
  _tag: "Cut",
  body,
  headers: { ...sseHeaders, ...options.headers }
})

/**
 * A reply that never ends: status 200 and headers (and `body`, when given) are written, then nothing.
 *
 * @category utils
 * @since 0.1.0
 */
export const hang = (
  options: { readonly sse?: boolean; readonly body?: string; readonly headers?: Readonly<Record<string, string>> } = {}
): Reply => ({
  _tag: "Hang",
  body: options.body ?? "",
  headers: { "content-type": options.sse === true ? "text/event-stream" : "application/json", ...options.headers }
})

/**
 * The first events of an SSE body: everything up to the `count`-th blank-line separator (the whole body if it has fewer).
 *
 * @category utils
 * @since 0.1.0
 */
export const firstEvents = (body: string, count: number): string => {
  const text = body.replace(/\r\n/g, "\n")
  let index = -1
  for (let i = 0; i < count; i++) {
    index = text.indexOf("\n\n", index + 1)
    if (index === -1) return text
  }
  return text.slice(0, index + 2)
}

/**
 * How many events an SSE body holds (blocks separated by blank lines).
 *
 * @category utils
 * @since 0.1.0
 */
export const eventCount = (body: string): number =>
  body.replace(/\r\n/g, "\n").split("\n\n").filter((block) => block.trim() !== "").length

/**
 * The running server.
 *
 * @category models
 * @since 0.1.0
 */
export interface ReplayServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  /** `url` followed by the `basePath` the server was made with (e.g. `/v1`): what an SDK takes as its base URL. */
  readonly baseURL: string
  /** Queues replies, served in order. */
  readonly enqueue: (...replies: ReadonlyArray<Reply>) => void
  /** Every request received so far. */
  readonly requests: ReadonlyArray<Recorded>
  /** How many queued replies were not served yet. */
  readonly pending: () => number
  /** How many connections the client closed before their response ended. */
  readonly clientCloses: () => number
  /** Resolves once `count` requests arrived (dies after `timeoutMillis` of real time, default 10 seconds). */
  readonly waitForRequests: (count: number, timeoutMillis?: number) => Effect.Effect<void>
  /** Resolves once the client closed `count` connections before their response ended (same bound). */
  readonly waitForClientCloses: (count: number, timeoutMillis?: number) => Effect.Effect<void>
}

/**
 * Settings of `make`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** Appended to `url` to give `baseURL` (default: none). */
  readonly basePath?: string
}

const flatHeaders = (headers: http.IncomingHttpHeaders): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(headers)) out[name] = Array.isArray(value) ? value.join(", ") : value
  return out
}

const parseBody = (raw: string): unknown => {
  if (raw === "") return undefined
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

/**
 * Starts a server for the scope's lifetime.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: Options = {}): Effect.Effect<ReplayServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ server: http.Server; replay: ReplayServer }>((resume) => {
      const queue: Array<Reply> = []
      const requests: Array<Recorded> = []
      let closes = 0
      const waiters = new Set<() => void>()
      const notify = () => {
        for (const check of [...waiters]) check()
      }
      const waitFor = (what: string, condition: () => boolean, timeoutMillis = 10_000): Effect.Effect<void> =>
        Effect.callback<void>((done) => {
          const timer = setTimeout(() => {
            waiters.delete(check)
            done(Effect.die(new Error(`ReplayServer: waited ${timeoutMillis} ms (real time) for ${what}`)))
          }, timeoutMillis)
          const check = () => {
            if (condition()) {
              clearTimeout(timer)
              waiters.delete(check)
              done(Effect.void)
            }
          }
          waiters.add(check)
          check()
          return Effect.sync(() => {
            clearTimeout(timer)
            waiters.delete(check)
          })
        })

      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          requests.push({
            method: req.method ?? "",
            path: req.url ?? "",
            headers: flatHeaders(req.headers),
            body: parseBody(Buffer.concat(chunks).toString("utf8"))
          })
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
              res.writeHead(200, reply.headers)
              res.write(reply.body, () => {
                setTimeout(() => res.socket?.destroy(), 10)
              })
              return
            case "Hang":
              res.writeHead(200, reply.headers)
              res.flushHeaders()
              if (reply.body !== "") res.write(reply.body)
              return
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        const url = `http://127.0.0.1:${port}`
        resume(Effect.succeed({
          server,
          replay: {
            url,
            baseURL: `${url}${options.basePath ?? ""}`,
            enqueue: (...replies) => {
              queue.push(...replies)
            },
            requests,
            pending: () => queue.length,
            clientCloses: () => closes,
            waitForRequests: (count, timeoutMillis) =>
              waitFor(`${count} request(s), got ${requests.length}`, () => requests.length >= count, timeoutMillis),
            waitForClientCloses: (count, timeoutMillis) =>
              waitFor(`the client to close ${count} connection(s)`, () => closes >= count, timeoutMillis)
          }
        }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ replay }) => replay))
