/**
 * The inbox served over HTTP: the `InboxApi` endpoints (with their OpenAPI
 * document at `/openapi.json`), the server's events (`/api/events`, SSE) and
 * the web page (`/` and `/c/:id`), all on one `HttpRouter` (`effect/http`).
 *
 * Every route asks the `Approver` who is calling (none: 401). Decisions must
 * carry the CSRF token of that identity (`x-csrf-token`, given by
 * `/api/session` and written into the page) and are refused when the browser
 * says the request comes from another site.
 *
 * @since 0.1.0
 */
import * as Messages from "@chat-ts/core/Messages"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"
import * as Approver from "./Approver.js"
import * as Inbox from "./Inbox.js"
import * as InboxApi from "./InboxApi.js"
import * as InboxError from "./InboxError.js"
import * as Assets from "./internal/assets.js"
import * as Csrf from "./internal/csrf.js"
import * as Html from "./internal/html.js"

/** Settings of the HTTP layer. */
export interface Options {
  /** The key of the CSRF tokens (default: a random one per process; set one when several processes serve the page). */
  readonly csrfSecret?: Redacted.Redacted<string>
}

/** Headers on every page and asset: no framing, no sniffing, only this server's script and style, nothing cached. */
const pageHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

const identify = Effect.gen(function*() {
  const approver = yield* Approver.Approver
  const request = yield* HttpServerRequest.HttpServerRequest
  return yield* approver.identify(request)
})

/** The `Authentication` middleware, from the `Approver`. */
export const layerAuthentication: Layer.Layer<InboxApi.Authentication, never, Approver.Approver> = Layer.effect(
  InboxApi.Authentication,
  Effect.map(Approver.Approver, (approver) =>
    InboxApi.Authentication.of((httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const identity = yield* approver.identify(request)
        if (Option.isNone(identity)) return yield* new InboxError.Unauthorized({ message: "no identity: sign in first" })
        return yield* Effect.provideService(httpEffect, InboxApi.CurrentIdentity, identity.value)
      })))
)

/**
 * Refuses a decision whose body gives a key twice in one object. The payload
 * was decoded by `JSON.parse`, which keeps the last value: `{"amount":1,
 * "amount":1000000}` would run with 1000000 while the person (and the audit)
 * read 1. So the body as sent is read again with `Messages.parseJson`: a key
 * twice in the edited arguments is an `InvalidEdit` (422) saying where,
 * anywhere else a 400 like any malformed body, and so is a `"__proto__"` key
 * outside the edited arguments; nothing is stored either way.
 */
const refuseDuplicateKeys = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const text = yield* Effect.mapError(request.text, () => new HttpApiError.BadRequest({}))
    const parsed = Messages.parseJson(text)
    if (Result.isSuccess(parsed)) return
    // A "__proto__" key outside the edited arguments (the edit reports its own, 422): the payload's Schema would drop it
    // unseen, while another reader of the text might not; a 400 as on both UI endpoints.
    if (parsed.failure.includes(`"__proto__" key`) && !/^\$\.arguments[.[ ]/.test(parsed.failure)) return yield* new HttpApiError.BadRequest({})
    // Else only duplicate keys here: every other problem (nesting) is the payload's and the edit's to report.
    if (!parsed.failure.includes("appears twice")) return
    if (parsed.failure.includes(" in $.arguments")) {
      return yield* new InboxError.InvalidEdit({ message: "the edited arguments give a key twice", problems: [parsed.failure] })
    }
    return yield* new HttpApiError.BadRequest({})
  })

/** The checks of a change other than a decision (grants): same site, the CSRF token, each key once; then the `If-Match` version. */
const guardChange = (
  csrf: ReturnType<typeof Csrf.make>,
  identity: Approver.Identity,
  headers: { readonly "if-match"?: string | undefined; readonly "x-csrf-token"?: string | undefined; readonly "sec-fetch-site"?: string | undefined },
  request: Parameters<typeof refuseDuplicateKeys>[0]
) =>
  Effect.gen(function*() {
    const site = headers["sec-fetch-site"]
    if (site !== undefined && site !== "same-origin" && site !== "none") {
      return yield* new InboxError.Forbidden({ message: `a change from another site (${site}) is refused` })
    }
    if (!csrf.check(identity.id, headers["x-csrf-token"])) {
      return yield* new InboxError.Forbidden({ message: "missing or wrong CSRF token (x-csrf-token, from /api/session)" })
    }
    // A key given twice anywhere in a grant's body (its predicate included) is a 400 like any malformed body.
    yield* Effect.catchTag(refuseDuplicateKeys(request), "InvalidEdit", () => Effect.fail(new HttpApiError.BadRequest({})))
    return yield* Effect.fromResult(Inbox.parseIfMatch(headers["if-match"]))
  })

/** The handlers of the API endpoints. */
export const layerHandlers = (options: Options = {}) =>
  HttpApiBuilder.group(InboxApi.Api, "inbox", (handlers) =>
    Effect.gen(function*() {
      const inbox = yield* Inbox.Inbox
      const csrf = Csrf.make(options.csrfSecret)
      return handlers
        .handle("session", () =>
          Effect.map(InboxApi.CurrentIdentity, (identity) => new InboxApi.Session({ identity, csrfToken: csrf.token(identity.id) })))
        .handle("list", ({ query }) => Effect.flatMap(InboxApi.CurrentIdentity, (identity) => inbox.list(query, identity)))
        .handle("conversation", ({ params }) => Effect.flatMap(InboxApi.CurrentIdentity, (identity) => inbox.conversation(params.id, identity)))
        .handle("decide", ({ headers, params, payload, request }) =>
          Effect.gen(function*() {
            const identity = yield* InboxApi.CurrentIdentity
            const site = headers["sec-fetch-site"]
            if (site !== undefined && site !== "same-origin" && site !== "none") {
              return yield* new InboxError.Forbidden({ message: `a decision from another site (${site}) is refused` })
            }
            if (!csrf.check(identity.id, headers["x-csrf-token"])) {
              return yield* new InboxError.Forbidden({ message: "missing or wrong CSRF token (x-csrf-token, from /api/session)" })
            }
            yield* refuseDuplicateKeys(request)
            const ifMatch = yield* Effect.fromResult(Inbox.parseIfMatch(headers["if-match"]))
            return yield* inbox.decide({ identity, conversationId: params.id, callId: params.callId, decision: payload, ifMatch })
          }))
        .handle("grant", ({ headers, params, payload, request }) =>
          Effect.gen(function*() {
            const identity = yield* InboxApi.CurrentIdentity
            const ifMatch = yield* guardChange(csrf, identity, headers, request)
            return yield* inbox.grant({ identity, conversationId: params.id, grant: payload, ifMatch })
          }))
        .handle("revokeGrant", ({ headers, params, payload, request }) =>
          Effect.gen(function*() {
            const identity = yield* InboxApi.CurrentIdentity
            const ifMatch = yield* guardChange(csrf, identity, headers, request)
            return yield* inbox.revokeGrant({ identity, conversationId: params.id, grantId: params.grantId, reason: payload.reason, ifMatch })
          }))
    }))

const html = (body: string, status = 200) => HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers: pageHeaders })

/** The page, its assets and the events, as router routes. */
export const layerPage = (options: Options = {}): Layer.Layer<never, never, HttpRouter.HttpRouter | Approver.Approver | Inbox.Inbox> =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const inbox = yield* Inbox.Inbox
      const approver = yield* Approver.Approver
      const csrf = Csrf.make(options.csrfSecret)
      const withIdentity = <E, R>(
        f: (identity: Approver.Identity) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
      ) =>
        Effect.flatMap(
          Effect.provideService(identify, Approver.Approver, approver),
          Option.match({ onNone: () => Effect.succeed(html(Html.unauthorized, 401)), onSome: f })
        )
      const page = (identity: Approver.Identity, title: string, body: string, conversation?: string, status = 200) =>
        html(
          Html.layout({
            title,
            who: identity.name ?? identity.id,
            csrf: csrf.token(identity.id),
            body,
            ...(conversation === undefined ? {} : { conversation })
          }),
          status
        )
      const failed = (error: InboxError.StoreFailure) => Effect.succeed(html(`<h1>The store failed</h1><p>${Html.escape(error.message)}</p>`, 500))

      yield* router.add("GET", "/", withIdentity((identity) =>
        inbox.list({}, identity).pipe(
          Effect.map((pageOf) => page(identity, "Approvals inbox", Html.list(pageOf.items))),
          Effect.catchTags({ StoreFailure: failed, BadRequest: (error) => Effect.succeed(html(Html.escape(error.message), 400)) })
        )))
      yield* router.add("GET", "/c/:id", withIdentity((identity) =>
        Effect.flatMap(HttpRouter.params, (params) => {
          const id = params.id ?? ""
          return inbox.conversation(id, identity).pipe(
            Effect.map((view) => page(identity, `Conversation ${id}`, Html.detail(view), id)),
            Effect.catchTags({
              NotFound: () => Effect.succeed(page(identity, "Not found", Html.notFound(id), undefined, 404)),
              StoreFailure: failed
            })
          )
        })))
      yield* router.add("GET", "/inbox.js", Effect.succeed(HttpServerResponse.text(Assets.script, { contentType: "text/javascript; charset=utf-8", headers: pageHeaders })))
      yield* router.add("GET", "/inbox.css", Effect.succeed(HttpServerResponse.text(Assets.style, { contentType: "text/css; charset=utf-8", headers: pageHeaders })))
      yield* router.add("GET", "/api/events", withIdentity(() => {
        const encoder = new TextEncoder()
        const events = inbox.changes.pipe(Stream.map((change) => `event: change\ndata: ${JSON.stringify(change)}\n\n`))
        // A comment now and then keeps proxies from closing an idle stream.
        const keepAlive = Stream.fromEffectSchedule(Effect.succeed(": keep-alive\n\n"), Schedule.spaced("15 seconds"))
        const body = Stream.merge(Stream.make("retry: 2000\n\n"), Stream.merge(events, keepAlive)).pipe(Stream.map((text) => encoder.encode(text)))
        return Effect.succeed(HttpServerResponse.stream(body, {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
        }))
      }))
    }))

/** The API with its OpenAPI document at `/openapi.json`. */
export const layerApi = (options: Options = {}) =>
  HttpApiBuilder.layer(InboxApi.Api, { openapiPath: "/openapi.json" }).pipe(
    Layer.provide(layerHandlers(options)),
    Layer.provide(layerAuthentication)
  )

/**
 * Every route of the inbox (API, OpenAPI, events, page), for `HttpRouter.serve`. It needs the
 * `Inbox`, the `Approver` and what the platform's HTTP server provides.
 */
export const layer = (options: Options = {}) =>
  Layer.unwrap(Effect.sync(() => {
    // The page and the API must share the key: one random key for both when none is given.
    const shared = { ...options, csrfSecret: options.csrfSecret ?? Redacted.make(randomBytes(32).toString("base64url")) }
    return Layer.mergeAll(layerApi(shared), layerPage(shared))
  }))
