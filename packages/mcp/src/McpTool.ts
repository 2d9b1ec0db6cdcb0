/**
 * One MCP server tool as a chat-ts `Tool`: the server's JSON Schema is what
 * the model sees and what every call's arguments (and every edit) are
 * checked against before anything is sent; its annotations are typed
 * metadata for strategies; its results are mapped to what the model sees.
 *
 * @since 0.1.0
 */
import * as Messages from "@chat-ts/core/Messages"
import * as Tool from "@chat-ts/core/Tool"
import * as ToolResult from "@chat-ts/core/ToolResult"
import type { CallToolResult, Tool as ServerTool } from "@modelcontextprotocol/sdk/types.js"
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js"
import * as Schema from "effect/Schema"
import { toPlain } from "./internal/json.js"
import * as McpError from "./McpError.js"

/** MCP's tool annotations: hints from the server (never trusted to relax a rule on their own). */
export interface Annotations {
  readonly title?: string | undefined
  /** The tool does not modify its environment. */
  readonly readOnlyHint?: boolean | undefined
  /** The tool may perform destructive updates (meaningful when not read-only). */
  readonly destructiveHint?: boolean | undefined
  /** Calling it again with the same arguments has no further effect. */
  readonly idempotentHint?: boolean | undefined
  /** The tool interacts with an open world of external entities (the web, other people). */
  readonly openWorldHint?: boolean | undefined
}

/** What a strategy learns about an MCP tool. */
export interface Metadata {
  /** The name of the server (its `name` option, else what it calls itself). */
  readonly server: string
  /** The tool's name on the server (the chat's name may carry a prefix). */
  readonly mcpName: string
  readonly title: string | undefined
  readonly annotations: Annotations
}

/** The arguments of an MCP tool: a JSON object, checked against the server's JSON Schema. */
export type Params = { readonly [key: string]: unknown }

/** What a successful call returns to the model: the server's content blocks and its structured content, if any. */
export const Result = Schema.Struct({
  content: Schema.Array(Schema.Unknown),
  structuredContent: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})

/** What a successful call returns to the model. */
export type Result = typeof Result.Type

/** An MCP tool as chat-ts sees it. */
export interface McpTool extends Tool.Tool<string, Schema.Codec<Params>, typeof Result, typeof McpError.McpCallError, Metadata> {}

/** The server's JSON Schema without `$schema` (providers take the schema itself only). */
const declaredSchema = (inputSchema: ServerTool["inputSchema"]): Record<string, unknown> => {
  const { $schema: _ignored, ...rest } = toPlain(inputSchema) as Record<string, unknown>
  return rest
}

/** Whether a value is a JSON object (not an array, not null). */
const isObject = (input: unknown): input is Params => typeof input === "object" && input !== null && !Array.isArray(input)

/**
 * An Effect Schema for JSON objects that match a JSON Schema: it decodes
 * (unchanged) what the validator accepts, fails with the validator's message
 * otherwise, and is declared to the model as that JSON Schema.
 */
export const fromJsonSchema = (jsonSchema: Record<string, unknown>, validator: jsonSchemaValidator): Schema.Codec<Params> => {
  let check: (input: unknown) => string | undefined
  try {
    const validate = validator.getValidator(jsonSchema as never)
    check = (input) => {
      const result = validate(input)
      return result.valid ? undefined : (result.errorMessage ?? "the arguments do not match the tool's JSON Schema")
    }
  } catch (error) {
    const reason = `the server's JSON Schema for this tool cannot be used (${(error as Error).message.split("\n")[0]})`
    check = () => reason
  }
  // chat-ts reads a declaration's `jsonSchema` annotation as its whole JSON Schema: the server's, as it is.
  return Schema.declare(isObject, { expected: "a JSON object", jsonSchema }).check(
    Schema.makeFilter((input: Params) => check(input))
  )
}

/** How a server's tool is named in the chat: `prefix` + its name. */
export const chatName = (prefix: string | undefined, mcpName: string): string => `${prefix ?? ""}${mcpName}`

/** The `_meta` key by which a server gives one tool's cap on results, in characters (Claude Code's). */
export const maxResultSizeKey = "anthropic/maxResultSizeChars"

/** The most a server's `anthropic/maxResultSizeChars` may raise a tool's cap to, unless the toolkit says otherwise: 500,000 characters, Claude Code's ceiling. */
export const defaultServerMaxResultChars = 500_000

/**
 * A tool's cap on its results: the toolkit's `maxResultChars`, unless the server gives the tool
 * `_meta["anthropic/maxResultSizeChars"]` (a whole number ≥ 0; anything else is ignored): one under
 * the toolkit's cap (default core's `ToolResult.defaultMaxChars`) is taken as it is, a higher one up
 * to `ceiling` (default `defaultServerMaxResultChars`; a ceiling at or under the toolkit's cap lets
 * no server raise it). `undefined` when neither gives one: the toolkit's or core's default applies.
 */
export const maxResultCharsOf = (
  tool: ServerTool,
  options: { readonly maxResultChars?: number | undefined; readonly ceiling?: number | undefined }
): number | undefined => {
  const meta = tool._meta
  const given = typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>)[maxResultSizeKey] : undefined
  if (!Tool.isMaxChars(given) || !Number.isFinite(given)) return options.maxResultChars
  const base = options.maxResultChars ?? ToolResult.defaultMaxChars
  return given <= base ? given : Math.max(base, Math.min(given, options.ceiling ?? defaultServerMaxResultChars))
}

/** Makes the chat-ts tool of a server's tool (its schema compiled with `validator`). */
export const make = (
  tool: ServerTool,
  options: {
    readonly server: string
    readonly prefix?: string | undefined
    readonly validator: jsonSchemaValidator
    /** The cap on this server's tools' results (see `McpToolkit.Options.maxResultChars`). */
    readonly maxResultChars?: number | undefined
    /** The most the server's metadata may set a tool's cap to (default `defaultServerMaxResultChars`). */
    readonly serverMaxResultChars?: number | undefined
    /** The cap on the bytes of images one call's result keeps (see `McpToolkit.Options.maxResultFileBytes`). */
    readonly maxResultFileBytes?: number | undefined
  }
): McpTool => {
  const maxResultChars = maxResultCharsOf(tool, { maxResultChars: options.maxResultChars, ceiling: options.serverMaxResultChars })
  const parameters = fromJsonSchema(declaredSchema(tool.inputSchema), options.validator)
  const annotations: Annotations = {
    title: tool.annotations?.title,
    readOnlyHint: tool.annotations?.readOnlyHint,
    destructiveHint: tool.annotations?.destructiveHint,
    idempotentHint: tool.annotations?.idempotentHint,
    openWorldHint: tool.annotations?.openWorldHint
  }
  return Tool.make(chatName(options.prefix, tool.name), {
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? tool.name,
    parameters,
    success: Result,
    failure: McpError.McpCallError,
    metadata: { server: options.server, mcpName: tool.name, title: tool.title ?? tool.annotations?.title, annotations },
    // The server's schema is sent as it is: strict mode would rewrite it, and servers' schemas rarely fit it.
    strict: false,
    splitFiles: imagesOf,
    splitFailureFiles: errorImagesOf,
    ...(maxResultChars === undefined ? {} : { maxResultChars }),
    ...(options.maxResultFileBytes === undefined ? {} : { maxResultFileBytes: options.maxResultFileBytes })
  })
}

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/

/** Whether a content block is an image with base64 data (what MCP's `image` content is). */
const isImageBlock = (block: unknown): block is { readonly type: "image"; readonly data: string; readonly mimeType: string } => {
  if (typeof block !== "object" || block === null) return false
  const { type, data, mimeType } = block as { type?: unknown; data?: unknown; mimeType?: unknown }
  return type === "image" && typeof mimeType === "string" && mimeType.toLowerCase().startsWith("image/") &&
    typeof data === "string" && data.length > 0 && data.length % 4 === 0 && base64Pattern.test(data)
}

/** `value` with every string equal to an image's data replaced by its mention (servers repeat content in `structuredContent`). */
const withoutData = (value: unknown, mentions: ReadonlyMap<string, string>): unknown => {
  if (typeof value === "string") return mentions.get(value) ?? value
  if (Array.isArray(value)) return value.map((item) => withoutData(item, mentions))
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) out[key] = withoutData(item, mentions)
  return out
}

/**
 * A result's images as files the model sees as images: each `image` block
 * keeps its place in `content` as `{ type: "image", mimeType, file }` (`file`:
 * its index among the result's files), without its base64 data, and the same
 * data repeated in `structuredContent` is replaced by a mention too.
 */
export const imagesOf = (result: Result): Tool.ResultFiles => {
  const files: Array<Messages.FilePart> = []
  const mentions = new Map<string, string>()
  const content = result.content.map((block) => {
    if (!isImageBlock(block)) return block
    const { data, ...rest } = block
    let index = files.findIndex((file) => file.data._tag === "Base64" && file.data.base64 === data)
    if (index === -1) {
      index = files.push(Messages.file({ mediaType: block.mimeType, base64: data })) - 1
      mentions.set(data, `[image: file ${index} of this result]`)
    }
    return { ...rest, file: index }
  })
  if (files.length === 0) return { result, files }
  return {
    result: result.structuredContent === undefined
      ? { content }
      : { content, structuredContent: withoutData(result.structuredContent, mentions) },
    files
  }
}

/**
 * An error result's images as files, the same way as `imagesOf` (an
 * `McpToolError`'s `content` keeps each image block's place, without its
 * data); other failures hold no files.
 */
export const errorImagesOf = (encoded: typeof McpError.McpCallError.Encoded): Tool.ResultFiles => {
  if (encoded._tag !== "McpToolError") return { result: encoded, files: [] }
  const split = imagesOf({ content: encoded.content })
  if (split.files.length === 0) return { result: encoded, files: [] }
  return { result: { ...encoded, content: (split.result as Result).content }, files: split.files }
}

/** The joined text content of a result. */
export const textOf = (content: ReadonlyArray<unknown>): string => textsOf(content).join("\n")

/** The texts of a result's `text` blocks. */
const textsOf = (content: ReadonlyArray<unknown>): ReadonlyArray<string> =>
  content.flatMap((block) =>
    typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text" &&
      typeof (block as { text?: unknown }).text === "string"
      ? [(block as { text: string }).text]
      : []
  )

/** Whether every leaf of `value` is a string found in `texts` (and there is at least one). */
const onlyRepeats = (value: unknown, texts: ReadonlySet<string>): boolean => {
  if (typeof value === "string") return texts.has(value)
  if (typeof value !== "object" || value === null) return false
  const items = Array.isArray(value) ? value : Object.values(value)
  return items.length > 0 && items.every((item) => onlyRepeats(item, texts))
}

/** Whether two plain JSON values are equal (objects whatever their keys' order). */
const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length &&
    ka.every((key) => Object.hasOwn(b, key) && jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
}

/** Whether a text block holds `structured` as JSON text (what the MCP spec asks servers to send beside it). */
const isSerialized = (text: string, structured: unknown): boolean => {
  const start = text.trimStart()[0]
  if (start !== "{" && start !== "[") return false
  try {
    return jsonEqual(toPlain(JSON.parse(text)), structured)
  } catch {
    return false
  }
}

/**
 * Whether `structuredContent` says nothing the text content does not: it is the JSON of a text block
 * (or of the joined text), or every value in it is the text of a block (or the joined text), as the
 * filesystem server's `{ content: <the file> }`. The model would read the same text twice.
 */
export const repeatsText = (content: ReadonlyArray<unknown>, structured: unknown): boolean => {
  const texts = textsOf(content)
  if (texts.length === 0) return false
  const all = new Set([...texts, texts.join("\n")])
  return onlyRepeats(structured, all) || [...all].some((text) => isSerialized(text, structured))
}

/**
 * A call's result as the model sees it: its content and structured content (left out when it only
 * repeats the text content, see `repeatsText`), or its `isError` as an `McpToolError`.
 */
export const toResult = (tool: string, result: CallToolResult): Result | McpError.McpToolError => {
  const content = toPlain(Array.isArray(result.content) ? result.content : []) as ReadonlyArray<unknown>
  if (result.isError === true) return new McpError.McpToolError({ tool, text: textOf(content), content })
  const structured = result.structuredContent === undefined ? undefined : toPlain(result.structuredContent)
  return typeof structured === "object" && structured !== null && !Array.isArray(structured) && !repeatsText(content, structured)
    ? { content, structuredContent: structured as Record<string, unknown> }
    : { content }
}
