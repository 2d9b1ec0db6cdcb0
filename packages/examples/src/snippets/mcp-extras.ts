// MCP: several servers with local tools, a chat made from one snapshot, an HTTP server with a token.
// #region imports
import { Chat, Tool, Toolkit } from "@chat-ts/core"
import { McpChat, McpToolkit } from "@chat-ts/mcp"
import { Config, Effect, Redacted, Schema } from "effect"
// #endregion imports
import { fileURLToPath } from "node:url"

const serverScript = fileURLToPath(new URL("../mcp/files-server.ts", import.meta.url))
const packageFolder = fileURLToPath(new URL("../..", import.meta.url))

/** The example's files server over stdio, confined to `folder`. */
export const filesServer = (folder: string): McpToolkit.Transport =>
  McpToolkit.stdio(process.execPath, { args: ["--import", "tsx", serverScript, folder], cwd: packageFolder })

// #region several
const Remember = Tool.make("remember", {
  description: "Remember a fact for later.",
  parameters: { fact: Schema.String },
  success: Schema.String
})
export const memory = Toolkit.make(Remember)
export const memoryHandlers = memory.toLayer({ remember: ({ fact }) => Effect.succeed(`remembered: ${fact}`) })

/** Two folders served by the same server program: each server's tools get a prefix, so no name is owned twice. */
export const twoFolders = (work: string, archive: string) =>
  Effect.gen(function*() {
    const workFiles = yield* McpToolkit.make({ transport: filesServer(work), prefix: "work_" })
    const archiveFiles = yield* McpToolkit.make({ transport: filesServer(archive), prefix: "archive_" })
    // Without the prefixes, this fails with DuplicateToolName { name: "list_files" }.
    return yield* McpChat.make({ tools: memory, servers: [workFiles, archiveFiles] })
  })
// #endregion several

// #region snapshot
/** A plain `Chat` over the tools the server has now (no following of later changes). */
export const fixedChat = (folder: string) =>
  Effect.gen(function*() {
    const files = yield* McpToolkit.make({ transport: filesServer(folder) })
    const { toolkit, handlers } = yield* files.current
    return yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(handlers))
  })
// #endregion snapshot

// #region http
/** A server over Streamable HTTP, with a token read from the environment (never logged). */
export const remote = Effect.gen(function*() {
  const token = yield* Config.Redacted("MCP_TOKEN")
  return McpToolkit.layer({
    transport: McpToolkit.http("http://127.0.0.1:3001/mcp", {
      headers: { Authorization: Redacted.make(`Bearer ${Redacted.value(token)}`) }
    }),
    name: "remote",
    timeout: "20 seconds"
  })
})
// #endregion http
