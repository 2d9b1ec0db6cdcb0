/**
 * A loopback TCP proxy that can stop forwarding and start again: a network
 * that stalls between a client and its database. While stalled, what arrives
 * from either side is held (nothing is lost, nothing is closed); `resume`
 * delivers it in order and forwards again. Listens on 127.0.0.1 only.
 *
 * @since 0.3.0
 */
import * as net from "node:net"

/**
 * A running proxy to one upstream port.
 *
 * @since 0.3.0
 * @category models
 */
export interface Proxy {
  /** The port clients connect to (127.0.0.1). */
  readonly port: number
  /** Stops forwarding, both ways: bytes that arrive are held. */
  readonly stall: () => void
  /** Delivers what was held, in order, and forwards again. */
  readonly resume: () => void
  /** Whether it holds bytes back now. */
  readonly stalled: () => boolean
  /** Closes every connection and the listener. */
  readonly close: () => Promise<void>
}

/**
 * Starts a proxy to `upstreamPort` on 127.0.0.1.
 *
 * @since 0.3.0
 * @category constructors
 */
export const start = (upstreamPort: number): Promise<Proxy> =>
  new Promise((resolve, reject) => {
    let stalled = false
    const held: Array<() => void> = []
    const sockets = new Set<net.Socket>()
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on("data", (chunk) => (stalled ? held.push(() => to.write(chunk)) : to.write(chunk)))
    const server = net.createServer((client) => {
      const upstream = net.connect(upstreamPort, "127.0.0.1")
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on("error", () => undefined)
        socket.on("close", () => (sockets.delete(socket), client.destroy(), upstream.destroy()))
      }
      forward(client, upstream)
      forward(upstream, client)
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        stall: () => void (stalled = true),
        resume: () => {
          stalled = false
          for (const send of held.splice(0)) send()
        },
        stalled: () => stalled,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      }))
  })

/**
 * `url` (a database URL on 127.0.0.1) with its port replaced by the proxy's.
 *
 * @since 0.3.0
 * @category utils
 */
export const via = (proxy: Proxy, url: string): string => {
  const proxied = new URL(url)
  proxied.port = String(proxy.port)
  return proxied.href
}
