/**
 * @chat-ts/ai-sdk-ui: chat-ts turns served to the AI SDK's `useChat` as the
 * UI message stream, with approvals decided in the browser and checked
 * against the stored conversation.
 *
 * @since 0.2.0
 */

/** The chunks of the UI message stream, and the data parts and metadata chat-ts adds. */
export * as UiMessageChunk from "./UiMessageChunk.js"

/** The request `useChat` sends, read for what it asks now. */
export * as UiRequest from "./UiRequest.js"

/** The errors of the endpoint, with their HTTP statuses. */
export * as UiError from "./UiError.js"

/** The stored conversation as `useChat`'s initial messages (what a page loads after a reload). */
export * as UiHistory from "./UiHistory.js"

/** The service: checks a request against the store and streams the turn. */
export * as UiChat from "./UiChat.js"

/** The endpoint: an `effect/http` route and a `Request -> Response` function. */
export * as UiHttp from "./UiHttp.js"
