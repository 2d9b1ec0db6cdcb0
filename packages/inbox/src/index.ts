/**
 * @chat-ts/inbox: an approvals inbox for chat-ts, an HTTP API and a web page
 * where people approve, edit or reject paused tool calls.
 *
 * @since 0.1.0
 */

/** Who may decide: the service the application provides. */
export * as Approver from "./Approver.js"

/** Whether a request comes from another site (`Sec-Fetch-Site`, else `Origin`): the UI endpoints' check. */
export * as CrossSite from "./CrossSite.js"

/** The inbox service: pending calls, conversations, decisions. */
export * as Inbox from "./Inbox.js"

/** The HTTP API, declared with `HttpApi`. */
export * as InboxApi from "./InboxApi.js"

/** The errors of the API, with their HTTP statuses. */
export * as InboxError from "./InboxError.js"

/** The API, the events and the page on one router. */
export * as InboxHttp from "./InboxHttp.js"

/** An endpoint as a `(Request) => Promise<Response>` function, and one that owns its services: the UI endpoints' `toWebHandler`. */
export * as WebHandler from "./WebHandler.js"

/** A notifier that POSTs signed JSON to a URL, and `verify` for the receiver. */
export * as WebhookNotifier from "./WebhookNotifier.js"
