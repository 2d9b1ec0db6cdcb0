// Preloaded (`node --import`) into a server program we do not own, such as the reference "everything"
// server, whose HTTP mode listens on every interface at `PORT`: each listen on a port is pinned to
// 127.0.0.1, and once listening the process prints `loopback listening <port>` to stderr (with
// `PORT=0` the program's own message would only say "port 0"). Anything else is left as it is.
import net from "node:net"

const listen = net.Server.prototype.listen

net.Server.prototype.listen = function (...args) {
  const first = args[0]
  const port = typeof first === "number" ? first : typeof first === "string" && /^\d+$/.test(first) ? Number(first) : undefined
  if (port === undefined) return listen.apply(this, args)
  const callback = args.find((arg) => typeof arg === "function")
  this.once("listening", () => process.stderr.write(`loopback listening ${this.address().port}\n`))
  return callback === undefined ? listen.call(this, { port, host: "127.0.0.1" }) : listen.call(this, { port, host: "127.0.0.1" }, callback)
}
