/**
 * The typed errors of `@chat-ts/mcp`: connecting to a server and listing its
 * tools, and the failures of one tool call (what the model sees when a call
 * fails). A call that fails is never retried by this package.
 *
 * @since 0.1.0
 */
import * as Messages from "@chat-ts/core/Messages"
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

/**
 * The call took longer than its timeout. We asked the server to stop it (`notifications/cancelled`,
 * or `tasks/cancel` for a task), but cancelling is a request: the server may have finished the call
 * anyway, so its outcome is unknown (`outcome: "unknown"`, and `detail` says so to the model).
 * `outcome` and `detail` are absent in documents written by 0.1.
 */
export class McpCallTimeout extends Schema.TaggedError<McpCallTimeout>("@chat-ts/mcp/McpCallTimeout")("McpCallTimeout", {
  tool: Schema.String,
  timeoutMillis: Schema.Number,
  outcome: Schema.optional(Schema.Literal("unknown")),
  detail: Schema.optional(Schema.String)
}) {
  override get message() {
    return this.detail ?? timeoutDetail(this.tool, this.timeoutMillis)
  }
}

/** What a timed-out call says: no answer in time, cancellation requested, outcome unknown. */
const timeoutDetail = (tool: string, timeoutMillis: number): string =>
  `MCP tool '${tool}' did not answer within ${timeoutMillis} ms. Its cancellation was requested, but the server ` +
  `may have finished the call anyway: its outcome is unknown (check before calling it again).`

/** The error of a call to `tool` that did not answer within `timeoutMillis`: its outcome is unknown. */
export const timedOut = (tool: string, timeoutMillis: number): McpCallTimeout =>
  new McpCallTimeout({ tool, timeoutMillis, outcome: "unknown", detail: timeoutDetail(tool, timeoutMillis) })

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

/** An answer to an elicitation request that does not match the server's requested schema (nothing was sent). */
export class InvalidElicitationAnswer extends Schema.TaggedError<InvalidElicitationAnswer>("@chat-ts/mcp/InvalidElicitationAnswer")(
  "InvalidElicitationAnswer",
  { id: Schema.String, detail: Schema.String }
) {
  override get message() {
    return `The answer to elicitation request ${this.id} does not match the server's schema: ${this.detail}`
  }
}

/** An elicitation request or sampling approval that is not pending any more (answered, past its deadline, or withdrawn). */
export class RequestNotPending extends Schema.TaggedError<RequestNotPending>("@chat-ts/mcp/RequestNotPending")("RequestNotPending", {
  id: Schema.String
}) {
  override get message() {
    return `Request ${this.id} is not pending any more (answered, past its deadline, or withdrawn by the server).`
  }
}
