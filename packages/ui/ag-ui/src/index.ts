/**
 * @chat-ts/ag-ui: serve chat-ts turns to AG-UI clients (`@ag-ui/client`,
 * CopilotKit): AG-UI 1.x events over SSE, paused calls as interrupts, resumes
 * decided against the store.
 *
 * @since 0.2.0
 */

/** The agent: runs a turn of a stored conversation as AG-UI events. */
export * as AgUi from "./AgUi.js"

/** The refusals of the endpoint, with their codes and HTTP statuses. */
export * as AgUiError from "./AgUiError.js"

/** The endpoint over HTTP: an `effect/http` handler, a route, a `Request -> Response` function. */
export * as AgUiHttp from "./AgUiHttp.js"

/** What chat-ts reads and writes of AG-UI: the input, the interrupts' answer, the metadata (types for clients too). */
export * as AgUiProtocol from "./AgUiProtocol.js"
