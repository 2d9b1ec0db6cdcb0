/**
 * MCP: the demo's file agent with its tools served by an MCP server
 * (src/mcp/files-server.ts, started as a child process over stdio and
 * confined to the demo's sandbox folder, a fresh temporary folder). The
 * server's annotations decide: reads run, deletes wait for a person, and an
 * edit that does not match the server's JSON Schema is refused before
 * anything is sent.
 *
 *   npx tsx src/mcp.ts      # asks you on the terminal
 */
// #region imports
import { Action, Messages, PauseReason } from "@chat-ts/core"
import { McpChat, McpStrategy, McpToolkit } from "@chat-ts/mcp"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Effect } from "effect"
// #endregion imports
import * as NodeServices from "@effect/platform-node/NodeServices"
import { fileURLToPath } from "node:url"
import * as Sandbox from "./demo/sandbox.js"
import { AskUser } from "./human-in-the-loop.js"
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

const serverScript = fileURLToPath(new URL("./mcp/files-server.ts", import.meta.url))
const packageFolder = fileURLToPath(new URL("..", import.meta.url))

// #region connect
/** The files server, over stdio, confined to `folder`; closed with the scope. */
export const connect = (folder: string) =>
  McpToolkit.make({
    transport: McpToolkit.stdio(process.execPath, { args: ["--import", "tsx", serverScript, folder], cwd: packageFolder }),
    name: "files",
    // Writing the to-do list needs no approval; everything else as the annotations say.
    strategy: McpStrategy.combine(
      (call) => (call.name === "write_file" && call.params["name"] === "todo.txt" ? Action.Execute() : undefined),
      McpStrategy.annotations
    ),
    timeout: "30 seconds"
  })
// #endregion connect

// #region loop
export const program = Effect.gen(function*() {
  const { root } = yield* Sandbox.Sandbox
  const files = yield* connect(root)
  const chat = yield* McpChat.make({ servers: [files] })
  const askUser = yield* AskUser
  let result = yield* chat.complete(Messages.fromUser("Delete the logs older than 30 days."))
  while (result.outcome._tag === "Paused") {
    let messages = result.messages
    for (const id of PauseReason.approvalIds(result.outcome.reason)) {
      const call = Messages.findTool(messages, id)!
      const answer = yield* askUser(call.name, Messages.parsedArguments(call))
      messages = answer._tag === "Approve"
        ? yield* chat.approve(messages, id, answer.edited)
        : yield* chat.reject(messages, id, answer.reason)
    }
    result = yield* chat.resume(messages)
  }
  yield* Console.log(result.outcome.value)
  return result
}).pipe(Effect.scoped)
// #endregion loop

/** The files `list_files` reported, from its structured content. */
const listed = (call: Messages.ToolCallPart): ReadonlyArray<{ readonly name: string; readonly ageDays: number }> => {
  const status = call.status
  if (status._tag !== "Completed") return []
  const structured = (status.result as { readonly structuredContent?: { readonly files?: ReadonlyArray<never> } }).structuredContent
  return structured?.files ?? []
}

/** The offline model: lists the folder, deletes the logs older than 30 days, then reports. */
export const offline: MockLanguageModel.Script = (request) => {
  const last = request.messages.at(-1)
  if (last === undefined || last.role === "user") return MockLanguageModel.toolCalls([{ name: "list_files" }])
  const call = Messages.toolCallsOf(last)[0]!
  if (call.name === "list_files") {
    const old = listed(call).filter((file) => file.name.endsWith(".log") && file.ageDays > 30).map((file) => file.name)
    return old.length === 0 ? MockLanguageModel.text("No log is older than 30 days.") : MockLanguageModel.toolCalls([
      { name: "delete_files", arguments: { names: old } }
    ])
  }
  const status = call.status
  if (status._tag === "Completed") {
    const { deleted } = (status.result as { readonly structuredContent: { readonly deleted: ReadonlyArray<string> } }).structuredContent
    return MockLanguageModel.text(`Deleted ${deleted.join(" and ")}.`)
  }
  return MockLanguageModel.text(
    status._tag === "Rejected" ? `I left the logs alone${status.reason ? `: ${status.reason}` : "."}` : "The deletion failed."
  )
}

/** Without a terminal, approves every call and says so. */
const approveAll = AskUser.of((name, args) =>
  Effect.as(Console.log(`(no terminal: approving ${name} ${JSON.stringify(args)})`), { _tag: "Approve" } as const)
)

if (isMain(import.meta.url)) {
  runExample((choice) =>
    program.pipe(
      Effect.provideService(AskUser, approveAll),
      Effect.provide(Sandbox.layer(undefined)),
      Effect.provide(Models.languageModel(choice, offline)),
      Effect.provide(NodeServices.layer)
    ), { offlineName: "offline script" })
}
