/**
 * The bridge over `@effect/ai-openai` (its real client on Effect's
 * `HttpClient`, on fetch) pointed at the loopback replay server of
 * `@chat-ts/openai`' tests, whose recorded OpenAI fixtures it replays.
 */
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { FetchHttpClient } from "@effect/platform"
import * as Layer from "effect/Layer"
import { readFileSync } from "node:fs"
import * as Redacted from "effect/Redacted"
import { EffectAi } from "../../src/index.js"
import type * as ReplayServer from "../../../openai/test/support/ReplayServer.js"

export * as ReplayServer from "../../../openai/test/support/ReplayServer.js"

/** The `@effect/ai` OpenAI model on the replay server. */
export const openAi = (
  server: ReplayServer.ReplayServer,
  config: Omit<OpenAiLanguageModel.Config.Service, "model"> = {}
) =>
  OpenAiLanguageModel.layer({ model: "gpt-4o", config }).pipe(
    Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-replay-test-key"), apiUrl: server.baseURL })),
    Layer.provide(FetchHttpClient.layer)
  )

/** chat-ts's `LanguageModel` over it, through the bridge. */
export const bridged = (
  server: ReplayServer.ReplayServer,
  options: { readonly config?: Omit<OpenAiLanguageModel.Config.Service, "model">; readonly bridge?: EffectAi.Options } = {}
) => EffectAi.layer(options.bridge).pipe(Layer.provide(openAi(server, options.config)))

/** Reads a file of this package's `test/fixtures` (see its README). */
export const ownFixture = (name: string): string => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")
