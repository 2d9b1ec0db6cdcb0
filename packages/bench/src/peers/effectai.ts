/**
 * Effect 4's own `effect/ai` (the same `effect` as chat-ts). It makes one model
 * call per `generateText` (running the tool calls of that response with the
 * toolkit's handlers) and has no step loop, so the benchmark writes the loop
 * the way its users do: generate, append the response (tool calls and their
 * results) to the prompt, repeat until the model answers.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { LanguageModel, Prompt, type Response, Tool, Toolkit } from "effect/ai"

const usage = {
  inputTokens: { uncached: 10, total: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

const Noop = Tool.make("noop", {
  description: "Does nothing.",
  success: Schema.Struct({ ok: Schema.Boolean })
})

const Kit = Toolkit.make(Noop)

/** A function running one whole turn of `steps` tool steps and an answer. */
export const loopTurn = async (steps: number) => {
  const responses: Array<Array<Response.PartEncoded>> = Array.from({ length: steps }, (_, i) => [
    { type: "tool-call", id: `call_${i + 1}`, name: "noop", params: {} },
    { type: "finish", reason: "tool-calls", usage }
  ])
  const answer: Array<Response.PartEncoded> = [
    { type: "text", text: "Done." },
    { type: "finish", reason: "stop", usage }
  ]
  let index = 0
  const model = await Effect.runPromise(LanguageModel.make({
    generateText: () => Effect.sync(() => (index < steps ? responses[index++]! : answer)),
    streamText: () => {
      throw new Error("not used")
    }
  }))
  const handlers = await Effect.runPromise(Kit.toHandlers({ noop: () => Effect.succeed({ ok: true }) }))
  const turn = Effect.gen(function*() {
    let prompt = Prompt.make("Go.")
    for (let step = 0; step <= steps; step++) {
      const response = yield* LanguageModel.generateText({ prompt, toolkit: Kit })
      prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
      if (response.toolCalls.length === 0) return response.text
    }
    return yield* Effect.die(new Error("the step limit was reached"))
  }).pipe(
    Effect.provideService(LanguageModel.LanguageModel, model),
    Effect.provide(handlers)
  )
  return async (): Promise<void> => {
    index = 0
    const text = await Effect.runPromise(turn)
    if (text !== "Done.") throw new Error("effect/ai: the turn did not complete")
  }
}
