/**
 * A chat on `@effect/ai-openai` through the `@chat-ts/effect-ai` bridge: the
 * model is Effect AI's, the tool loop (approval, an edit, resume) is chat-ts's.
 *
 * With OPENAI_API_KEY set it calls OpenAI's Responses API through
 * `@effect/ai-openai`; offline, a scripted `@effect/ai` model answers (the
 * same bridge, no network).
 *
 *   npx tsx src/effect-ai.ts
 */
// #region imports
// chat-ts: the turn loop, its tools and its model contract.
import { Action, Chat, ChatOutcome, Messages, Tool, Toolkit } from "@chat-ts/core"
import { EffectAi } from "@chat-ts/effect-ai"
// Effect AI: the provider. Aliased where the names meet chat-ts's.
import { LanguageModel as AiLanguageModel } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Schema } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import type * as Models from "./shared/Models.js"

// #region tools
/** A chat-ts tool: its Schema becomes the JSON Schema Effect AI sends to OpenAI. */
const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number })
})

/** Deleting waits for a person. */
export const files = Toolkit.make(DeleteFiles).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

export const handlers = files.toLayer({
  delete_files: ({ paths }) => Effect.succeed({ deleted: paths.length })
})
// #endregion tools

// #region layer
/** Effect AI's OpenAI model (on Effect's HttpClient), and chat-ts's `LanguageModel` over it. */
export const openAi = OpenAiLanguageModel.layer({ model: "gpt-4.1-mini" }).pipe(
  Layer.provide(OpenAiClient.layerConfig({
    apiKey: Config.redacted("OPENAI_API_KEY"),
    apiUrl: Config.withDefault(Config.string("OPENAI_BASE_URL"), "https://api.openai.com/v1")
  })),
  Layer.provide(NodeHttpClient.layerUndici)
)

export const bridged = <E, R>(effectAiModel: Layer.Layer<AiLanguageModel.LanguageModel, E, R>) =>
  EffectAi.layer().pipe(Layer.provide(effectAiModel))
// #endregion layer

// #region program
export const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: files })
  const first = yield* chat.complete(Messages.fromUser("Delete a.log and b.log."))
  if (!ChatOutcome.isPaused(first.outcome)) return first
  const [call] = Messages.pendingTools(first.messages)
  yield* Console.log(`The model asks to run ${call!.name} ${call!.arguments}; approving a.log only.`)
  const approved = yield* chat.approve(first.messages, call!.id, { paths: ["a.log"] })
  const done = yield* chat.resume(approved)
  if (ChatOutcome.isComplete(done.outcome)) yield* Console.log(done.outcome.value)
  return done
})
// #endregion program

/** Offline: a scripted `@effect/ai` model (a tool call, then an answer that reads the result). */
export const offlineModel = Layer.effect(
  AiLanguageModel.LanguageModel,
  AiLanguageModel.make({
    generateText: (options) => {
      const result = options.prompt.content.flatMap((message) => message.role === "tool" ? message.content : [])[0]
      const usage = { inputTokens: 20, outputTokens: 8, totalTokens: 28 }
      return Effect.succeed(
        result === undefined
          ? [
            { type: "tool-call", id: "call_1", name: "delete_files", params: { paths: ["a.log", "b.log"] } },
            { type: "finish", reason: "tool-calls", usage }
          ]
          : [
            { type: "text", text: `Done: ${JSON.stringify(result.result)}.` },
            { type: "finish", reason: "stop", usage }
          ]
      )
    },
    streamText: () => Effect.dieMessage("not used offline")
  })
)

/** The model of a choice: OpenAI through @effect/ai-openai, or the offline @effect/ai model. */
export const modelOf = (choice: Models.Choice) => choice._tag === "OpenAi" ? bridged(openAi) : bridged(offlineModel)

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Layer.merge(modelOf(choice), handlers))), {
    offlineName: "scripted @effect/ai model"
  })
}
