/**
 * `@chat-ts/ai-sdk-provider`: the AI SDK's tools (and, beside them, its models) for chat-ts.
 *
 * @since 0.2.0
 */

/** AI SDK tools (`tool({ inputSchema, execute, needsApproval })`) as a chat-ts `Toolkit`. */
export * as AiSdkToolkit from "./AiSdkToolkit.js"
