/**
 * The AG-UI endpoint over HTTP (`effect/http`): `POST` a `RunAgentInput` as
 * JSON, get the run's events as server-sent events (`text/event-stream`, one
 * `data:` line of JSON per event), what `@ag-ui/client`'s `HttpAgent` speaks.
 *
 * Before the stream starts, a refused request is answered with its status
 * and a `RUN_ERROR` event as the JSON body: a body that is not a
 * `RunAgentInput` (400: not JSON, a key given twice, `__proto__`, too large),
 * no identity (401), a request from another site, one the `Approver` or the
 * call's decision policy refuses (403), an unknown interrupt (404), a decision that comes too late or
 * a busy conversation (409), a body that is not JSON (415), an edit that does
 * not fit the tool (422). Once it started, a failure is a `RUN_ERROR` event.
 *
 * @since 0.2.0
 */
import * as Messages from "@chat-ts/core/Messages"
import { Approver } from "@chat-ts/inbox"
import * as ByteSize from "effect/ByteSize"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
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

/** Settings of the endpoint. */
export interface Options {
  /** The largest body read (default 1 MB); a larger one is a 400. */
  readonly maxBodySize?: ByteSize.ByteSize
}

const decodeInput = Schema.decodeUnknownResult(AgUiProtocol.RunAgentInput)

const refusal = (error: AgUiError.Refused) =>
  HttpServerResponse.jsonUnsafe(AgUi.refusalBody(error), { status: error.status, headers: { "cache-control": "no-store" } })

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
      Effect.provideService(HttpIncomingMessage.MaxBodySize, options.maxBodySize ?? ByteSize.megabytes(1)),
      Effect.mapError(() => AgUiError.refuse("bad_request", "the body could not be read (too large?)"))
    )
    const json = Messages.parseJson(text)
    if (Result.isFailure(json)) return yield* AgUiError.refuse("bad_request", `the body is not accepted JSON: ${json.failure}`)
    return yield* Effect.fromResult(decodeInput(json.success)).pipe(
      Effect.mapError((issue) => AgUiError.refuse("bad_request", `the body is not a RunAgentInput: ${String(issue)}`.slice(0, 2_000)))
    )
  })

/** A request the browser says comes from another site (a forged cross-site request riding a cookie session). */
const crossSite = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const site = request.headers["sec-fetch-site"]
  return site !== undefined && site !== "same-origin" && site !== "none"
}

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
    if (crossSite(request)) return yield* AgUiError.refuse("forbidden", "a run from another site is refused")
    const identity = yield* approver.identify(request)
    if (Option.isNone(identity)) return yield* AgUiError.refuse("unauthorized", "no identity: sign in first")
    const input = yield* readInput(request, options)
    return sse(yield* agent.run(input, identity.value))
  }).pipe(Effect.catchTag("Refused", (error) => Effect.succeed(refusal(error))))

/** The endpoint as a route (`POST path`, default `/agent`) of an `HttpRouter`. */
export const layer = (options: Options & { readonly path?: HttpRouter.PathInput } = {}): Layer.Layer<
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

/**
 * The endpoint as a plain `(request: Request) => Promise<Response>` function (a Next.js route handler,
 * Deno, Bun, a Worker), given the agent and the approver (e.g. from a `ManagedRuntime` or `Layer.build`).
 */
export const toWebHandler = (
  context: Context.Context<AgUi.AgUi | Approver.Approver>,
  options: Options = {}
): (request: Request) => Promise<Response> => {
  const web = HttpEffect.toWebHandler(Effect.provideContext(handler(options), context))
  return (request) => web(request)
}
