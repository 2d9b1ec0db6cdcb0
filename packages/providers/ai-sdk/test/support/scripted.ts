/**
 * A scripted AI SDK model (specification v4, or v3): it records the call
 * options it gets and answers from a queue, so a test sees exactly what the
 * bridge sends and what it makes of an answer no vendor has to be found for
 * (a finish reason, a file, an abort).
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage
} from "@ai-sdk/provider"

/** A usage in the AI SDK's shape. */
export const usage = (input: number, output: number, extra: { cacheRead?: number; reasoning?: number } = {}): LanguageModelV4Usage => ({
  inputTokens: { total: input, noCache: input - (extra.cacheRead ?? 0), cacheRead: extra.cacheRead, cacheWrite: undefined },
  outputTokens: { total: output, text: output - (extra.reasoning ?? 0), reasoning: extra.reasoning }
})

/** One scripted answer: a whole result, stream parts, or a failure (thrown, or after waiting for the abort). */
export type Answer =
  | { readonly _tag: "Generate"; readonly result: Partial<LanguageModelV4GenerateResult> }
  | { readonly _tag: "Stream"; readonly parts: ReadonlyArray<LanguageModelV4StreamPart> }
  | { readonly _tag: "Throw"; readonly error: unknown }
  | { readonly _tag: "Hang" }

export const generate = (result: Partial<LanguageModelV4GenerateResult>): Answer => ({ _tag: "Generate", result })
export const stream = (parts: ReadonlyArray<LanguageModelV4StreamPart>): Answer => ({ _tag: "Stream", parts })

/** A scripted v4 model, with what it was called with and whether its last call's signal was aborted. */
export interface Scripted extends LanguageModelV4 {
  readonly calls: Array<LanguageModelV4CallOptions>
  readonly aborted: Array<boolean>
}

const settle = (answer: Answer | undefined, signal: AbortSignal | undefined, aborted: Array<boolean>): Promise<Answer> => {
  if (answer === undefined) return Promise.reject(new Error("the scripted model has no answer left"))
  if (answer._tag === "Throw") return Promise.reject(answer.error)
  if (answer._tag !== "Hang") return Promise.resolve(answer)
  return new Promise((_, reject) => {
    signal?.addEventListener("abort", () => {
      aborted.push(true)
      reject(Object.assign(new Error("This operation was aborted"), { name: "AbortError" }))
    }, { once: true })
  })
}

const defaults: LanguageModelV4GenerateResult = {
  content: [],
  finishReason: { unified: "stop", raw: "stop" },
  usage: usage(1, 1),
  warnings: []
}

/** A v4 model answering `answers` in order. */
export const model = (...answers: ReadonlyArray<Answer>): Scripted => {
  const queue = [...answers]
  const calls: Array<LanguageModelV4CallOptions> = []
  const aborted: Array<boolean> = []
  return {
    specificationVersion: "v4",
    provider: "scripted",
    modelId: "scripted-1",
    supportedUrls: {},
    calls,
    aborted,
    doGenerate: async (options) => {
      calls.push(options)
      const answer = await settle(queue.shift(), options.abortSignal, aborted)
      if (answer._tag !== "Generate") throw new Error("the scripted model expected a generate call")
      return { ...defaults, ...answer.result }
    },
    doStream: async (options) => {
      calls.push(options)
      const answer = await settle(queue.shift(), options.abortSignal, aborted)
      if (answer._tag !== "Stream") throw new Error("the scripted model expected a stream call")
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of answer.parts) controller.enqueue(part)
            controller.close()
          }
        })
      }
    }
  }
}

/** A v3 model recording its call options, answering one generate result in v3's shape. */
export const v3Model = (result: Awaited<ReturnType<LanguageModelV3["doGenerate"]>>): LanguageModelV3 & { readonly calls: Array<LanguageModelV3CallOptions> } => {
  const calls: Array<LanguageModelV3CallOptions> = []
  return {
    specificationVersion: "v3",
    provider: "scripted-v3",
    modelId: "scripted-v3",
    supportedUrls: {},
    calls,
    doGenerate: async (options) => {
      calls.push(options)
      return result
    },
    doStream: () => Promise.reject(new Error("not scripted"))
  }
}
