/**
 * With `OPENAI_API_KEY` set, the examples and the demo talk to OpenAI through
 * `@chat-ts/openai`. Here "OpenAI" is a local fake server, so the wiring
 * (key, base URL, model name, streaming) is checked without a network.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import * as Embeddings from "../src/embeddings.js"
import * as FirstCompletion from "../src/first-completion.js"
import * as Models from "../src/shared/Models.js"
import { makeTranscript, outputLayer } from "./support/capture.js"
import * as FakeOpenAi from "./support/FakeOpenAi.js"
import { runTsx } from "./support/run.js"

const env = (baseURL: string) => ({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: baseURL, OPENAI_MODEL: "fake-model" })

const withEnv = (vars: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: vars }))

describe("with OPENAI_API_KEY set", () => {
  it.live("the first completion asks the configured server and model, with the key", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.make("Hello from the fake server.")
      const transcript = makeTranscript()
      yield* Effect.gen(function*() {
        const choice = yield* Models.choose()
        expect(Models.label(choice)).toBe(`fake-model via ${fake.baseURL}`)
        yield* FirstCompletion.program.pipe(Effect.provide(Models.languageModel(choice, FirstCompletion.offline)))
      }).pipe(Effect.provide(outputLayer(transcript)), withEnv(env(fake.baseURL)))
      expect(transcript.text()).toBe("Hello from the fake server.\n(7 tokens in, 3 out)\n")
      expect(fake.requests).toHaveLength(1)
      expect(fake.requests[0]).toMatchObject({
        path: "/v1/chat/completions",
        authorization: "Bearer sk-test",
        body: { model: "fake-model" }
      })
    }))

  it.live("embeddings go to the embeddings endpoint", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.make("unused")
      const transcript = makeTranscript()
      const ranked = yield* Effect.gen(function*() {
        const choice = yield* Models.choose()
        return yield* Embeddings.program.pipe(Effect.provide(Models.embeddingModel(choice, Embeddings.fakeEmbeddings())))
      }).pipe(Effect.provide(outputLayer(transcript)), withEnv(env(fake.baseURL)))
      expect(ranked[0]!.text).toContain("Refunds")
      expect(fake.requests[0]).toMatchObject({ path: "/v1/embeddings", body: { model: "text-embedding-3-small" } })
    }))

  it.live("the demo streams from the configured model", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.make("Hello from the fake server.")
      const run = yield* Effect.promise(() => runDemo(env(fake.baseURL), ["--approve-all", "-m", "hello"]))
      expect(run.code).toBe(0)
      expect(run.stdout).toContain(`model:   fake-model via ${fake.baseURL}`)
      expect(run.stdout).not.toContain("scripted")
      expect(run.stdout).toContain("Assistant › Hello from the fake server.")
      const request = fake.requests[0]!
      expect(request.body).toMatchObject({ model: "fake-model", stream: true })
      // The demo's tools are declared to the model, with its system prompt first.
      const tools = (request.body["tools"] as ReadonlyArray<{ readonly function: { readonly name: string } }>).map(
        (tool) => tool.function.name
      )
      expect(tools).toEqual(["list_files", "read_file", "delete_files", "schedule_cleanup"])
      expect((request.body["messages"] as ReadonlyArray<{ readonly role: string }>)[0]!.role).toBe("system")
    }), 60_000)
})

/** Runs the demo with these variables set (bounded: killed after 50 seconds). */
const runDemo = (vars: Record<string, string>, args: ReadonlyArray<string>) =>
  runTsx(["src/demo/main.ts", ...args], { env: { ...process.env, ...vars, NO_COLOR: "1" } })

