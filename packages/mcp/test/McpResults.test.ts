/**
 * Results of MCP tools with a size (issue 32, section 4), against the real
 * filesystem server from npm (`@modelcontextprotocol/server-filesystem`, a
 * devDependency, run unchanged as a child process over stdio): its
 * `read_text_file` of a 4 MB file sent the text twice (in `content` and again
 * in `structuredContent`), 8 MB in the next model request and in the stored
 * state. Now the copy is dropped and the result is cut to its cap with a
 * marker, so the request and the stored conversation stay about 50 kB. A
 * server's `_meta["anthropic/maxResultSizeChars"]` sets one tool's cap, within
 * the toolkit's ceiling.
 */
import { Messages, ToolResult } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Effect, Result } from "effect"
import { McpChat, McpTool, McpToolkit } from "../src/index.js"

const packageJson = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/package.json")

/** The filesystem server's program, as its package's `bin` names it. */
const filesystemBin = join(
  dirname(packageJson),
  (JSON.parse(readFileSync(packageJson, "utf8")) as { readonly bin: Record<string, string> }).bin["mcp-server-filesystem"]!
)

/** A temporary folder holding a 4 MB text file, removed when the scope closes. */
const folderWithBigFile = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "chat-ts-mcp-results-"))
    const text = "a line of a large log file, with \"quotes\" in it\n".repeat(90_000).slice(0, 4_000_000)
    writeFileSync(join(dir, "big.txt"), text)
    return { dir, path: join(dir, "big.txt"), text }
  }),
  ({ dir }) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const filesystem = (dir: string, options: Partial<McpToolkit.Options> = {}) =>
  McpToolkit.make({ transport: McpToolkit.stdio(process.execPath, { args: [filesystemBin, dir], stderr: "ignore" }), ...options })

const documentSize = (messages: Messages.Messages): number => Result.getOrThrow(Messages.toJson(messages)).length

/** Reads the big file through a chat over the filesystem server; what the model was sent next, and the state. */
const readBig = (options: Partial<McpToolkit.Options> = {}) =>
  Effect.gen(function*() {
    const file = yield* folderWithBigFile
    const server = yield* filesystem(file.dir, options)
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "r1", name: "read_text_file", arguments: { path: file.path } }]),
      MockLanguageModel.text("It is a log.")
    ])
    const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
    const done = yield* chat.complete(Messages.fromUser("What is in big.txt?"))
    const request = model.requests[model.requests.length - 1]!
    return { file, done, request, shown: Messages.projectToolCall(Messages.findTool(request.messages, "r1")!).result! }
  })

describe("a 4 MB read_text_file through the filesystem server", () => {
  it.live("the next request and the stored state hold the first 50,000 characters and the marker, once", () =>
    Effect.gen(function*() {
      const { file, done, request, shown } = yield* readBig()
      expect(shown.isError).toBe(false)
      expect(shown.text.length).toBeLessThanOrEqual(ToolResult.defaultMaxChars + ToolResult.markerMaxChars)
      // The text is sent once: the structuredContent copy of it is gone.
      expect(shown.text).not.toContain("structuredContent")
      expect(shown.text).toContain("shown 49,999 of 4,")
      // The result keeps its shape: its one text block is cut, the marker at its end.
      const result = Messages.findTool(done.messages, "r1")!.status
      const text = (result as { result: { content: ReadonlyArray<{ type: string; text: string }> } }).result.content[0]!.text
      expect(JSON.parse(shown.text)).toEqual({ content: [{ type: "text", text }] })
      expect(text.startsWith(file.text.slice(0, 40_000))).toBe(true)
      expect(text).toMatch(/\n\[chat-ts cut this result: shown 49,999 of 4,\d{3},\d{3} characters \(the limit is 50,000\)\. The rest was not kept/)
      expect(JSON.stringify(request.messages).length).toBeLessThan(60_000)
      expect(documentSize(done.messages)).toBeLessThan(60_000)
    }), { timeout: 60_000 })

  it.live("with a Store, the application gets the full result (the text once), and the marker names it", () =>
    Effect.gen(function*() {
      const memory = yield* ToolResult.makeMemoryStore
      const { done, file, shown } = yield* readBig().pipe(Effect.provideService(ToolResult.Store, memory.store))
      // The marker is at the end of the text block (a JSON string in what the model reads).
      const block = (JSON.parse(shown.text) as { content: ReadonlyArray<{ text: string }> }).content[0]!.text
      const ref = /kept by the application as "([^"]+)"/.exec(block)?.[1]
      expect(ref).toBeDefined()
      const full = memory.get(ref!)!
      expect(full).toMatchObject({ id: "r1", tool: "read_text_file", isError: false })
      expect(full.value).toEqual({ content: [{ type: "text", text: file.text }] })
      expect(documentSize(done.messages)).toBeLessThan(60_000)
    }), { timeout: 60_000 })

  it.live("the toolkit's maxResultChars caps the server's tools", () =>
    Effect.gen(function*() {
      const { done, shown } = yield* readBig({ maxResultChars: 2_000 })
      expect(shown.text.length).toBeLessThanOrEqual(2_000 + ToolResult.markerMaxChars)
      expect(shown.text).toContain("(the limit is 2,000)")
      expect(documentSize(done.messages)).toBeLessThan(5_000)
    }), { timeout: 60_000 })
})

describe("McpTool.toResult drops a structuredContent that repeats the text", () => {
  it("the filesystem server's { content: <the text> }, and the JSON of a text block, are dropped", () => {
    expect(McpTool.toResult("t", { content: [{ type: "text", text: "hello" }], structuredContent: { content: "hello" } })).toEqual({
      content: [{ type: "text", text: "hello" }]
    })
    const data = { rows: [{ id: 1, name: "a" }], total: 1 }
    expect(McpTool.toResult("t", { content: [{ type: "text", text: JSON.stringify(data, null, 2) }], structuredContent: data })).toEqual({
      content: [{ type: "text", text: JSON.stringify(data, null, 2) }]
    })
    // Two blocks joined by a newline, keys in another order.
    expect(McpTool.repeatsText([{ type: "text", text: "{\"b\":1," }, { type: "text", text: "\"a\":2}" }], { a: 2, b: 1 })).toBe(true)
    expect(McpTool.repeatsText([{ type: "text", text: "{\"b\":1,\"a\":2}" }], { a: 2, b: 1 })).toBe(true)
  })

  it("structured content that says more than the text is kept", () => {
    const kept = [
      { content: [{ type: "text", text: "3 rows" }], structuredContent: { rows: 3 } },
      { content: [{ type: "text", text: "hello" }], structuredContent: { content: "hello", extra: "more" } },
      { content: [{ type: "text", text: "{\"a\":1}" }], structuredContent: { a: 2 } },
      { content: [], structuredContent: { a: 1 } },
      { content: [{ type: "text", text: "x" }], structuredContent: {} }
    ]
    for (const result of kept) expect(McpTool.toResult("t", result as never)).toEqual(result)
  })
})

describe("a server's anthropic/maxResultSizeChars", () => {
  const validator = new AjvJsonSchemaValidator()
  const tool = (meta: unknown) => ({ name: "t", inputSchema: { type: "object" as const }, ...(meta === undefined ? {} : { _meta: meta as Record<string, unknown> }) })

  it("sets the tool's cap: a lower one as it is, a higher one up to the ceiling; anything else is ignored", () => {
    const capOf = (meta: unknown, options: { maxResultChars?: number; serverMaxResultChars?: number } = {}) =>
      ToolResult.maxCharsOf(McpTool.make(tool(meta), { server: "s", validator, ...options }))
    expect(capOf(undefined)).toBe(ToolResult.defaultMaxChars)
    // Without metadata or an option, the tool has no cap of its own: a toolkit's applies.
    expect(McpTool.make(tool(undefined), { server: "s", validator }).maxResultChars).toBeUndefined()
    expect(McpTool.make(tool(undefined), { server: "s", validator, maxResultChars: 7 }).maxResultChars).toBe(7)
    expect(capOf({ "anthropic/maxResultSizeChars": 200_000 })).toBe(200_000)
    expect(capOf({ "anthropic/maxResultSizeChars": 5_000_000 })).toBe(McpTool.defaultServerMaxResultChars)
    expect(McpTool.defaultServerMaxResultChars).toBe(500_000)
    expect(capOf({ "anthropic/maxResultSizeChars": 1_000 })).toBe(1_000)
    expect(capOf({ "anthropic/maxResultSizeChars": 200_000 }, { serverMaxResultChars: 100_000 })).toBe(100_000)
    // A ceiling under the toolkit's cap lets no server raise it.
    expect(capOf({ "anthropic/maxResultSizeChars": 200_000 }, { serverMaxResultChars: 0 })).toBe(ToolResult.defaultMaxChars)
    expect(capOf({ "anthropic/maxResultSizeChars": 200_000 }, { maxResultChars: 10_000, serverMaxResultChars: 0 })).toBe(10_000)
    for (const bad of ["1000000", -1, 1.5, null, Number.NaN, {}, true]) {
      expect(capOf({ "anthropic/maxResultSizeChars": bad })).toBe(ToolResult.defaultMaxChars)
    }
    expect(capOf("not an object")).toBe(ToolResult.defaultMaxChars)
  })
})

/** A temporary folder holding a 6 MB `.png` (its bytes need not be a real image: the server only reads them), removed when the scope closes. */
const folderWithBigImage = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "chat-ts-mcp-image-"))
    const bytes = Buffer.alloc(6_000_000, 7)
    writeFileSync(join(dir, "big.png"), bytes)
    writeFileSync(join(dir, "small.png"), Buffer.alloc(3_000, 9))
    return { dir, big: join(dir, "big.png"), small: join(dir, "small.png"), base64: bytes.toString("base64") }
  }),
  ({ dir }) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** Reads `which` image through `read_media_file` of a chat over the filesystem server; what the model was sent next, and the state. */
const readImage = (which: "big" | "small", options: Partial<McpToolkit.Options> | ((dir: string) => Partial<McpToolkit.Options>) = {}) =>
  Effect.gen(function*() {
    const folder = yield* folderWithBigImage
    const server = yield* filesystem(folder.dir, typeof options === "function" ? options(folder.dir) : options)
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "m1", name: "read_media_file", arguments: { path: folder[which] } }]),
      MockLanguageModel.text("It is an image.")
    ])
    const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
    const done = yield* chat.complete(Messages.fromUser("Show me the image."))
    const request = model.requests[model.requests.length - 1]!
    return { folder, done, request, shown: Messages.projectToolCall(Messages.findTool(request.messages, "m1")!).result! }
  })

describe("a 6 MB image through the filesystem server's read_media_file", () => {
  it.live("is neither stored nor sent (8 MB of base64, over the 5 MiB of files a result keeps): the model reads a note naming it", () =>
    Effect.gen(function*() {
      const memory = yield* ToolResult.makeMemoryStore
      const { done, folder, request, shown } = yield* readImage("big").pipe(Effect.provideService(ToolResult.Store, memory.store))
      if (shown.isError) throw new Error(shown.text.slice(0, 2_000))
      expect(Messages.resultFiles(shown)).toEqual([])
      const status = Messages.findTool(done.messages, "m1")!.status
      expect(status).not.toHaveProperty("files")
      const result = (status as { result: { content: ReadonlyArray<unknown>; filesNotShown: ReadonlyArray<string> } }).result
      // The image block keeps its place as a mention; the note says what it was and where it is.
      expect(result.content).toEqual([{ type: "image", mimeType: "image/png", file: 0 }])
      expect(result.filesNotShown).toHaveLength(1)
      expect(result.filesNotShown[0]).toMatch(
        /^\[chat-ts: file 0 \("image\/png", 8,000,0\d\d bytes\) not shown: over the limit of 5,242,880 bytes of files in one result\. The application keeps it with the full result as "([^"]+)"\.\]$/
      )
      const ref = /as "([^"]+)"/.exec(result.filesNotShown[0]!)![1]!
      expect(memory.get(ref)?.files).toEqual([Messages.file({ mediaType: "image/png", base64: folder.base64 })])
      expect(JSON.stringify(request.messages).length).toBeLessThan(5_000)
      expect(documentSize(done.messages)).toBeLessThan(5_000)
    }), { timeout: 60_000 })

  it.live("a message over the stdio transport's maxMessageBytes (default 64 MiB) closes the connection: the call fails as McpServerClosed", () =>
    Effect.gen(function*() {
      const { done, shown } = yield* readImage("big", (dir) => ({
        transport: McpToolkit.stdio(process.execPath, { args: [filesystemBin, dir], stderr: "ignore", maxMessageBytes: 1_000_000 })
      }))
      expect(McpToolkit.defaultMaxMessageBytes).toBe(64 * 1024 * 1024)
      expect(shown.isError).toBe(true)
      expect(shown.text).toContain("McpServerClosed")
      expect(documentSize(done.messages)).toBeLessThan(5_000)
    }), { timeout: 60_000 })

  it.live("a small image is kept and sent as an image; the toolkit's maxResultFileBytes caps the server's tools", () =>
    Effect.gen(function*() {
      const small = yield* readImage("small")
      expect(Messages.resultFiles(small.shown)).toHaveLength(1)
      expect(small.shown.text).not.toContain("not shown")
      const capped = yield* readImage("small", { maxResultFileBytes: 1_000 })
      expect(Messages.resultFiles(capped.shown)).toEqual([])
      expect(capped.shown.text).toContain("over the limit of 1,000 bytes of files in one result")
      expect(documentSize(capped.done.messages)).toBeLessThan(3_000)
    }), { timeout: 60_000 })
})
