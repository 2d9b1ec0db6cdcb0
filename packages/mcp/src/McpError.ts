/**
 * The typed errors of `@chat-ts/mcp`: connecting to a server and listing its
 * tools, and the failures of one tool call (what the model sees when a call
 * fails). A call that fails is never retried by this package.
 *
 * @since 0.1.0
 */
import { Messages } from "@chat-ts/core"
import * as Schema from "effect/Schema"

/**
 * The server could not be started, reached, initialised, or its tools listed.
 * Raised in a turn (listing the tools again after a change), it carries the
 * turn's latest messages when it already ran calls: resume from them.
 */
export class McpConnectError extends Schema.TaggedError<McpConnectError>("@chat-ts/mcp/McpConnectError")(
  "McpConnectError",
  {
    server: Schema.String,
    detail: Schema.String,
    messages: Schema.optional(Messages.Messages)
  }
) {}

/** The server ran the tool and reported an error (`isError: true`); `text` joins its text content. */
export class McpToolError extends Schema.TaggedError<McpToolError>("@chat-ts/mcp/McpToolError")("McpToolError", {
  tool: Schema.String,
  text: Schema.String,
  content: Schema.Array(Schema.Unknown)
}) {}

/** The call took longer than its timeout: it was cancelled on the server (`notifications/cancelled`). */
export class McpCallTimeout extends Schema.TaggedError<McpCallTimeout>("@chat-ts/mcp/McpCallTimeout")("McpCallTimeout", {
  tool: Schema.String,
  timeoutMillis: Schema.Number
}) {}

/** The connection closed (the server crashed or exited) before the call answered: its outcome is unknown. */
export class McpServerClosed extends Schema.TaggedError<McpServerClosed>("@chat-ts/mcp/McpServerClosed")("McpServerClosed", {
  server: Schema.String,
  tool: Schema.String,
  detail: Schema.String
}) {}

/** The server answered the request with a protocol error (unknown tool, invalid params, internal error…). */
export class McpRequestError extends Schema.TaggedError<McpRequestError>("@chat-ts/mcp/McpRequestError")("McpRequestError", {
  tool: Schema.String,
  code: Schema.Number,
  detail: Schema.String
}) {}

/** How one MCP tool call fails: the failure schema of every MCP tool. */
export const McpCallError = Schema.Union([McpToolError, McpCallTimeout, McpServerClosed, McpRequestError])

/** How one MCP tool call fails. */
export type McpCallError = typeof McpCallError.Type
