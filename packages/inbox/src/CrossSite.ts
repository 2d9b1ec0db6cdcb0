/**
 * The cross-site check of a request that may carry a browser's ambient
 * credentials (a session cookie). The browser's `Sec-Fetch-Site` is believed
 * when it is sent; a browser that sends none (older ones, some embedded
 * views) still sends `Origin` on every cross-origin `POST`, which must then
 * name the endpoint's own host or one of the allowed origins. A request with
 * neither header is not a browser's cross-site request (every browser sends
 * one of them on a cross-site `POST`): it is let through to the `Approver`,
 * which must not rest on anything such a client can forge. Used by both UI
 * endpoints (`@chat-ts/ai-sdk-ui`, `@chat-ts/ag-ui`), and by any endpoint of
 * yours that a session cookie reaches.
 *
 * @since 0.3.0
 */
import type * as HttpServerRequest from "effect/http/HttpServerRequest"

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).host.toLowerCase()
  } catch {
    return undefined
  }
}

/** Why `request` is refused as coming from another site, or `undefined` when it is not. */
export const check = (
  request: HttpServerRequest.HttpServerRequest,
  allowedOrigins: ReadonlyArray<string> = []
): string | undefined => {
  const origin = request.headers["origin"]
  if (origin !== undefined && allowedOrigins.includes(origin)) return undefined
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined) {
    return site === "same-origin" || site === "none" ? undefined : `a request from another site (${site.slice(0, 40)}) is refused`
  }
  if (origin === undefined) return undefined
  const own = request.headers["host"]?.toLowerCase() ?? hostOf(request.originalUrl)
  const from = hostOf(origin)
  if (own !== undefined && from !== undefined && from === own) return undefined
  return `a request from another origin (${origin.slice(0, 100)}) is refused`
}
