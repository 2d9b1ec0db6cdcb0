/**
 * A webhook receiver for the tests: a real HTTP server on 127.0.0.1 that
 * checks each request with `WebhookNotifier.verify` and deduplicates on the
 * notification id, answering `status()` (200 unless told otherwise).
 */
import { Effect, Redacted } from "effect"
import * as http from "node:http"
import type * as net from "node:net"
import { WebhookNotifier } from "../../src/index.js"

export interface Receiver {
  readonly url: string
  /** Every request, in order: its id header and whether its signature verified. */
  readonly requests: Array<{ readonly id: string | undefined; readonly verified: boolean }>
  /** The notifications accepted, each id once (a redelivery is answered 200 and not added). */
  readonly accepted: Map<string, unknown>
  /** How many verified requests were duplicates of an accepted id. */
  duplicates: number
  status: number
  readonly close: () => Promise<void>
}

export const start = (secret: Redacted.Redacted<string>): Promise<Receiver> =>
  new Promise((resolve) => {
    const receiver: Receiver = {
      url: "",
      requests: [],
      accepted: new Map(),
      duplicates: 0,
      status: 200,
      close: () => new Promise((done) => server.close(() => done()))
    }
    const server = http.createServer((request, response) => {
      let body = ""
      request.setEncoding("utf8")
      request.on("data", (chunk: string) => (body += chunk))
      request.on("end", () => {
        const checked = Effect.runSync(Effect.result(WebhookNotifier.verify(secret, { headers: request.headers, body }, { now: Date.now() })))
        const id = request.headers[WebhookNotifier.headers.id]
        receiver.requests.push({ id: typeof id === "string" ? id : undefined, verified: checked._tag === "Success" })
        if (checked._tag === "Failure") return void response.writeHead(401).end(checked.failure.message)
        if (receiver.status !== 200) return void response.writeHead(receiver.status).end()
        if (receiver.accepted.has(checked.success.id)) receiver.duplicates++
        else receiver.accepted.set(checked.success.id, checked.success)
        response.writeHead(200).end()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      resolve(Object.assign(receiver, { url: `http://127.0.0.1:${port}/hooks/chat-ts` }))
    })
  })

/** Waits (bounded, on real time) until `ready()` holds. */
export const until = async (ready: () => boolean, millis = 30_000, what = "the receiver"): Promise<void> => {
  const end = Date.now() + millis
  while (!ready()) {
    if (Date.now() > end) throw new Error(`${what}: not there within ${millis} ms`)
    await new Promise((done) => setTimeout(done, 20))
  }
}
