/**
 * The endpoint `useChat` posts to, as an `effect/http` route (`layer`, for
 * `HttpRouter.serve`) and as a plain `(Request) => Promise<Response>`
 * function for route handlers of other frameworks (`webHandler`).
 *
 * Every request asks the `Approver` who is calling (none: 401); its
 * `authorize` decides each approval (403), and the identity's id is recorded
 * on the decided call. A request must be `application/json` (415: a
 * cross-site form cannot send it without a CORS preflight) and is refused
 * when the browser says it comes from another site (`Sec-Fetch-Site`, or,
 * without it, an `Origin` other than the endpoint's own host or
 * `allowedOrigins`), so a session cookie alone cannot decide a call from
 * another page. A refusal is a JSON body `{ _tag, message, … }` with its
 * status (a `Busy` one also `Retry-After`); an accepted request is the UI
 * message stream.
 * A `GET ?id=<chat id>` on the same path (`history`) gives the stored
 * conversation as `useChat`'s initial messages, for a page that starts again
 * (a reload), under the same identity, `access` and site checks.
 *
 * @since 0.2.0
 */
import { Approver, CrossSite, WebHandler as Web } from "@chat-ts/inbox"
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as UiChat from "./UiChat.js"
import * as UiError from "./UiError.js"
import * as UiMessageChunk from "./UiMessageChunk.js"
import * as UiRequest from "./UiRequest.js"

/** Settings of the endpoint (the same names as `@chat-ts/ag-ui`'s `AgUiHttp.Options`). */
export interface Options {
  /** The route's path (default `/api/chat`, where `useChat` posts by default). */
  readonly path?: HttpRouter.PathInput
  /** The largest body read (default 1 MiB, 1,048,576 bytes; larger: 400): the client sends its whole history, of which only the last message is read. */
  readonly maxBodyBytes?: number
  /**
   * Origins (`https://app.example.com`) besides the endpoint's own whose pages may call it with the
   * browser's credentials (you answer their CORS preflight yourself). Default: none.
   */
  readonly allowedOrigins?: ReadonlyArray<string>
}

/** The headers of every JSON answer (a load, a refusal): never cached, never read as anything but JSON. */
const answerHeaders = { "cache-control": "no-store", "x-content-type-options": "nosniff" } as const

const refuse = (error: UiError.UiError): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(error.toJSON(), {
    status: UiError.statusOf(error),
    headers: {
      ...answerHeaders,
      ...(error._tag === "Conflict" && error.retryAfter !== undefined ? { "retry-after": String(error.retryAfter) } : {})
    }
  })

/** A request that died on the server (a defect: a store or service that threw): logged, answered 500 `StoreFailure` without its detail. */
const died = (defect: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.as(
    Effect.logError("@chat-ts/ai-sdk-ui: a request died", defect),
    refuse(new UiError.StoreFailure({ message: "the request failed on the server: nothing was stored or run; try again later" }))
  )

const checkOrigin = (request: HttpServerRequest.HttpServerRequest, options: Options): Effect.Effect<void, UiError.UiError> => {
  const foreign = CrossSite.check(request, options.allowedOrigins)
  if (foreign !== undefined) return Effect.fail(new UiError.Forbidden({ message: foreign }))
  const type = request.headers["content-type"] ?? ""
  if (!/^application\/json\s*(;|$)/i.test(type)) return Effect.fail(new UiError.UnsupportedMediaType({ message: "the body must be application/json" }))
  return Effect.void
}

/** Answers one request: the UI message stream of the turn it asks for, or a refusal. */
export const handle = (
  request: HttpServerRequest.HttpServerRequest,
  options: Options = {}
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, UiChat.UiChat | Approver.Approver> =>
  Effect.gen(function*() {
    if (request.method !== "POST") return yield* new UiError.BadRequest({ message: "POST the request of useChat" })
    yield* checkOrigin(request, options)
    const approver = yield* Approver.Approver
    const identity = yield* approver.identify(request)
    if (Option.isNone(identity)) return yield* new UiError.Unauthorized({ message: "no identity: sign in first" })
    const text = yield* request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(options.maxBodyBytes ?? 1024 * 1024)),
      Effect.mapError(() => new UiError.BadRequest({ message: "the body could not be read (too large?)" }))
    )
    const input = yield* Effect.fromResult(UiRequest.parse(text))
    const service = yield* UiChat.UiChat
    const chunks = yield* service.run(input, identity.value)
    const encoder = new TextEncoder()
    const body = Stream.concat(Stream.map(chunks, UiMessageChunk.toSse), Stream.make(UiMessageChunk.done)).pipe(
      Stream.map((sse) => encoder.encode(sse))
    )
    return HttpServerResponse.stream(body, { headers: UiMessageChunk.headers })
  }).pipe(Effect.catch((error) => Effect.succeed(refuse(error))), Effect.catchDefect(died))

/**
 * Answers a page loading a conversation, `GET <path>?id=<chat id>`: the stored conversation as
 * `useChat`'s initial messages (`UiHistory.History`, JSON), under the same checks as a post (another
 * site, by `Sec-Fetch-Site` or without it `Origin`: 403, no identity: 401, `access`: 403). Nothing is
 * stored or run.
 */
export const history = (
  request: HttpServerRequest.HttpServerRequest,
  options: Options = {}
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, UiChat.UiChat | Approver.Approver> =>
  Effect.gen(function*() {
    if (request.method !== "GET" && request.method !== "HEAD") return yield* new UiError.BadRequest({ message: "GET the stored conversation" })
    const foreign = CrossSite.check(request, options.allowedOrigins)
    if (foreign !== undefined) return yield* new UiError.Forbidden({ message: foreign })
    const approver = yield* Approver.Approver
    const identity = yield* approver.identify(request)
    if (Option.isNone(identity)) return yield* new UiError.Unauthorized({ message: "no identity: sign in first" })
    // One `id`, exactly: with two, a proxy or log reading the other would name another conversation than the one loaded.
    const ids = new URL(request.url, "http://localhost").searchParams.getAll("id")
    const id = ids[0] ?? ""
    if (ids.length !== 1 || id === "" || id.length > UiRequest.limits.id) {
      return yield* new UiError.BadRequest({ message: `name the conversation once: ?id=<chat id> (1 to ${UiRequest.limits.id} characters)` })
    }
    const service = yield* UiChat.UiChat
    const loaded = yield* service.history(id, identity.value)
    return HttpServerResponse.jsonUnsafe(loaded, { headers: answerHeaders })
  }).pipe(
    Effect.catch((error) => Effect.succeed(refuse(error))),
    Effect.catchDefect(died),
    // A `HEAD` is answered as the `GET`, its status and headers, without the body.
    Effect.map((response) =>
      request.method === "HEAD"
        ? HttpServerResponse.empty({ status: response.status, headers: { ...response.headers, "content-type": "application/json" } })
        : response
    )
  )

/** The endpoint as routes, for `HttpRouter.serve`: `POST` a `useChat` request, `GET ?id=` (or `HEAD`) a stored conversation (it needs `UiChat` and the `Approver`). */
export const layer = (options: Options = {}): Layer.Layer<never, never, HttpRouter.HttpRouter | UiChat.UiChat | Approver.Approver> =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const context = yield* Effect.context<UiChat.UiChat | Approver.Approver>()
      yield* router.add("POST", options.path ?? "/api/chat", (request) => Effect.provide(handle(request, options), context))
      yield* router.add("GET", options.path ?? "/api/chat", (request) => Effect.provide(history(request, options), context))
      // A `HEAD` finds the `GET` route (effect's router), and `history` answers it without a body.
    }))

/** The endpoint as a `(Request) => Promise<Response>` function (Next.js route handlers, Bun, Deno…), with the services in context: a `GET` (or `HEAD`) is `history`, anything else `handle`. */
export const webHandler = (
  options: Options = {}
): Effect.Effect<(request: Request) => Promise<Response>, never, UiChat.UiChat | Approver.Approver> =>
  Web.fromHttp((request) => request.method === "GET" || request.method === "HEAD" ? history(request, options) : handle(request, options))

/** A `(Request) => Promise<Response>` function that owns its services (`UiChat` and the `Approver`), and how to release them (`dispose` ends the turns still running). */
export type WebHandler = Web.WebHandler

/**
 * The endpoint as a `(Request) => Promise<Response>` function over `services` (`UiChat` and the
 * `Approver`), built once on first use and kept for every later request (make it once per
 * process, at module level, not per request): turns run in its runtime until `dispose`. The same
 * shape as `@chat-ts/ag-ui`'s `AgUiHttp.toWebHandler` and effect's `HttpRouter.toWebHandler`.
 */
export const toWebHandler = <E>(
  services: Layer.Layer<UiChat.UiChat | Approver.Approver, E>,
  options: Options = {}
): WebHandler => Web.make("UiHttp.toWebHandler", services, webHandler(options))
