/**
 * @chat-ts/mcp: the tools of any Model Context Protocol server as a chat-ts
 * toolkit, decided per call by strategies like your own tools.
 *
 * @since 0.1.0
 */

export * as McpChat from "./McpChat.js"
export * as McpElicitation from "./McpElicitation.js"
export * as McpError from "./McpError.js"
export * as McpSampling from "./McpSampling.js"
export * as McpStrategy from "./McpStrategy.js"
export * as McpTool from "./McpTool.js"
export * as McpToolkit from "./McpToolkit.js"
