/**
 * Effect's own AI module (`effect/ai`) with chat-ts, through
 * `@chat-ts/effect-ai`, both ways: an `effect/ai` `LanguageModel` serves a
 * chat-ts `Chat` (the tool loop, approval with an edit and resume, is
 * chat-ts's), and an `effect/ai` `Toolkit` (tools and handlers written for
 * Effect) is used in that `Chat` as it is, its `needsApproval` asking a person.
 *
 * No `effect/ai` provider package loads on Effect 4.1 yet (`@effect/ai-openai`
 * and the others import `effect/unstable/*`), so the model here is a scripted
 * `effect/ai` model made with `LanguageModel.make`, the constructor every
 * provider uses: swap in a provider's layer when one is published.
 *
 *   npx tsx src/effect-ai.ts
 */
// #region imports
// chat-ts: the turn loop, its tools and its model contract.
import { Action, Chat, ChatOutcome, Messages, Tool, Toolkit } from "@chat-ts/core"
import { EffectAi, EffectAiToolkit } from "@chat-ts/effect-ai"
import { Console, Effect, Layer, Schema, Stream } from "effect"
// Effect AI: the model, and tools written for Effect. Aliased where the names meet chat-ts's.
import { LanguageModel as AiLanguageModel, Tool as AiTool, Toolkit as AiToolkit } from "effect/ai"
// #endregion imports
import { isMain } from "./shared/main.js"

// #region tools
/** A chat-ts tool: its Schema becomes the JSON Schema the effect/ai model is given. */
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
/** chat-ts's `LanguageModel` over any effect/ai `LanguageModel` layer (a provider's, or one made with `LanguageModel.make`). */
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

// #region toolkit
/** Tools written for Effect: `needsApproval` says which calls a person must approve. */
const Deploy = AiTool.make("deploy", {
  description: "Deploy a service.",
  parameters: Schema.Struct({ service: Schema.String, environment: Schema.Literals(["staging", "production"]) }),
  success: Schema.Struct({ url: Schema.String }),
  needsApproval: (params) => params.environment === "production"
})

export const ops = AiToolkit.make(Deploy)

export const opsHandlers = ops.toLayer({
  deploy: ({ environment, service }) => Effect.succeed({ url: `https://${service}.${environment}.example.com` })
})

/** The same toolkit in a chat-ts `Chat`: production deploys pause for a person, failing closed. */
export const deploy = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: EffectAiToolkit.fromToolkit(ops) })
  const first = yield* chat.complete(Messages.fromUser("Deploy the api to production."))
  if (!ChatOutcome.isPaused(first.outcome)) return first
  const [call] = Messages.pendingTools(first.messages)
  yield* Console.log(`Waiting for a person: ${call!.name} ${call!.arguments}`)
  const done = yield* chat.resume(yield* chat.approve(first.messages, call!.id))
  if (ChatOutcome.isComplete(done.outcome)) yield* Console.log(done.outcome.value)
  return done
}).pipe(Effect.provide(EffectAiToolkit.layer(ops).pipe(Layer.provide(opsHandlers))))
// #endregion toolkit

/** The first tool result in a prompt, if any. */
const firstResult = (prompt: AiLanguageModel.ProviderOptions["prompt"]) =>
  prompt.content.flatMap((message) => message.role === "tool" ? message.content : []).find((part) => part.type === "tool-result")

/** A scripted effect/ai model: a call of `tool` with `params`, then an answer that reads the result. */
export const scriptedModel = (tool: string, params: unknown) =>
  Layer.effect(
    AiLanguageModel.LanguageModel,
    AiLanguageModel.make({
      generateText: (options) => {
        const result = firstResult(options.prompt)
        const usage = { inputTokens: { total: 20 }, outputTokens: { total: 8 } }
        return Effect.succeed(
          result === undefined || result.type !== "tool-result"
            ? [
              { type: "tool-call", id: "call_1", name: tool, params },
              { type: "finish", reason: "tool-calls", usage }
            ]
            : [
              { type: "text", text: `Done: ${JSON.stringify(result.result)}.` },
              { type: "finish", reason: "stop", usage }
            ]
        )
      },
      streamText: () => Stream.die(new Error("not used in this example"))
    })
  )

/** Offline: the scripted effect/ai model of the first program. */
export const offlineModel = scriptedModel("delete_files", { paths: ["a.log", "b.log"] })

if (isMain(import.meta.url)) {
  const { NodeRuntime } = await import("@effect/platform-node")
  Console.log("[model: a scripted effect/ai model (no effect/ai provider package loads on Effect 4.1 yet)]\n").pipe(
    Effect.andThen(program.pipe(Effect.provide(Layer.merge(bridged(offlineModel), handlers)))),
    Effect.andThen(deploy.pipe(Effect.provide(bridged(scriptedModel("deploy", { service: "api", environment: "production" }))))),
    NodeRuntime.runMain
  )
}
