// A stand-in for the reference "everything" server (the real one, from npm, is tested in
// Everything.test.ts), written with the same SDK and the same tool shapes, plus a `stats` tool that
// counts what ran and was cancelled (the real one cannot tell), and short stages: `simulate-research-query` can
// only run as a task (`execution.taskSupport: "required"`) and, when `ambiguous`, asks the person for a
// clarification (elicitation through `tasks/result`, status `input_required`); `trigger-elicitation-request`
// and `trigger-sampling-request` are listed only to a client that declares elicitation / sampling.
// `node everything.mjs` speaks over stdio; `--http` listens on 127.0.0.1 (port 0) for Streamable HTTP
// and prints `listening <port>`. Stages take `stageMs` (default 100 ms) so the tests stay short.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js"
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"

const state = { started: 0, completed: 0, cancelled: 0, elicited: [], flooded: [], sampled: [] }
const makeServer = () => {
const taskStore = new InMemoryTaskStore()
const server = new McpServer(
  { name: "everything-standin", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true }, tasks: { requests: { tools: { call: {} } }, cancel: {}, list: {} } }, taskStore, taskMessageQueue: new InMemoryTaskMessageQueue() }
)

server.registerTool("stats", { description: "What the server counted.", inputSchema: {}, annotations: { readOnlyHint: true, openWorldHint: false } }, async () => ({
  content: [{ type: "text", text: JSON.stringify({ ...state, pid: process.pid }) }]
}))

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const research = async (taskId, args, store, sendRequest) => {
  state.started++
  for (let stage = 0; stage < 4; stage++) {
    const task = await store.getTask(taskId)
    if (task?.status === "cancelled") {
      state.cancelled++
      return
    }
    let clarification
    if (stage === 2 && args.ambiguous) {
      await store.updateTaskStatus(taskId, "input_required", `"${args.topic}" is ambiguous; asking for a clarification`)
      const answer = await sendRequest({
        method: "elicitation/create",
        params: {
          message: `Which "${args.topic}" do you mean?`,
          requestedSchema: {
            type: "object",
            properties: { interpretation: { type: "string", title: "Clarification", enum: ["technical", "historical"] } },
            required: ["interpretation"]
          }
        }
      }, ElicitResultSchema, { relatedTask: { taskId } })
      state.elicited.push(answer)
      clarification = answer.action === "accept" ? answer.content.interpretation : answer.action
      args.topic = `${args.topic} (${clarification})`
      await store.updateTaskStatus(taskId, "working", "continuing")
    }
    await sleep(args.stageMs ?? 100)
  }
  if ((await store.getTask(taskId))?.status === "cancelled") {
    state.cancelled++
    return
  }
  state.completed++
  await store.storeTaskResult(taskId, "completed", { content: [{ type: "text", text: `# Research Report: ${args.topic}` }] })
}

server.experimental.tasks.registerToolTask("simulate-research-query", {
  title: "Simulate Research Query",
  description: "Simulates a deep research operation (a task).",
  inputSchema: { topic: z.string(), ambiguous: z.boolean().optional(), stageMs: z.number().optional() },
  execution: { taskSupport: "required" },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
}, {
  createTask: async (args, extra) => {
    const task = await extra.taskStore.createTask({ ttl: 300_000, pollInterval: 50 })
    research(task.taskId, { ...args }, extra.taskStore, extra.sendRequest).catch((error) =>
      extra.taskStore.updateTaskStatus(task.taskId, "failed", String(error)).catch(() => undefined)
    )
    return { task }
  },
  getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
  getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId)
})

// Like the everything server: tools that need a client capability are registered once it is known.
server.server.oninitialized = () => {
  const capabilities = server.server.getClientCapabilities() ?? {}
  if (capabilities.elicitation !== undefined) {
    server.registerTool("trigger-elicitation-request", {
      description: "Asks the person for their name and age (elicitation).",
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false }
    }, async () => {
      const answer = await server.server.elicitInput({
        message: "Please tell us about you.",
        requestedSchema: {
          type: "object",
          properties: { name: { type: "string", minLength: 1 }, age: { type: "integer", minimum: 0, maximum: 150 } },
          required: ["name"]
        }
      })
      state.elicited.push(answer)
      return { content: [{ type: "text", text: `elicitation: ${JSON.stringify(answer)}` }] }
    })
  }
  if (capabilities.elicitation !== undefined) {
    // Not in the everything server: a hostile server's flood of requests at once (and huge messages).
    server.registerTool("flood-elicitations", {
      description: "Sends many elicitation requests at once.",
      inputSchema: { count: z.number(), messageLength: z.number().optional() },
      annotations: { readOnlyHint: true, openWorldHint: false }
    }, async ({ count, messageLength }) => {
      const answers = await Promise.all(Array.from({ length: count }, (_, i) =>
        server.server.elicitInput({
          message: messageLength === undefined ? `Request ${i}?` : "x".repeat(messageLength),
          requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } }
        }).then((answer) => (state.flooded.push(answer.action), answer))))
      return { content: [{ type: "text", text: JSON.stringify(answers.map((answer) => answer.action)) }] }
    })
  }
  if (capabilities.sampling !== undefined) {
    server.registerTool("trigger-sampling-request", {
      description: "Asks the client's model to answer a prompt (sampling).",
      inputSchema: { prompt: z.string(), maxTokens: z.number().optional() },
      annotations: { readOnlyHint: true, openWorldHint: false }
    }, async ({ prompt, maxTokens }) => {
      const answer = await server.server.createMessage({
        messages: [{ role: "user", content: { type: "text", text: `Resource trigger-sampling-request context: ${prompt}` } }],
        systemPrompt: "You are a helpful test server.",
        maxTokens: maxTokens ?? 100,
        temperature: 0.7
      })
      state.sampled.push(answer)
      return { content: [{ type: "text", text: `LLM sampling result: ${JSON.stringify(answer.content)}` }] }
    })
  }
}

return server
}

if (process.argv.includes("--http")) {
  const { createServer } = await import("node:http")
  const { randomUUID } = await import("node:crypto")
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js")
  const { isInitializeRequest } = await import("@modelcontextprotocol/sdk/types.js")
  const sessions = new Map()
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
    await makeServer().connect(transport)
    await transport.handleRequest(req, res, body)
  })
  http.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${http.address().port}\n`))
} else {
  await makeServer().connect(new StdioServerTransport())
}
