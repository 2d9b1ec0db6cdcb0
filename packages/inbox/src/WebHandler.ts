/**
 * An endpoint as a `(Request) => Promise<Response>` function (Next.js route
 * handlers, Bun, Deno…): `fromHttp` answers web requests with an effect's
 * `HttpServerResponse` over the services in context, and `make` gives a
 * function that owns its services, built once on first use and kept until
 * `dispose` (the shape of effect's own `HttpRouter.toWebHandler`). Used by
 * both UI endpoints' `webHandler` and `toWebHandler` (`@chat-ts/ai-sdk-ui`,
 * `@chat-ts/ag-ui`), which depend on this package already for the `Approver`
 * and `CrossSite`; usable for any endpoint of yours.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"

/** A `(Request) => Promise<Response>` function that owns its services, and how to release them. */
export interface WebHandler {
  /** Answers one request (a Next.js route handler: `export const POST = handler`). */
  readonly handler: (request: Request) => Promise<Response>
  /** Ends the work still running and releases the services (on shutdown); a later request is refused at once (the promise rejects, saying so). */
  readonly dispose: () => Promise<void>
}

/** `respond` as a `(Request) => Promise<Response>` function, with the services `R` it needs taken from the context. */
export const fromHttp = <R>(
  respond: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
): Effect.Effect<(request: Request) => Promise<Response>, never, R> =>
  Effect.map(Effect.context<R>(), (context) => (request: Request) =>
    Effect.runPromise(
      respond(HttpServerRequest.fromWeb(request)).pipe(
        Effect.map((response) => HttpServerResponse.toWeb(response, { context })),
        Effect.provideContext(context)
      )
    ))

/**
 * A `WebHandler` over `services`: the function `webHandler` makes is built in their runtime once, on
 * the first request, and kept for every later one (make it once per process, at module level, not
 * per request) until `dispose`. `name` names it in the error a request after `dispose` is refused with.
 */
export const make = <R, E>(
  name: string,
  services: Layer.Layer<R, E>,
  webHandler: Effect.Effect<(request: Request) => Promise<Response>, never, R>
): WebHandler => {
  const runtime = ManagedRuntime.make(services)
  let made: Promise<(request: Request) => Promise<Response>> | undefined
  let disposed = false
  return {
    // After dispose the services are released: a request is refused at once (it would hang on, or run over, released services).
    handler: (request) =>
      disposed
        ? Promise.reject(new Error(`${name}: the handler was disposed; make a new one to answer requests`))
        : (made ??= runtime.runPromise(webHandler)).then((handle) => handle(request)),
    dispose: () => {
      disposed = true
      return runtime.dispose()
    }
  }
}
