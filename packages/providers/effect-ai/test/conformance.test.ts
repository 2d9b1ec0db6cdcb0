/**
 * The provider conformance suite of `@chat-ts/core/testing`, run through the
 * bridge: an `effect/ai` `LanguageModel` (made with `LanguageModel.make`, see
 * support/overChatTs.ts) that speaks OpenAI's Responses API to the loopback
 * replay server, with the recorded fixtures and wire checks of the OpenAI
 * harness. No `@effect/ai-openai` loads on Effect 4.1; this model stands in
 * for an effect/ai HTTP provider: it sends the `Prompt` and the tools'
 * JSON Schema, answers with encoded response parts and reports HTTP errors
 * as `AiError`s with the status, headers and body, and does not retry.
 *
 * What the bridge does differently from chat-ts's own layers is stated per
 * scenario in `known`, and checked: a scenario listed there must fail (so the
 * list cannot go stale), every other one must pass.
 */
import { Conformance } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { responses } from "../../openai/test/conformance/openai.js"
import { EffectAi } from "../src/index.js"
import * as OverChatTs from "./support/overChatTs.js"

const harness: Conformance.Harness = {
  ...responses,
  name: "EffectAi over an effect/ai model (OpenAI Responses on the replay server)",
  layer: (server, settings) =>
    EffectAi.layer({ idleTimeout: settings.idleTimeout }).pipe(
      Layer.provide(OverChatTs.layer(responses.layer(server, { ...settings, retry: false })))
    ),
  wire: {
    ...responses.wire,
    // effect/ai has no reasoning signature: a provider keeps the encrypted content in its metadata, sent back as options.
    reasoning: (request, part) => {
      const openai = part.providerMetadata?.["openai"] as { readonly [key: string]: unknown } | undefined
      expect(typeof openai?.["encryptedContent"]).toBe("string")
      const input = (request.body as { readonly input: ReadonlyArray<unknown> }).input
      expect(input).toContainEqual(expect.objectContaining({ type: "reasoning", encrypted_content: openai!["encryptedContent"] }))
    }
  }
}

/** Scenarios the bridge does not pass, and why (docs/routing.md says the same). */
const known: Readonly<Record<string, string>> = {
  "429 with retry-after: the default retry policy waits at least that long (TestClock), then succeeds":
    "the bridge does not retry: effect/ai leaves retries to the app (Effect.retry, or the HttpClient's transformClient)"
}

describe("conformance: EffectAi over an effect/ai model", () => {
  for (const scenario of Conformance.scenarios(harness)) {
    const reason = known[scenario.name]
    if (reason === undefined) {
      it.effect(`${scenario.group}: ${scenario.name}`, () => scenario.run, 30_000)
    } else {
      it.effect(`${scenario.group}: ${scenario.name} — does not conform (${reason})`, () =>
        Effect.map(Effect.exit(scenario.run), (exit) => {
          expect(Exit.isFailure(exit)).toBe(true)
        }), 30_000)
    }
  }
})
