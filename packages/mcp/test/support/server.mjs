// A small MCP server for the tests, written with the official SDK (low-level `Server`, raw JSON Schemas).
// `node server.mjs` speaks over stdio; `node server.mjs --http` listens on 127.0.0.1 (port 0) for
// Streamable HTTP and prints `listening <port>` on stdout. It counts the calls each tool really ran.
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ErrorCode, isInitializeRequest, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"

// `--hide=a,b` starts with those tools hidden.
const hide = process.argv.find((arg) => arg.startsWith("--hide="))?.slice("--hide=".length).split(",") ?? []
const state = { calls: {}, started: {}, cancelled: 0, hidden: new Set(hide), files: new Map([["notes.txt", "hello"], ["old.log", "x"]]) }

const tools = [
  {
    name: "delete_file",
    description: "Delete a file.",
    inputSchema: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { path: { type: "string", minLength: 1, pattern: "^[a-z0-9_.-]+$" }, force: { type: "boolean" } },
      required: ["path"],
      additionalProperties: false
    },
    annotations: { readOnlyHint: false, destructiveHint: true }
  },
  {
    name: "read_file",
    description: "Read a file.",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    outputSchema: { type: "object", properties: { path: { type: "string" }, length: { type: "number" } }, required: ["path", "length"] },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: "chart",
    description: "Draw a chart (a tiny PNG).",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: "fail",
    description: "Always fails.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: "slow",
    description: "Waits until cancelled, or `ms` milliseconds.",
    inputSchema: { type: "object", properties: { ms: { type: "number" } } },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: "web_search",
    description: "Searches the web (open world, no other hint).",
    inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    annotations: { readOnlyHint: true, openWorldHint: true }
  },
  {
    name: "set_hidden",
    description: "Hides the named tools (and shows the others), then says the tool list changed.",
    inputSchema: { type: "object", properties: { names: { type: "array", items: { type: "string" } } }, required: ["names"] }
  },
  {
    name: "stats",
    description: "How many times each tool ran, how many calls were cancelled, and the server's pid.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, openWorldHint: false }
  }
]

// `--bad-tool`: also a tool no provider takes (its name has a dot); the client leaves it out with a warning.
if (process.argv.includes("--bad-tool")) {
  tools.push({ name: "bad.name", description: "A tool with a name no provider accepts.", inputSchema: { type: "object", properties: {} } })
}

// `--dup-tool`: lists `read_file` a second time; the client keeps the first.
if (process.argv.includes("--dup-tool")) {
  tools.push({ name: "read_file", description: "A second read_file.", inputSchema: { type: "object", properties: {} } })
}

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const count = (table, name) => void (table[name] = (table[name] ?? 0) + 1)

const makeServer = () => {
  const server = new Server({ name: "test-files", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } })
  // `--stall-list`: answers `initialize` but never `tools/list`.
  server.setRequestHandler(ListToolsRequestSchema, async () =>
    process.argv.includes("--stall-list") ? new Promise(() => undefined) : { tools: tools.filter((tool) => !state.hidden.has(tool.name)) })
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params
    const args = request.params.arguments ?? {}
    if (state.hidden.has(name) || !tools.some((tool) => tool.name === name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
    }
    if (name === "stats") {
      return { content: [{ type: "text", text: JSON.stringify({ calls: state.calls, started: state.started, cancelled: state.cancelled, pid: process.pid, authorization: extra.requestInfo?.headers?.authorization ?? null, sessions: openSessions() }) }] }
    }
    count(state.started, name)
    if (name === "slow") {
      const finished = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(true), typeof args.ms === "number" ? args.ms : 60_000)
        extra.signal.addEventListener("abort", () => {
          clearTimeout(timer)
          resolve(false)
        })
      })
      if (!finished) {
        state.cancelled++
        return { content: [{ type: "text", text: "cancelled" }] }
      }
    }
    count(state.calls, name)
    switch (name) {
      case "delete_file": {
        const existed = state.files.delete(args.path)
        return { content: [{ type: "text", text: existed ? `deleted ${args.path}` : `no file ${args.path}` }] }
      }
      case "read_file": {
        const text = state.files.get(args.path) ?? ""
        return { content: [{ type: "text", text }], structuredContent: { path: args.path, length: text.length } }
      }
      case "chart":
        return { content: [{ type: "text", text: "a chart" }, { type: "image", data: png, mimeType: "image/png" }] }
      case "fail":
        // An error result with an image (a screenshot of the failure): it reaches the model as an image too.
        return { content: [{ type: "text", text: "disk on fire" }, { type: "image", data: png, mimeType: "image/png" }], isError: true }
      case "slow":
        return { content: [{ type: "text", text: "done" }] }
      case "web_search":
        return { content: [{ type: "text", text: `results for ${args.q}` }] }
      case "set_hidden":
        state.hidden = new Set(args.names)
        // To the caller on the request's own stream, before the result (so it knows before the call returns);
        // to the other sessions on their standalone streams.
        await extra.sendNotification({ method: "notifications/tools/list_changed" })
        for (const open of servers) if (open !== server) await open.sendToolListChanged()
        return { content: [{ type: "text", text: `hidden: ${args.names.join(", ")}` }] }
    }
  })
  return server
}

const servers = []
/** How many HTTP sessions are open (null over stdio). */
let openSessions = () => null

if (process.argv.includes("--http")) {
  // Loaded only in HTTP mode: the stdio server starts faster without them.
  const { createServer } = await import("node:http")
  const { randomUUID } = await import("node:crypto")
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js")
  const sessions = new Map()
  openSessions = () => sessions.size
  const http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"]
    const known = typeof id === "string" ? sessions.get(id) : undefined
    if (known !== undefined) return known.handleRequest(req, res)
    const chunks = []
    for await (const chunk of req) chunks.push(chunk)
    const body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"))
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      res.writeHead(400).end("no session")
      return
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport)
    })
    transport.onclose = () => void sessions.delete(transport.sessionId)
    const server = makeServer()
    servers.push(server)
    await server.connect(transport)
    await transport.handleRequest(req, res, body)
  })
  http.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening ${http.address().port}\n`)
  })
} else {
  const server = makeServer()
  servers.push(server)
  await server.connect(new StdioServerTransport())
}
