/**
 * The MCP example against its real files server (a child process over stdio,
 * confined to a fresh temporary folder) and its offline scripted model.
 */
import { ChatError, Messages } from "@chat-ts/core"
import { McpToolkit } from "@chat-ts/mcp"
import { MockLanguageModel } from "@chat-ts/core/testing"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Sandbox from "../src/demo/sandbox.js"
import { type Answer, AskUser } from "../src/human-in-the-loop.js"
import * as Mcp from "../src/mcp.js"
import * as McpExtras from "../src/snippets/mcp-extras.js"
import { makeTranscript, outputLayer } from "./support/capture.js"

/** Runs the example with scripted answers; the sandbox folder stays readable until the check ran. */
const run = (answers: ReadonlyArray<Answer>, check: (root: string) => void) =>
  Effect.gen(function*() {
    const transcript = makeTranscript()
    const model = MockLanguageModel.make(Mcp.offline)
    const asked: Array<unknown> = []
    const queue = [...answers]
    const askUser = AskUser.of((_name, args) => Effect.sync(() => (asked.push(args), queue.shift() ?? { _tag: "Approve" })))
    const { root } = yield* Sandbox.Sandbox
    const result = yield* Effect.result(Mcp.program.pipe(
      Effect.provideService(AskUser, askUser),
      Effect.provide(Layer.merge(model.layer, outputLayer(transcript)))
    ))
    check(root)
    return { result, text: transcript.text(), asked, model }
  }).pipe(Effect.provide(Sandbox.layer(undefined)), Effect.provide(NodeServices.layer))

/** Each test starts the server with tsx, which takes seconds on a busy machine. */
const timeout = 60_000

const oldLogs = ["app-2025-03.log", "app-2025-04.log"]

describe("the MCP example", () => {
  it.live("reads run, the delete waits for a person; approved, it deletes the old logs in the sandbox only", () =>
    Effect.gen(function*() {
      const { result, text, asked } = yield* run([{ _tag: "Approve" }], (root) => {
        for (const log of oldLogs) expect(existsSync(join(root, log))).toBe(false)
        expect(existsSync(join(root, "app.log"))).toBe(true)
      })
      expect(Result.isSuccess(result)).toBe(true)
      expect(asked).toEqual([{ names: oldLogs }])
      expect(text).toContain("Deleted app-2025-03.log and app-2025-04.log.")
    }), timeout)

  it.live("rejected: nothing is deleted and the model sees the reason", () =>
    Effect.gen(function*() {
      const { text } = yield* run([{ _tag: "Reject", reason: "keep them for the audit" }], (root) => {
        for (const log of oldLogs) expect(existsSync(join(root, log))).toBe(true)
      })
      expect(text).toContain("I left the logs alone: keep them for the audit")
    }), timeout)

  it.live("an edit that breaks the server's schema is refused before it is sent; nothing is deleted", () =>
    Effect.gen(function*() {
      const { result, asked } = yield* run([{ _tag: "Approve", edited: { names: ["../precious.txt"] } }], (root) => {
        for (const log of oldLogs) expect(existsSync(join(root, log))).toBe(true)
      })
      expect(asked).toHaveLength(1)
      expect(Result.isFailure(result) && result.failure).toBeInstanceOf(ChatError.InvalidEditedArguments)
      expect(Result.isFailure(result) && (result.failure as ChatError.InvalidEditedArguments).detail).toContain("pattern")
    }), timeout)

  it.live("the server itself refuses names that leave its folder, even when the client's check is bypassed", () =>
    Effect.gen(function*() {
      const { root } = yield* Sandbox.Sandbox
      const secret = join(dirname(root), `secret-${process.pid}.txt`)
      writeFileSync(secret, "do not read")
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(secret, { force: true })))
      const server = yield* McpToolkit.make({
        transport: McpToolkit.stdio(process.execPath, {
          args: ["--import", "tsx", fileURLToPath(new URL("../src/mcp/files-server.ts", import.meta.url)), root],
          cwd: fileURLToPath(new URL("..", import.meta.url))
        })
      })
      // `call` goes straight to the server, without the JSON Schema check the chat makes.
      const read = yield* Effect.result(server.call("read_file", { name: `../${basename(secret)}` }))
      expect(Result.isFailure(read) && read.failure._tag).toBe("McpRequestError")
      const removed = yield* Effect.result(server.call("delete_files", { names: [`../${basename(secret)}`] }))
      expect(Result.isFailure(removed) && removed.failure._tag).toBe("McpRequestError")
      expect(existsSync(secret)).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(Sandbox.layer(undefined)), Effect.provide(NodeServices.layer)), timeout)

  it.live("several servers and a local toolkit: prefixes keep names apart, each call reaches its own folder", () =>
    Effect.gen(function*() {
      const { root } = yield* Sandbox.Sandbox
      const archive = join(root, "..", `archive-${process.pid}`)
      mkdirSync(archive, { recursive: true })
      writeFileSync(join(archive, "2024.log"), "old")
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(archive, { recursive: true, force: true })))
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "w", name: "work_read_file", arguments: { name: "todo.txt" } },
          { id: "a", name: "archive_list_files" },
          { id: "m", name: "remember", arguments: { fact: "the archive has 2024.log" } }
        ]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* McpExtras.twoFolders(root, archive).pipe(
        Effect.provide(model.layer),
        Effect.provide(McpExtras.memoryHandlers)
      )
      const result = yield* chat.complete(Messages.fromUser("Look around."))
      const status = (id: string) => Messages.findTool(result.messages, id)?.status
      expect(status("w")).toMatchObject({ _tag: "Completed", result: { content: [{ text: "water the plants\nreply to Alex\n" }] } })
      expect(status("a")).toMatchObject({ _tag: "Completed", result: { structuredContent: { files: [{ name: "2024.log" }] } } })
      expect(status("m")).toMatchObject({ _tag: "Completed", result: "remembered: the archive has 2024.log" })

    }).pipe(Effect.scoped, Effect.provide(Sandbox.layer(undefined)), Effect.provide(NodeServices.layer)), timeout)

  it.live("a plain Chat from one snapshot: the same strategy (deletes pause)", () =>
    Effect.gen(function*() {
      const { root } = yield* Sandbox.Sandbox
      const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "d", name: "delete_files", arguments: { names: ["app.log"] } }])])
      const chat = yield* McpExtras.fixedChat(root).pipe(Effect.provide(model.layer))
      const result = yield* chat.complete(Messages.fromUser("Delete app.log."))
      expect(result.outcome._tag).toBe("Paused")
      expect(existsSync(join(root, "app.log"))).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(Sandbox.layer(undefined)), Effect.provide(NodeServices.layer)), timeout)
})
