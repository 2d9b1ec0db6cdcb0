/**
 * A small filesystem-like MCP server, written with the official SDK, for the
 * MCP example: it lists, reads, writes and deletes the files of ONE folder
 * (given as its first argument) and nothing else. File names are plain names
 * (no `/`, no `..`), checked by the JSON Schema the client enforces and again
 * here. Its tools carry MCP annotations, which the client's default strategy
 * reads: the reads run, the writes and deletes wait for a person.
 *
 *   npx tsx src/mcp/files-server.ts /tmp/some-folder     # speaks MCP on stdio
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { join, resolve, sep } from "node:path"

const root = resolve(process.argv[2] ?? process.cwd())

const fileName = { type: "string", pattern: "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$", description: "A file name, e.g. notes.txt" }

const tools = [
  {
    name: "list_files",
    description: "List the files of the folder with their size in bytes and their age in days.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: "read_file",
    description: "Read a text file of the folder.",
    inputSchema: { type: "object", properties: { name: fileName }, required: ["name"], additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  {
    name: "write_file",
    description: "Write a text file of the folder (replacing it if it exists).",
    inputSchema: {
      type: "object",
      properties: { name: fileName, text: { type: "string", maxLength: 100_000 } },
      required: ["name", "text"],
      additionalProperties: false
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
  },
  {
    name: "delete_files",
    description: "Delete files of the folder for good.",
    inputSchema: {
      type: "object",
      properties: { names: { type: "array", items: fileName, minItems: 1, maxItems: 100 } },
      required: ["names"],
      additionalProperties: false
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false }
  }
] as const

/** The path of a file of the folder; anything that would leave it is refused. */
const inside = (name: unknown): string => {
  const path = resolve(root, String(name))
  if (typeof name !== "string" || !path.startsWith(root + sep) || name.includes("/") || name.includes("\\")) {
    throw new McpError(ErrorCode.InvalidParams, `not a file of the folder: ${String(name)}`)
  }
  return path
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })
const day = 24 * 60 * 60 * 1000

const server = new Server({ name: "files", version: "1.0.0" }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...tools] }))
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = request.params.arguments ?? {}
  switch (request.params.name) {
    case "list_files": {
      const now = Date.now()
      const files = await Promise.all((await readdir(root)).sort().map(async (name) => {
        const info = await stat(join(root, name))
        return { name, bytes: info.size, ageDays: Math.floor((now - info.mtimeMs) / day) }
      }))
      return { ...text(files.map((f) => `${f.name} (${f.bytes} bytes, ${f.ageDays} days old)`).join("\n")), structuredContent: { files } }
    }
    case "read_file":
      try {
        return text(await readFile(inside(args["name"]), "utf8"))
      } catch (error) {
        if (error instanceof McpError) throw error
        return { ...text(`no file named ${String(args["name"])}`), isError: true }
      }
    case "write_file":
      await writeFile(inside(args["name"]), String(args["text"]))
      return text(`wrote ${String(args["name"])}`)
    case "delete_files": {
      const names = Array.isArray(args["names"]) ? args["names"] : []
      const deleted: Array<string> = []
      const missing: Array<string> = []
      for (const name of names) {
        const path = inside(name)
        try {
          await rm(path)
          deleted.push(String(name))
        } catch {
          missing.push(String(name))
        }
      }
      return { ...text(`deleted: ${deleted.join(", ") || "none"}`), structuredContent: { deleted, missing } }
    }
    default:
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
  }
})

await server.connect(new StdioServerTransport())
