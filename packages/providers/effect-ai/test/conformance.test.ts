/**
 * The provider conformance suite of `@chat-ts/core/testing`, run through the
 * bridge: `@effect/ai-openai` (its real client on Effect's fetch HttpClient) against
 * the loopback replay server, with the recorded Responses fixtures of the
 * OpenAI harness (the streamed ones with `sequence_number`, which
 * `@effect/ai-openai` requires: see test/fixtures/README.md).
 *
 * What `@effect/ai-openai` 0.41 does differently from chat-ts's own OpenAI
 * layers is stated per scenario in `known`, and checked: a scenario listed
 * there must fail (so the list cannot go stale), every other one must pass.
 */
import { Conformance } from "@chat-ts/core/testing"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { responses } from "../../openai/test/conformance/openai.js"
import { EffectAi } from "../src/index.js"
import { ownFixture, ReplayServer } from "./support/openai.js"

type Body = { readonly [key: string]: unknown }
const bodyOf = (request: ReplayServer.Recorded): Body => request.body as Body
const sse = (name: string) => ReplayServer.sse(ownFixture(name))

const harness: Conformance.Harness = {
  ...responses,
  name: "EffectAi over @effect/ai-openai",
  layer: (server, settings) =>
    EffectAi.layer({ idleTimeout: settings.idleTimeout }).pipe(
      Layer.provide(OpenAiLanguageModel.layer({ model: "gpt-4o" })),
      Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make(responses.apiKey!), apiUrl: server.baseURL })),
      Layer.provide(FetchHttpClient.layer)
    ),
  fixtures: {
    ...responses.fixtures,
    streamText: { ...responses.fixtures.streamText, reply: sse("responses-stream-text-sequenced.sse") },
    streamToolCall: { ...responses.fixtures.streamToolCall, reply: sse("responses-stream-function-call-sequenced.sse") },
    streamParallelToolCalls: {
      ...responses.fixtures.streamParallelToolCalls,
      reply: sse("responses-stream-function-calls-parallel-sequenced.sse")
    },
    structured: { ...responses.fixtures.structured!, reply: ReplayServer.json(ownFixture("responses-structured-echo-schema.json")) }
  },
  wire: {
    text: (request, sent) => {
      expect(request.path).toBe("/v1/responses")
      expect(request.headers["authorization"]).toBe(`Bearer ${responses.apiKey}`)
      const system = sent.messages.find((message) => message.role === "system")!
      const user = sent.messages.find((message) => message.role === "user")!
      expect(bodyOf(request)).toMatchObject({ model: "gpt-4o" })
      expect(bodyOf(request)["input"]).toEqual([
        { role: "system", content: system.parts.map((part) => part._tag === "Text" ? part.text : "").join("") },
        { role: "user", content: user.parts.map((part) => ({ type: "input_text", text: part._tag === "Text" ? part.text : "" })) }
      ])
    },
    stream: (request) => {
      expect(bodyOf(request)["stream"]).toBe(true)
    },
    toolResults: (request, { completed, rejected }) => {
      const input = bodyOf(request)["input"] as ReadonlyArray<Body>
      expect(input).toEqual(expect.arrayContaining([
        expect.objectContaining({ type: "function_call", call_id: completed.id, name: completed.name, arguments: completed.arguments }),
        expect.objectContaining({ type: "function_call", call_id: rejected.id, name: rejected.name, arguments: rejected.arguments }),
        { type: "function_call_output", call_id: completed.id, output: JSON.stringify(completed.result!.value) },
        { type: "function_call_output", call_id: rejected.id, output: JSON.stringify(rejected.result!.value) }
      ]))
    },
    structured: (request, format) => {
      expect((bodyOf(request)["text"] as Body)["format"]).toMatchObject({
        type: "json_schema",
        name: format.name,
        schema: format.schema,
        strict: true
      })
    },
    reasoning: (request, part) => {
      const openai = part.providerMetadata?.["openai"] as Body | undefined
      expect(typeof openai?.["encryptedContent"]).toBe("string")
      const input = bodyOf(request)["input"] as ReadonlyArray<Body>
      expect(input).toContainEqual(expect.objectContaining({ type: "reasoning", encrypted_content: openai!["encryptedContent"] }))
    }
  }
}

/** Scenarios `@effect/ai-openai` 0.41 does not pass through the bridge, and why (docs/routing.md says the same). */
const known: Readonly<Record<string, string>> = {
  "429 with retry-after: the default retry policy waits at least that long (TestClock), then succeeds":
    "the bridge does not retry: @effect/ai leaves retries to the app (Effect.retry, or the HttpClient's transformClient)",
  "malformed stream: an event whose data is not JSON is a MalformedResponse":
    "@effect/ai-openai skips events it cannot decode, so the stream ends unfinished: a retryable NetworkError",
  "malformed body: an HTML page or JSON of another shape with status 200 is a MalformedResponse, not retried":
    "@effect/ai-openai reads an HTML page answering a stream request as a stream of no events: a retryable NetworkError"
}

describe("conformance: EffectAi over @effect/ai-openai", () => {
  for (const scenario of Conformance.scenarios(harness)) {
    const reason = known[scenario.name]
    if (reason === undefined) {
      it.scoped(`${scenario.group}: ${scenario.name}`, () => scenario.run, 30_000)
    } else {
      it.scoped(`${scenario.group}: ${scenario.name} — does not conform (${reason})`, () =>
        Effect.map(Effect.exit(scenario.run), (exit) => {
          expect(Exit.isFailure(exit)).toBe(true)
        }), 30_000)
    }
  }
})
