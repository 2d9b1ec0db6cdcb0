/**
 * The bridge over an `effect/ai` model that speaks OpenAI's Responses API
 * (support/overChatTs.ts: `LanguageModel.make` over `@chat-ts/openai`'s
 * client, real HTTP) pointed at the loopback replay server of
 * `@chat-ts/openai`' tests, whose recorded OpenAI fixtures it replays. No
 * `@effect/ai-openai` loads on Effect 4.1.
 */
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { readFileSync } from "node:fs"
import * as OpenAiClient from "../../../openai/src/OpenAiClient.js"
import * as OpenAiResponses from "../../../openai/src/OpenAiResponses.js"
import type * as ReplayServer from "../../../openai/test/support/ReplayServer.js"
import { EffectAi } from "../../src/index.js"
import * as OverChatTs from "./overChatTs.js"

export * as ReplayServer from "../../../openai/test/support/ReplayServer.js"

/** The key the model sends. */
export const apiKey = "sk-replay-test-key"

/** The provider settings of a request (what `EffectAi.Options.requestContext` provides), as the model reads them. */
export const Config = OverChatTs.Config

/** The `effect/ai` model on the replay server. */
export const effectAiModel = (server: ReplayServer.ReplayServer) =>
  OverChatTs.layer(
    OpenAiResponses.layer({ model: "gpt-4o", retry: false }).pipe(
      Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make(apiKey), baseURL: server.baseURL }))
    )
  )

/** chat-ts's `LanguageModel` over it, through the bridge. */
export const bridged = (server: ReplayServer.ReplayServer, options: { readonly bridge?: EffectAi.Options } = {}) =>
  EffectAi.layer(options.bridge).pipe(Layer.provide(effectAiModel(server)))

/** Reads a file of this package's `test/fixtures` (see its README). */
export const ownFixture = (name: string): string => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")
