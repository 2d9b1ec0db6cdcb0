/**
 * The seed's flow through a real MCP server (a child process, over stdio and
 * over Streamable HTTP): the destructive tool pauses, an edit is checked
 * against the server's JSON Schema, a rejection's reason reaches the model,
 * and the approved call runs exactly once on the server.
 */
import { Action, Chat, ChatError, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Schema, Stream } from "effect"
import { McpChat, McpError, McpStrategy, McpToolkit } from "../src/index.js"
import { serverPath, stats, stdio, transports, untilStale } from "./support/servers.js"

const ask = Messages.fromUser("Clean up the old log.")

const pausedOn = (result: { readonly outcome: { readonly _tag: string } }): ReadonlyArray<string> => {
  const outcome = result.outcome as { readonly _tag: string; readonly reason?: PauseReason.PauseReason }
  if (outcome._tag !== "Paused" || outcome.reason === undefined) throw new Error(`expected a pause, got ${outcome._tag}`)
  return PauseReason.toolIds(outcome.reason)
}

const statusOf = (messages: Messages.Messages, id: string) => Messages.findTool(messages, id)?.status

/** The names of the tools a request offered. */
const offered = (request: { readonly tools: ReadonlyArray<{ readonly name: string }> } | undefined) =>
  (request?.tools ?? []).map((tool) => tool.name)

/** `set_hidden` (which changes the tool list) runs without asking; the rest as the annotations say. */
const listChanger: McpStrategy.Strategy = McpStrategy.combine<never, never>(
  (call) => (call.name === "set_hidden" ? Action.Execute() : undefined),
  McpStrategy.annotations
)

/** What the model saw of call `id` in its latest request. */
const seenByModel = (model: MockLanguageModel.MockLanguageModel, id: string) => {
  const request = model.requests[model.requests.length - 1]!
  return Messages.projectToolCall(Messages.findTool(request.messages, id)!)
}

for (const [transportName, transport] of transports) {
  describe(`the seed flow through MCP (${transportName})`, () => {
    it.live("destructive pauses, a bad edit is refused, the approved call runs once; a rejection's reason reaches the model", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([
            { id: "read", name: "read_file", arguments: { path: "notes.txt" } },
            { id: "del", name: "delete_file", arguments: { path: "old.log" } },
            { id: "del2", name: "delete_file", arguments: { path: "notes.txt" } }
          ]),
          MockLanguageModel.text("Deleted old.log, kept notes.txt.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))

        // The model sees the server's own JSON Schema (without `$schema`).
        const declared = chat.tools.find((tool) => tool.name === "delete_file")!
        expect(declared.parameters).toEqual({
          type: "object",
          properties: { path: { type: "string", minLength: 1, pattern: "^[a-z0-9_.-]+$" }, force: { type: "boolean" } },
          required: ["path"],
          additionalProperties: false
        })

        const first = yield* chat.complete(ask)
        // The read-only tool ran; both destructive calls wait for a person.
        expect(pausedOn(first)).toEqual(["del", "del2"])
        expect(statusOf(first.messages, "read")?._tag).toBe("Completed")
        expect(statusOf(first.messages, "del")?._tag).toBe("AwaitingApproval")
        expect((yield* stats(server)).calls).toEqual({ read_file: 1 })

        // Edits that do not match the server's schema are refused at once, the messages unchanged.
        for (const bad of [{ path: "../etc/passwd" }, { path: "old.log", force: "yes" }, { path: "old.log", extra: 1 }, {}]) {
          const refused = yield* Effect.result(chat.approve(first.messages, "del", bad))
          expect(Result.isFailure(refused) && refused.failure._tag).toBe("InvalidEditedArguments")
          if (Result.isFailure(refused) && refused.failure._tag === "InvalidEditedArguments") {
            expect(refused.failure.messages).toEqual(first.messages)
          }
        }
        // An edit forged into the messages directly is still checked before anything is sent.
        const forged = yield* Effect.fromResult(Messages.approve(first.messages, "del", { path: "UPPER" }))
        const forgedResume = yield* Effect.result(chat.resume(yield* Effect.fromResult(Messages.reject(forged, "del2", "no"))))
        expect(Result.isFailure(forgedResume) && forgedResume.failure._tag).toBe("InvalidEditedArguments")
        expect((yield* stats(server)).started.delete_file).toBeUndefined()

        let messages = yield* chat.approve(first.messages, "del", { path: "old.log", force: true })
        messages = yield* chat.reject(messages, "del2", "notes.txt is still needed")
        const done = yield* chat.resume(messages)
        expect(done.outcome._tag).toBe("Complete")

        // Exactly once on the server, with the edited arguments; the model saw its result and the rejection's reason.
        expect((yield* stats(server)).calls).toEqual({ read_file: 1, delete_file: 1 })
        expect(seenByModel(model, "del")).toMatchObject({
          arguments: JSON.stringify({ path: "old.log", force: true }),
          result: { isError: false, value: { content: [{ type: "text", text: "deleted old.log" }] } }
        })
        expect(JSON.stringify(seenByModel(model, "del2").result)).toContain("notes.txt is still needed")
        expect(seenByModel(model, "read").result).toMatchObject({
          isError: false,
          value: { content: [{ type: "text", text: "hello" }], structuredContent: { path: "notes.txt", length: 5 } }
        })
      }).pipe(Effect.scoped))

    it.live("arguments the model sends that break the server's schema fail the call without reaching the server", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([
            { id: "bad", name: "delete_file", arguments: { path: "a/../../b" } },
            { id: "proto", name: "read_file", arguments: "{\"path\":\"x\",\"__proto__\":{\"admin\":true}}" },
            { id: "notjson", name: "read_file", arguments: "{path:" }
          ]),
          MockLanguageModel.text("Sorry.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        const result = yield* chat.complete(ask)
        expect(result.outcome._tag).toBe("Complete")
        for (const id of ["bad", "proto", "notjson"]) expect(statusOf(result.messages, id)?._tag).toBe("Failed")
        expect(JSON.stringify(seenByModel(model, "bad").result)).toContain("pattern")
        expect((yield* stats(server)).started).toEqual({})
      }).pipe(Effect.scoped))

    it.live("a call past its timeout: the model is told its outcome is unknown, not that it was cancelled", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport, timeout: "300 millis" })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "slow", name: "slow" }]),
          MockLanguageModel.text("It may or may not have run.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        const result = yield* chat.complete(ask)
        expect(statusOf(result.messages, "slow")).toMatchObject({
          _tag: "Failed",
          error: { _tag: "McpCallTimeout", tool: "slow", timeoutMillis: 300, outcome: "unknown" }
        })
        const seen = JSON.stringify(seenByModel(model, "slow").result)
        expect(seen).toContain("outcome is unknown")
        expect(seen).not.toContain("was cancelled")
      }).pipe(Effect.scoped))

    it.live("results: images and structured content reach the model; isError is a failed call with the server's text (and its images as files)", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "chart", name: "chart" }, { id: "fail", name: "fail" }]),
          MockLanguageModel.text("Here.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        yield* chat.complete(ask)
        // The image reaches the model as an image (a file of the result), not as base64 in its text.
        const chart = seenByModel(model, "chart").result!
        expect(chart).toMatchObject({
          isError: false,
          value: { content: [{ type: "text", text: "a chart" }, { type: "image", mimeType: "image/png", file: 0 }] },
          files: [{ _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: expect.stringMatching(/^iVBOR/) } }]
        })
        expect(chart.text).not.toContain("iVBOR")
        // So does an error result's image: a file of the failed call, not base64 in its error's text.
        const fail = seenByModel(model, "fail").result!
        expect(fail).toMatchObject({
          isError: true,
          value: {
            error: {
              _tag: "McpToolError",
              tool: "fail",
              text: "disk on fire",
              content: [{ type: "text", text: "disk on fire" }, { type: "image", mimeType: "image/png", file: 0 }]
            }
          },
          files: [{ _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: expect.stringMatching(/^iVBOR/) } }]
        })
        expect(fail.text).not.toContain("iVBOR")
        // The failing tool ran once and was not retried.
        expect((yield* stats(server)).calls).toEqual({ chart: 1, fail: 1 })
      }).pipe(Effect.scoped))

    it.live("a tool list change made by a call reaches the next model request of the same turn", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport, strategy: listChanger })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "hide", name: "set_hidden", arguments: { names: ["delete_file"] } }]),
          // The model calls the tool it is no longer offered: it fails without reaching the server.
          MockLanguageModel.toolCalls([{ id: "del", name: "delete_file", arguments: { path: "old.log" } }]),
          MockLanguageModel.toolCalls([{ id: "show", name: "set_hidden", arguments: { names: [] } }]),
          MockLanguageModel.text("Done.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        const result = yield* chat.complete(ask)
        expect(result.outcome._tag).toBe("Complete")
        expect(model.requests).toHaveLength(4)
        // All four requests belong to one `complete`: the list followed the server between them.
        expect(offered(model.requests[0])).toContain("delete_file")
        expect(offered(model.requests[1])).not.toContain("delete_file")
        expect(offered(model.requests[2])).not.toContain("delete_file")
        expect(offered(model.requests[3])).toContain("delete_file")
        expect(offered(model.requests[1])).toEqual(offered(model.requests[0]).filter((name) => name !== "delete_file"))
        expect(statusOf(result.messages, "del")).toMatchObject({
          _tag: "Failed",
          error: expect.stringContaining("There is no tool named 'delete_file'")
        })
        expect(chat.tools.map((tool) => tool.name)).toContain("delete_file")
        expect((yield* stats(server)).started).toEqual({ set_hidden: 2 })
      }).pipe(Effect.scoped))

    it.live("a tool list change is picked up for the next turn; a paused call whose tool disappeared fails clearly", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "del", name: "delete_file", arguments: { path: "old.log" } }]),
          MockLanguageModel.text("It is gone."),
          MockLanguageModel.text("Back.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        const first = yield* chat.complete(ask)
        expect(pausedOn(first)).toEqual(["del"])

        // While the turn waits for a person, the server drops the tool.
        yield* server.call("set_hidden", { names: ["delete_file"] })
        yield* untilStale(server)
        // An edit for a tool that is gone cannot be checked: refused, nothing changed.
        const edited = yield* Effect.fromResult(Messages.approve(first.messages, "del", { path: "old.log" }))
        const refused = yield* Effect.result(chat.resume(edited))
        expect(Result.isFailure(refused) && refused.failure).toMatchObject({
          _tag: "InvalidEditedArguments",
          detail: expect.stringContaining("no tool named 'delete_file'")
        })
        const approved = yield* chat.approve(first.messages, "del")
        const resumed = yield* chat.resume(approved)
        expect(resumed.outcome._tag).toBe("Complete")
        const status = statusOf(resumed.messages, "del")
        expect(status).toMatchObject({ _tag: "Failed", error: "There is no tool named 'delete_file'." })
        // The model's next call no longer offers the tool; the server never ran it.
        expect(model.requests[1]!.tools.map((tool) => tool.name)).not.toContain("delete_file")
        expect(chat.tools.map((tool) => tool.name)).not.toContain("delete_file")
        expect((yield* stats(server)).started.delete_file).toBeUndefined()

        // It comes back: the next turn offers it again.
        yield* server.call("set_hidden", { names: [] })
        yield* untilStale(server)
        // Streaming follows the list too.
        const events = yield* Stream.runCollect(chat.stream([...resumed.messages, ...Messages.fromUser("Is it back?")]))
        expect(events.at(-1)?._tag).toBe("Completed")
        expect(model.requests[2]!.tools.map((tool) => tool.name)).toContain("delete_file")
      }).pipe(Effect.scoped))
  })
}

describe("several servers and local toolkits in one chat", () => {
  const Note = Tool.make("note", { description: "Write a note.", parameters: { text: Schema.String }, success: Schema.String })
  const notes = Toolkit.make(Note)
  const noteHandlers = notes.toLayer({ note: ({ text }) => Effect.succeed(`noted: ${text}`) })

  it.live("a tool name owned twice is a DuplicateToolName at make; prefixes tell servers apart", () =>
    Effect.gen(function*() {
      const a = yield* McpToolkit.make({ transport: stdio })
      const b = yield* McpToolkit.make({ transport: stdio })
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "a", name: "a_read_file", arguments: { path: "notes.txt" } },
          { id: "b", name: "b_chart" },
          { id: "n", name: "note", arguments: { text: "hi" } }
        ]),
        MockLanguageModel.text("Done.")
      ])
      const clash = yield* Effect.result(McpChat.make({ servers: [a, b] }).pipe(Effect.provide(model.layer)))
      expect(Result.isFailure(clash) && clash.failure).toMatchObject({ _tag: "DuplicateToolName", name: "delete_file" })

      // The same with Chat.make and the snapshots' toolkits.
      const [snapA, snapB] = [yield* a.current, yield* b.current]
      const direct = yield* Effect.result(
        Chat.make({ tools: [snapA.toolkit, snapB.toolkit] }).pipe(Effect.provide(snapA.handlers), Effect.provide(model.layer))
      )
      expect(Result.isFailure(direct) && direct.failure._tag).toBe("DuplicateToolName")

      const prefixedA = yield* McpToolkit.make({ transport: stdio, prefix: "a_" })
      const prefixedB = yield* McpToolkit.make({ transport: stdio, prefix: "b_" })
      const chat = yield* McpChat.make({ tools: notes, servers: [prefixedA, prefixedB] }).pipe(
        Effect.provide(model.layer),
        Effect.provide(noteHandlers)
      )
      const result = yield* chat.complete(ask)
      expect(result.outcome._tag).toBe("Complete")
      expect(statusOf(result.messages, "n")).toMatchObject({ _tag: "Completed", result: "noted: hi" })
      // Each call went to its own server, under the server's own tool name.
      expect((yield* stats(prefixedA)).calls).toEqual({ read_file: 1 })
      expect((yield* stats(prefixedB)).calls).toEqual({ chart: 1 })
      const metadata = (yield* prefixedA.current).toolkit.tools["a_read_file"]!.metadata
      expect(metadata).toMatchObject({ server: "test-files", mcpName: "read_file", annotations: { readOnlyHint: true } })
    }).pipe(Effect.scoped))

  it.live("a local tool clashing with a server's tool is a DuplicateToolName", () =>
    Effect.gen(function*() {
      const server = yield* McpToolkit.make({ transport: stdio })
      const ReadFile = Tool.make("read_file", { description: "Local read.", parameters: { path: Schema.String } })
      const local = Toolkit.make(ReadFile)
      const model = MockLanguageModel.make([])
      const made = yield* Effect.result(
        McpChat.make({ tools: local, servers: [server] }).pipe(
          Effect.provide(model.layer),
          Effect.provide(local.toLayer({ read_file: () => Effect.void }))
        )
      )
      expect(Result.isFailure(made) && made.failure).toMatchObject({ _tag: "DuplicateToolName", name: "read_file" })
    }).pipe(Effect.scoped))

  it.live("a server that later adds a tool whose name is taken: the next turn fails with DuplicateToolName, nothing runs", () =>
    Effect.gen(function*() {
      const server = yield* McpToolkit.make({
        transport: McpToolkit.stdio(process.execPath, { args: [serverPath, "--hide=delete_file"], stderr: "ignore" })
      })
      const DeleteFile = Tool.make("delete_file", { description: "Local delete.", parameters: { path: Schema.String } })
      const local = Toolkit.make(DeleteFile)
      let ranLocally = 0
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "d", name: "delete_file", arguments: { path: "x" } }]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* McpChat.make({ tools: local, servers: [server] }).pipe(
        Effect.provide(model.layer),
        Effect.provide(local.toLayer({ delete_file: () => Effect.sync(() => void ranLocally++) }))
      )
      yield* server.call("set_hidden", { names: [] })
      yield* untilStale(server)
      const result = yield* Effect.result(chat.complete(ask))
      expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "DuplicateToolName", name: "delete_file" })
      expect(model.requests).toHaveLength(0)
      expect(ranLocally).toBe(0)
      expect((yield* stats(server)).started).toEqual({ set_hidden: 1 })
    }).pipe(Effect.scoped))

  it.live("a clash brought by a change mid-turn: DuplicateToolName before the next model call, with what already ran", () =>
    Effect.gen(function*() {
      const server = yield* McpToolkit.make({
        transport: McpToolkit.stdio(process.execPath, { args: [serverPath, "--hide=delete_file"], stderr: "ignore" }),
        strategy: listChanger
      })
      const DeleteFile = Tool.make("delete_file", { description: "Local delete.", parameters: { path: Schema.String } })
      const local = Toolkit.make(DeleteFile)
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "show", name: "set_hidden", arguments: { names: [] } }]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* McpChat.make({ tools: local, servers: [server] }).pipe(
        Effect.provide(model.layer),
        Effect.provide(local.toLayer({ delete_file: () => Effect.void }))
      )
      const failed = yield* Effect.flip(chat.complete(ask))
      expect(failed).toMatchObject({ _tag: "DuplicateToolName", name: "delete_file" })
      expect(model.requests).toHaveLength(1)
      // The call that ran is in the error's messages, so resuming never sends it again.
      const messages = (failed as ChatError.DuplicateToolName).messages!
      expect(statusOf(messages, "show")?._tag).toBe("Completed")
      expect((yield* stats(server)).started).toEqual({ set_hidden: 1 })
    }).pipe(Effect.scoped))

  it.live("a strategy of the user's replaces the default", () =>
    Effect.gen(function*() {
      const server = yield* McpToolkit.make({
        transport: stdio,
        strategy: (call) => call.name === "read_file" ? Action.Reject({ reason: "reads are off today" }) : Action.Execute()
      })
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "r", name: "read_file", arguments: { path: "notes.txt" } }, {
          id: "d",
          name: "delete_file",
          arguments: { path: "old.log" }
        }]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
      const result = yield* chat.complete(ask)
      expect(statusOf(result.messages, "r")).toMatchObject({ _tag: "Rejected", reason: "reads are off today" })
      expect(statusOf(result.messages, "d")?._tag).toBe("Completed")
      expect((yield* stats(server)).calls).toEqual({ delete_file: 1 })
    }).pipe(Effect.scoped))
})

describe("errors", () => {
  it.live("a server that cannot start is an McpConnectError", () =>
    Effect.gen(function*() {
      const result = yield* Effect.result(
        McpToolkit.make({ transport: McpToolkit.stdio(process.execPath, { args: ["-e", "process.exit(3)"], stderr: "ignore" }) })
      )
      expect(Result.isFailure(result) && result.failure._tag).toBe("McpConnectError")
      const http = yield* Effect.result(McpToolkit.make({ transport: McpToolkit.http("http://127.0.0.1:9/mcp?token=secret") }))
      expect(Result.isFailure(http) && http.failure._tag).toBe("McpConnectError")
      // The URL's query (where a token may hide) never reaches the error.
      expect(Result.isFailure(http) && JSON.stringify(http.failure)).not.toContain("secret")
    }).pipe(Effect.scoped))

  it("ChatError names stay core's", () => {
    expect(new ChatError.DuplicateToolName({ name: "x" })._tag).toBe("DuplicateToolName")
  })

  it("an McpConnectError raised mid-turn can carry the turn's latest messages", () => {
    const messages = Messages.fromUser("hi")
    const error = ChatError.withMessages(new McpError.McpConnectError({ server: "s", detail: "gone" }), messages)
    expect(error).toBeInstanceOf(McpError.McpConnectError)
    expect(error).toMatchObject({ server: "s", detail: "gone", messages })
  })
})
