/**
 * The AG-UI endpoint over HTTP (`effect/http`): `POST` a `RunAgentInput` as
 * JSON, get the run's events as server-sent events (`text/event-stream`, one
 * `data:` line of JSON per event), what `@ag-ui/client`'s `HttpAgent` speaks.
 *
 * Before the stream starts, a refused request is answered with its status
 * and a `RUN_ERROR` event as the JSON body: a body that is not a
 * `RunAgentInput` (400: not JSON, a key given twice, `__proto__`, too large),
 * no identity (401), a request from another site (`Sec-Fetch-Site`, or,
 * without it, an `Origin` other than the endpoint's own host or
 * `allowedOrigins`), one the `Approver`, `access` or the call's decision
 * policy refuses (403), an unknown interrupt (404), a decision that comes too
 * late or a busy conversation (409; busy: retryable, with `Retry-After`), a
 * body that is not JSON (415), an edit that does not fit the tool (422). Once
 * it started, a failure is a `RUN_ERROR` event.
 *
 * @since 0.2.0
 */
import * as Messages from "@chat-ts/core/Messages"
import { Approver, CrossSite, WebHandler as Web } from "@chat-ts/inbox"
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as AgUi from "./AgUi.js"
import * as AgUiError from "./AgUiError.js"
import * as AgUiProtocol from "./AgUiProtocol.js"

/** Settings of the endpoint (the same names as `@chat-ts/ai-sdk-ui`'s `UiHttp.Options`). */
export interface Options {
  /** The route's path, for `layer` (default `/agent`). */
  readonly path?: HttpRouter.PathInput
  /** The largest body read (default 1 MiB, 1,048,576 bytes); a larger one is a 400. */
  readonly maxBodyBytes?: number
  /** @deprecated Use `maxBodyBytes`; read when it is not given. */
  readonly maxBodySize?: ByteSize.ByteSize
  /**
   * Origins (`https://app.example.com`) besides the endpoint's own whose pages may call it with the
   * browser's credentials (you answer their CORS preflight yourself). Default: none.
   */
  readonly allowedOrigins?: ReadonlyArray<string>
}

/** The largest body read by default: 1 MiB. */
export const defaultMaxBodyBytes = 1024 * 1024

const decodeInput = Schema.decodeUnknownResult(AgUiProtocol.RunAgentInput)

const refusal = (error: AgUiError.Refused) =>
  HttpServerResponse.jsonUnsafe(AgUi.refusalBody(error), {
    status: error.status,
    headers: { "cache-control": "no-store", ...(error.retryAfter === undefined ? {} : { "retry-after": String(error.retryAfter) }) }
  })

const encoder = new TextEncoder()

/** The events as a server-sent event stream. */
const sse = (events: Stream.Stream<AgUiProtocol.Event>) =>
  HttpServerResponse.stream(events.pipe(Stream.map((event) => encoder.encode(`data: ${JSON.stringify(event)}\n\n`))), {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
  })

/** The body read as a `RunAgentInput` (the JSON read as chat-ts reads edits: a key twice or a `__proto__` key is refused). */
const readInput = (request: HttpServerRequest.HttpServerRequest, options: Options) =>
  Effect.gen(function*() {
    const type = request.headers["content-type"] ?? ""
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      return yield* AgUiError.refuse("unsupported_media_type", "send the RunAgentInput as application/json")
    }
    const text = yield* request.text.pipe(
      Effect.provideService(
        HttpIncomingMessage.MaxBodySize,
        options.maxBodyBytes !== undefined ? ByteSize.bytes(options.maxBodyBytes) : options.maxBodySize ?? ByteSize.bytes(defaultMaxBodyBytes)
      ),
      Effect.mapError(() => AgUiError.refuse("bad_request", "the body could not be read (too large?)"))
    )
    const json = Messages.parseJson(text)
    if (Result.isFailure(json)) return yield* AgUiError.refuse("bad_request", `the body is not accepted JSON: ${json.failure}`)
    return yield* Effect.fromResult(decodeInput(json.success)).pipe(
      Effect.mapError((issue) => AgUiError.refuse("bad_request", `the body is not a RunAgentInput: ${String(issue)}`.slice(0, 2_000)))
    )
  })

/** The endpoint as an `effect/http` handler: POST a `RunAgentInput`, get its events. */
export const handler = (options: Options = {}): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | AgUi.AgUi | Approver.Approver
> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const agent = yield* AgUi.AgUi
    const approver = yield* Approver.Approver
    const foreign = CrossSite.check(request, options.allowedOrigins)
    if (foreign !== undefined) return yield* AgUiError.refuse("forbidden", foreign)
    const identity = yield* approver.identify(request)
    if (Option.isNone(identity)) return yield* AgUiError.refuse("unauthorized", "no identity: sign in first")
    const input = yield* readInput(request, options)
    return sse(yield* agent.run(input, identity.value))
  }).pipe(Effect.catchTag("Refused", (error) => Effect.succeed(refusal(error))))

/** The endpoint as a route (`POST path`, default `/agent`) of an `HttpRouter`. */
export const layer = (options: Options = {}): Layer.Layer<
  never,
  never,
  HttpRouter.HttpRouter | AgUi.AgUi | Approver.Approver
> =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const services = yield* Effect.context<AgUi.AgUi | Approver.Approver>()
      yield* router.add("POST", options.path ?? "/agent", Effect.provideContext(handler(options), services))
    })
  )

/** The endpoint as a `(Request) => Promise<Response>` function, with the agent and the approver in context. */
export const webHandler = (
  options: Options = {}
): Effect.Effect<(request: Request) => Promise<Response>, never, AgUi.AgUi | Approver.Approver> =>
  Web.fromHttp((request) => Effect.provideService(handler(options), HttpServerRequest.HttpServerRequest, request))

/** A `(Request) => Promise<Response>` function that owns its services (`AgUi` and the `Approver`), and how to release them (`dispose` ends the runs still going). */
export type WebHandler = Web.WebHandler

/**
 * The endpoint as a `(Request) => Promise<Response>` function over `services` (`AgUi` and the
 * `Approver`), built once on first use and kept for every later request (make it once per process,
 * at module level, not per request) until `dispose`. The same shape as `@chat-ts/ai-sdk-ui`'s
 * `UiHttp.toWebHandler` and effect's `HttpRouter.toWebHandler`.
 */
export const toWebHandler = <E>(
  services: Layer.Layer<AgUi.AgUi | Approver.Approver, E>,
  options: Options = {}
): WebHandler => Web.make("AgUiHttp.toWebHandler", services, webHandler(options))
