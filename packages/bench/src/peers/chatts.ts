/**
 * chat-ts set up for the benchmarks: a no-op tool, an approval-gated tool, and
 * scripted models that do no work of their own (precomputed responses).
 */
import { Action, Chat, LanguageModel, Messages, Tool, Toolkit } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const usage = { inputTokens: 10, outputTokens: 5 }

export const Noop = Tool.make("noop", {
  description: "Does nothing.",
  parameters: {},
  success: Schema.Struct({ ok: Schema.Boolean })
})

export const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number }),
  metadata: { requiresApproval: true }
})

/** `noop` runs without asking. */
export const noopKit = Toolkit.make(Noop)

/** `delete_files` waits for a person. */
export const approvalKit = Toolkit.make(DeleteFiles).pipe(
  Toolkit.withStrategy((_call, meta) => (meta.requiresApproval ? Action.RequireApproval() : Action.Execute()))
)

export const noopHandlers = noopKit.toLayer({ noop: () => Effect.succeed({ ok: true }) })
export const approvalHandlers = approvalKit.toLayer({
  delete_files: ({ paths }) => Effect.succeed({ deleted: paths.length })
})

/** A response asking for `name` with `args`, under call id `id`. */
export const toolResponse = (id: string, name: string, args: string): LanguageModel.Response => ({
  parts: [Messages.toolCall({ id, name, arguments: args })],
  usage,
  finishReason: "tool-calls"
})

/** A final text response. */
export const textResponse = (text: string): LanguageModel.Response => ({
  parts: [{ _tag: "Text", text }],
  usage,
  finishReason: "stop"
})

/**
 * A model that asks for `noop` `steps` times, then answers. The position in
 * the script is a counter the caller resets before each turn.
 */
export const loopModel = (steps: number) => {
  const responses = Array.from({ length: steps }, (_, i) => toolResponse(`call_${i + 1}`, "noop", "{}"))
  const answer = textResponse("Done.")
  let index = 0
  const service = LanguageModel.make({
    generate: () => Effect.sync(() => (index < steps ? responses[index++]! : answer))
  })
  return {
    service,
    reset: () => {
      index = 0
    }
  }
}

/** One whole turn of the loop chat as an Effect: `steps` tool steps and an answer, checked. */
export const loopTurnEffect = async (steps: number, history: Messages.Messages = []) => {
  const model = loopModel(steps)
  const chat = await Effect.runPromise(
    Chat.make({ tools: [noopKit], maxSteps: steps + 1 }).pipe(
      Effect.provide(Layer.merge(LanguageModel.layer(model.service), noopHandlers))
    )
  )
  const input = [...history, Messages.user("Go.")]
  return Effect.suspend(() => {
    model.reset()
    return chat.complete(input)
  }).pipe(
    Effect.flatMap((result) =>
      result.outcome._tag === "Complete" && result.messages.length === input.length + steps + 1
        ? Effect.succeed(result.messages.length)
        : Effect.die(new Error("chat-ts: the turn did not complete"))
    ),
    Effect.orDie
  )
}

/** A chat over `noop` with the loop model, and a function running one whole turn. */
export const loopChat = async (steps: number) => {
  const turn = await loopTurnEffect(steps)
  return async (): Promise<void> => {
    await Effect.runPromise(turn)
  }
}

/**
 * A model that asks for `delete_files` when the conversation ends with a user
 * message and answers otherwise (stateless, so turns may run concurrently).
 */
export const approvalModel = (): LanguageModel.Service => {
  const answer = textResponse("Deleted.")
  return LanguageModel.make({
    generate: (request) =>
      Effect.sync(() => {
        const last = request.messages[request.messages.length - 1]
        return last !== undefined && last.role === "user"
          ? toolResponse(`call_${request.messages.length}`, "delete_files", "{\"paths\":[\"a.log\"]}")
          : answer
      })
  })
}

/** A chat whose single tool needs approval, on the stateless approval model. */
export const approvalChat = (model: LanguageModel.Service = approvalModel()) =>
  Effect.runPromise(
    Chat.make({ tools: [approvalKit] }).pipe(
      Effect.provide(Layer.merge(LanguageModel.layer(model), approvalHandlers))
    )
  )
