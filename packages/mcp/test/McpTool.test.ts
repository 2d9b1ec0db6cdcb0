/**
 * A server's tool as a chat-ts tool: its JSON Schema checks arguments (the
 * same check that refuses edits), and what a server returns is made plain
 * JSON before it enters a conversation, whatever the server sent.
 */
import { Tool } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { Result, Schema } from "effect"
import { McpError, McpTool } from "../src/index.js"

const validator = new AjvJsonSchemaValidator()

const tool = (inputSchema: Record<string, unknown>, annotations = {}) =>
  McpTool.make({ name: "t", inputSchema: inputSchema as never, annotations }, { server: "s", prefix: "p_", validator })

describe("McpTool.make", () => {
  it("declares the server's schema as it is, never strict, named with the prefix", () => {
    const schema = { type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] }
    const made = tool(schema, { destructiveHint: true })
    expect(made.name).toBe("p_t")
    expect(made.declaration).toEqual({ name: "p_t", description: "t", parameters: schema, strict: false })
    expect(made.metadata).toMatchObject({ server: "s", mcpName: "t", annotations: { destructiveHint: true } })
    expect(Result.isSuccess(Tool.wire(made))).toBe(true)
  })

  it("decodes what the schema accepts, unchanged, and refuses the rest with the validator's message", () => {
    const made = tool({ type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] })
    const decode = Schema.decodeUnknownResult(made.parameters)
    expect(decode({ n: 2 })).toEqual(Result.succeed({ n: 2 }))
    for (const bad of [{ n: 0 }, { n: 1.5 }, {}, { n: "1" }, [], null, "x", 1]) {
      expect(Result.isFailure(decode(bad))).toBe(true)
    }
    const left = decode({ n: 0 })
    expect(Result.isFailure(left) && left.failure.message).toContain(">= 1")
  })

  it("a schema the validator cannot compile refuses every call, with the reason", () => {
    const made = tool({ type: "object", properties: { a: { $ref: "#/definitions/missing" } } })
    const decoded = Schema.decodeUnknownResult(made.parameters)({ a: 1 })
    expect(Result.isFailure(decoded) && decoded.failure.message).toContain("cannot be used")
  })
})

describe("McpTool.toResult", () => {
  it("keeps content and structured content; drops `__proto__` keys, non-JSON values and what nests too deep", () => {
    const hostile = JSON.parse("{\"__proto__\":{\"admin\":true},\"ok\":1}") as Record<string, unknown>
    let deep: unknown = "bottom"
    for (let i = 0; i < 200; i++) deep = { d: deep }
    const result = McpTool.toResult("t", {
      content: [{ type: "text", text: "hi", extra: hostile } as never],
      structuredContent: { n: Number.NaN, deep } as Record<string, unknown>
    })
    expect(result).not.toBeInstanceOf(McpError.McpToolError)
    const json = JSON.stringify(result)
    expect(json).not.toContain("__proto__")
    expect(json).toContain("[nested too deep]")
    expect((result as McpTool.Result).content).toEqual([{ type: "text", text: "hi", extra: { ok: 1 } }])
    expect((result as McpTool.Result).structuredContent?.n).toBeNull()
  })

  it("isError becomes an McpToolError carrying the text", () => {
    const result = McpTool.toResult("t", { content: [{ type: "text", text: "a" }, { type: "text", text: "b" }], isError: true })
    expect(result).toEqual(new McpError.McpToolError({ tool: "t", text: "a\nb", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }))
  })
})

describe("McpTool images (issue 24, defect 11)", () => {
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

  it("each image block becomes a file the model sees as an image; the result keeps its place without the base64", () => {
    const made = tool({ type: "object" })
    expect(made.splitFiles).toBe(McpTool.imagesOf)
    const split = McpTool.imagesOf({
      content: [
        { type: "text", text: "a chart" },
        { type: "image", data: png, mimeType: "image/png", annotations: { audience: ["user"] } },
        // The same image again (a server that repeats itself) is one file.
        { type: "image", data: png, mimeType: "image/png" }
      ],
      // The filesystem server repeats its content in structuredContent: the bytes go there too.
      structuredContent: { content: [{ type: "image", data: png, mimeType: "image/png" }] }
    })
    expect(split.files).toEqual([{ _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: png } }])
    expect(split.result).toEqual({
      content: [
        { type: "text", text: "a chart" },
        { type: "image", mimeType: "image/png", annotations: { audience: ["user"] }, file: 0 },
        { type: "image", mimeType: "image/png", file: 0 }
      ],
      structuredContent: { content: [{ type: "image", data: "[image: file 0 of this result]", mimeType: "image/png" }] }
    })
    expect(JSON.stringify(split.result)).not.toContain(png)
  })

  it("a result without images, or with blocks that are not base64 images, is left as it is", () => {
    const plain = { content: [{ type: "text", text: "hi" }], structuredContent: { n: 1 } }
    expect(McpTool.imagesOf(plain)).toEqual({ result: plain, files: [] })
    const odd = {
      content: [
        { type: "image", data: "not base64!", mimeType: "image/png" },
        { type: "image", data: "", mimeType: "image/png" },
        { type: "image", data: png, mimeType: "text/html" },
        { type: "audio", data: "UklGRg==", mimeType: "audio/wav" }
      ]
    }
    expect(McpTool.imagesOf(odd)).toEqual({ result: odd, files: [] })
  })

  it("an error result's images become files the same way; other failures hold none", () => {
    const made = tool({ type: "object" })
    expect(made.splitFailureFiles).toBe(McpTool.errorImagesOf)
    const failed = McpTool.toResult("t", {
      content: [{ type: "text", text: "render failed" }, { type: "image", data: png, mimeType: "image/png" }],
      isError: true
    })
    const encoded = Schema.encodeUnknownSync(McpError.McpCallError)(failed)
    const split = McpTool.errorImagesOf(encoded)
    expect(split.files).toEqual([{ _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: png } }])
    expect(split.result).toEqual({
      _tag: "McpToolError",
      tool: "t",
      text: "render failed",
      content: [{ type: "text", text: "render failed" }, { type: "image", mimeType: "image/png", file: 0 }]
    })
    expect(JSON.stringify(split.result)).not.toContain(png)
    const textOnly = Schema.encodeUnknownSync(McpError.McpCallError)(McpTool.toResult("t", { content: [{ type: "text", text: "no" }], isError: true }))
    expect(McpTool.errorImagesOf(textOnly)).toEqual({ result: textOnly, files: [] })
    const timeout = { _tag: "McpCallTimeout", tool: "t", timeout: "1 second" } as never
    expect(McpTool.errorImagesOf(timeout)).toEqual({ result: timeout, files: [] })
  })
})
