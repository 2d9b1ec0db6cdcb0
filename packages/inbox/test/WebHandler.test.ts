import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { WebHandler } from "../src/index.js"

/** A service the endpoint answers with. */
class Greeting extends Context.Service<Greeting, { readonly text: string }>()("test/Greeting") {}

/** Answers `<greeting> <method> <path>` with a header of its own. */
const greet = WebHandler.fromHttp((request) =>
  Effect.gen(function*() {
    const greeting = yield* Greeting
    return HttpServerResponse.text(`${greeting.text} ${request.method} ${new URL(request.url, "http://x").pathname}`, {
      status: 201,
      headers: { "x-greeted": "yes" }
    })
  }))

/** A `Greeting` layer that counts how often it is built and released. */
const counted = () => {
  const counts = { built: 0, released: 0 }
  const layer = Layer.effect(
    Greeting,
    Effect.acquireRelease(Effect.sync(() => (counts.built++, { text: "hello" })), () => Effect.sync(() => counts.released++))
  )
  return { counts, layer }
}

describe("WebHandler.fromHttp", () => {
  it.effect("answers a web Request with the effect's response, over the services in context", () =>
    Effect.gen(function*() {
      const handle = yield* greet
      const response = yield* Effect.promise(() => handle(new Request("http://127.0.0.1/api/hi", { method: "POST" })))
      expect(response.status).toBe(201)
      expect(response.headers.get("x-greeted")).toBe("yes")
      expect(yield* Effect.promise(() => response.text())).toBe("hello POST /api/hi")
    }).pipe(Effect.provideService(Greeting, { text: "hello" })))
})

describe("WebHandler.make", () => {
  it.effect("builds the services once, on the first request, and keeps them for every later one", () =>
    Effect.gen(function*() {
      const { counts, layer } = counted()
      const web = WebHandler.make("Test.toWebHandler", layer, greet)
      expect(counts.built).toBe(0)
      for (const path of ["/a", "/b", "/c"]) {
        const response = yield* Effect.promise(() => web.handler(new Request(`http://127.0.0.1${path}`)))
        expect(yield* Effect.promise(() => response.text())).toBe(`hello GET ${path}`)
      }
      expect(counts).toStrictEqual({ built: 1, released: 0 })
      yield* Effect.promise(web.dispose)
      expect(counts).toStrictEqual({ built: 1, released: 1 })
    }))

  it.effect("after dispose a request is refused at once, naming the handler; dispose may be called twice", () =>
    Effect.gen(function*() {
      const { counts, layer } = counted()
      const web = WebHandler.make("Test.toWebHandler", layer, greet)
      yield* Effect.promise(() => web.handler(new Request("http://127.0.0.1/a")))
      yield* Effect.promise(web.dispose)
      const after = yield* Effect.promise(() =>
        web.handler(new Request("http://127.0.0.1/b")).then((response) => `answered ${response.status}`, (error: Error) => error.message)
      )
      expect(after).toBe("Test.toWebHandler: the handler was disposed; make a new one to answer requests")
      yield* Effect.promise(web.dispose)
      expect(counts).toStrictEqual({ built: 1, released: 1 })
    }))
})
