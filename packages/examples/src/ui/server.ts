/**
 * The server of the `ui` example, composable: the React page (bundled from
 * `page.tsx` by esbuild when the server starts, no CDN) and its stylesheet,
 * the `useChat` endpoint of @chat-ts/ai-sdk-ui at `/api/chat`, and any
 * further routes given (other protocols' endpoints, a sign-in route), on one
 * `HttpRouter`, on 127.0.0.1.
 */
// #region imports
import { UiChat, UiHttp } from "@chat-ts/ai-sdk-ui"
import { type Chat, ConversationStore } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { build } from "esbuild"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"
// #endregion imports

/** The page's script: page.tsx and what it imports (React, `@ai-sdk/react`, `ai`) in one file. */
export const bundle: Effect.Effect<string> = Effect.promise(async () => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL("./page.tsx", import.meta.url))],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    minify: true,
    define: { "process.env.NODE_ENV": "\"production\"" },
    logLevel: "silent"
  })
  return result.outputFiles[0]!.text
})

const style = `body{font:15px system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:640px;margin:0 auto;padding:16px}h1{font-size:18px}
.message{background:#fff;border-radius:8px;padding:8px 12px;margin:8px 0;box-shadow:0 1px 2px #0002}
.message[data-role=user]{background:#e6f0ff}.reasoning{color:#667;font-style:italic}
.tool{border:1px solid #ccd;border-radius:6px;padding:8px;margin:6px 0}.state{color:#667;font-size:12px}
pre{white-space:pre-wrap;margin:4px 0;font-size:13px}.deadline,.decided{font-size:12px;color:#556}
.denied,.error{color:#a11}.output{color:#075}.decide{display:flex;flex-wrap:wrap;gap:6px}
.decide textarea{flex-basis:100%;height:2.5em}form{display:flex;gap:8px}form input{flex:1;padding:8px}
.status{font-size:12px;color:#889;margin:4px 0}.cancelled,.expired{color:#8a5a00}`

const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>chat-ts × useChat</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><link rel="stylesheet" href="/page.css"></head>
<body><div id="root"></div><script type="module" src="/page.js"></script></body></html>`

/** Only this server's script and style; no framing, no sniffing. */
const pageHeaders = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
}

/** The page, its script and its style as routes. */
export const pageRoutes = (script: string) =>
  Layer.mergeAll(
    HttpRouter.add("GET", "/", HttpServerResponse.text(html, { contentType: "text/html; charset=utf-8", headers: pageHeaders })),
    HttpRouter.add("GET", "/page.js", HttpServerResponse.text(script, { contentType: "text/javascript; charset=utf-8", headers: pageHeaders })),
    HttpRouter.add("GET", "/page.css", HttpServerResponse.text(style, { contentType: "text/css; charset=utf-8", headers: pageHeaders }))
  )

// #region serve
/** Serves the page and the `useChat` endpoint (and `routes`) on `port` (0: any free port); gives the base URL. */
export const serve = <R, Routes = never>(options: {
  readonly chat: Chat.Service<R>
  readonly store: ConversationStore.Service
  readonly approver: Approver.Service
  readonly port: number
  /** Further routes (other protocols' endpoints, a sign-in route); they may use the store and the approver. */
  readonly routes?: ReadonlyArray<Layer.Layer<never, never, Routes>>
}) =>
  Effect.gen(function*() {
    const script = yield* bundle
    const services = Layer.mergeAll(
      Layer.succeed(ConversationStore.ConversationStore, options.store),
      Layer.succeed(Approver.Approver, options.approver)
    )
    const endpoint = UiHttp.layer().pipe(Layer.provide(UiChat.layer({ chat: options.chat })))
    const routes = Layer.mergeAll(endpoint, pageRoutes(script), ...(options.routes ?? [])).pipe(Layer.provide(services))
    const server = HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: options.port, host: "127.0.0.1" }))
    )
    const context = yield* Layer.build(server)
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    return `http://127.0.0.1:${address._tag === "UnixPathAddress" ? options.port : address.port}`
  })
// #endregion serve
