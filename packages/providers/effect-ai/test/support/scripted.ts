/**
 * A scripted `effect/ai` `LanguageModel`, made with `LanguageModel.make`:
 * each call answers with what `reply` gives for it (encoded response parts,
 * or an `AiError`), streamed part by part for `streamText`; every call's
 * provider options are recorded.
 */
import type * as AiError from "effect/ai/AiError"
import * as AiLanguageModel from "effect/ai/LanguageModel"
import type * as AiResponse from "effect/ai/Response"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/** One answer: the encoded parts, or the error the provider fails with. */
export type Reply = ReadonlyArray<AiResponse.PartEncoded> | { readonly fail: AiError.AiError }

/** What a scripted model recorded. */
export interface Scripted {
  /** The provider options of each call, in order. */
  readonly calls: Array<AiLanguageModel.ProviderOptions & { readonly mode: "generate" | "stream" }>
  /** The effect/ai model. */
  readonly layer: Layer.Layer<AiLanguageModel.LanguageModel>
}

/** A whole part as the stream parts a provider would send for it. */
const streamed = (part: AiResponse.PartEncoded, index: number): ReadonlyArray<AiResponse.StreamPartEncoded> => {
  switch (part.type) {
    case "text":
      return [{ type: "text-start", id: `t${index}` }, { type: "text-delta", id: `t${index}`, delta: part.text }, {
        type: "text-end",
        id: `t${index}`
      }]
    case "reasoning":
      return [
        { type: "reasoning-start", id: `r${index}`, ...(part.metadata === undefined ? {} : { metadata: part.metadata }) },
        { type: "reasoning-delta", id: `r${index}`, delta: part.text },
        { type: "reasoning-end", id: `r${index}` }
      ]
    default:
      return [part as AiResponse.StreamPartEncoded]
  }
}

/** Makes a scripted model answering call `index` (0-based) with `reply(options, index)`. */
export const make = (reply: (options: AiLanguageModel.ProviderOptions, index: number) => Reply): Scripted => {
  const calls: Scripted["calls"] = []
  const answer = (options: AiLanguageModel.ProviderOptions, mode: "generate" | "stream") =>
    Effect.suspend(() => {
      calls.push({ ...options, mode })
      const answered = reply(options, calls.length - 1)
      return "fail" in answered ? Effect.fail(answered.fail) : Effect.succeed([...answered])
    })
  const layer = Layer.effect(
    AiLanguageModel.LanguageModel,
    AiLanguageModel.make({
      generateText: (options) => answer(options, "generate"),
      streamText: (options) =>
        Stream.unwrap(Effect.map(answer(options, "stream"), (parts) => Stream.fromIterable(parts.flatMap(streamed))))
    })
  )
  return { calls, layer }
}

/** The usage of a finish part. */
export const usage = (input: number, output: number): typeof AiResponse.Usage.Encoded => ({
  inputTokens: { total: input },
  outputTokens: { total: output }
})

/** A finish part. */
export const finish = (reason: "stop" | "tool-calls", input = 10, output = 5): AiResponse.PartEncoded => ({
  type: "finish",
  reason,
  usage: usage(input, output)
})
