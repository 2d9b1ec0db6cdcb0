/**
 * With `GEMINI_API_KEY` (or `GOOGLE_API_KEY`) set and no `OPENAI_API_KEY`,
 * the examples and the demo talk to Gemini through `@chat-ts/google`. Here
 * "Gemini" is a local server answering generateContent, so the wiring (key,
 * base URL, model name) is checked without a network.
 */
import { GoogleDefaults } from "@chat-ts/google"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as FirstCompletion from "../src/first-completion.js"
import * as Models from "../src/shared/Models.js"
import { makeTranscript, outputLayer } from "./support/capture.js"
import { runTsx } from "./support/run.js"

const withEnv = (vars: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: vars }))

interface Seen {
  readonly path: string
  readonly key: string | undefined
}

/** A local server answering every generateContent with one text. */
const fakeGemini = Effect.acquireRelease(
  Effect.callback<{ server: http.Server; baseURL: string; seen: Array<Seen> }>((resume) => {
    const seen: Array<Seen> = []
    const server = http.createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        const key = req.headers["x-goog-api-key"]
        seen.push({ path: req.url ?? "", key: typeof key === "string" ? key : undefined })
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({
          candidates: [{ content: { role: "model", parts: [{ text: "Hello from the fake Gemini." }] }, finishReason: "STOP" }],
          usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4, thoughtsTokenCount: 2 }
        }))
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ server, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen })))
  }),
  ({ server }) => Effect.callback<void>((resume) => {
    server.close(() => resume(Effect.void))
  })
)

describe("with GEMINI_API_KEY set", () => {
  it.effect("Gemini is chosen from GEMINI_API_KEY or GOOGLE_API_KEY; OPENAI_API_KEY still wins; --offline forces offline", () =>
    Effect.gen(function*() {
      const gemini = yield* Models.choose().pipe(withEnv({ GEMINI_API_KEY: "AIza-test", GEMINI_MODEL: "gemini-2.5-pro" }))
      expect(gemini).toEqual({
        _tag: "Gemini",
        model: "gemini-2.5-pro",
        embeddingModel: GoogleDefaults.embeddingModel,
        baseURL: "https://generativelanguage.googleapis.com"
      })
      expect(Models.label(gemini)).toBe("gemini-2.5-pro via https://generativelanguage.googleapis.com")
      expect(yield* Models.choose().pipe(withEnv({ GOOGLE_API_KEY: "AIza-test" }))).toMatchObject({
        _tag: "Gemini",
        model: GoogleDefaults.model
      })
      expect(yield* Models.choose().pipe(withEnv({ GOOGLE_API_KEY: "AIza-test", OPENAI_API_KEY: "sk-test" }))).toMatchObject({
        _tag: "OpenAi"
      })
      expect(yield* Models.choose({ offline: true }).pipe(withEnv({ GEMINI_API_KEY: "AIza-test" }))).toEqual({ _tag: "Offline" })
    }))

  it.live("the first completion asks the configured Gemini server and model, with the key", () =>
    Effect.gen(function*() {
      const fake = yield* fakeGemini
      const transcript = makeTranscript()
      yield* Effect.gen(function*() {
        const choice = yield* Models.choose()
        expect(Models.label(choice)).toBe(`${GoogleDefaults.model} via ${fake.baseURL}`)
        yield* FirstCompletion.program.pipe(Effect.provide(Models.languageModel(choice, FirstCompletion.offline)))
      }).pipe(Effect.provide(outputLayer(transcript)), withEnv({ GOOGLE_API_KEY: "AIza-test-key", GEMINI_BASE_URL: fake.baseURL }))
      expect(transcript.text()).toBe("Hello from the fake Gemini.\n(9 tokens in, 6 out)\n")
      expect(fake.seen).toEqual([{ path: `/v1beta/models/${GoogleDefaults.model}:generateContent`, key: "AIza-test-key" }])
    }))
})

describe("docs/google.md's snippet", () => {
  it.live("src/snippets/gemini.ts runs the first completion on the configured Gemini server", () =>
    Effect.gen(function*() {
      const fake = yield* fakeGemini
      const env: NodeJS.ProcessEnv = { ...process.env, GEMINI_API_KEY: "AIza-snippet-key", GEMINI_BASE_URL: fake.baseURL, NO_COLOR: "1" }
      delete env["OPENAI_API_KEY"]
      const run = yield* Effect.promise(() => runTsx(["src/snippets/gemini.ts"], { env }))
      expect(run.code).toBe(0)
      expect(run.stdout).toBe("Hello from the fake Gemini.\n(9 tokens in, 6 out)\n")
      expect(fake.seen).toEqual([{ path: `/v1beta/models/${GoogleDefaults.model}:generateContent`, key: "AIza-snippet-key" }])
    }), 60_000)
})
