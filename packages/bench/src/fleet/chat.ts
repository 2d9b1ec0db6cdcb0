/**
 * The chat of the fleet scenario (its parent and its workers share it): one
 * approval-gated tool whose handler reports the path it was called with, and
 * a scripted model that does no work of its own. The first call of a turn
 * asks for `delete_files` under call id `call#0#` on path `p#0#.log`; the
 * seeding copies that paused state, replacing `#0#` with each conversation's
 * number, so every conversation has its own call id and path.
 */
import { Chat, type ConversationStore, LanguageModel, Messages } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as EffectResult from "effect/Result"
import * as chatts from "../peers/chatts.js"

/** The number of the template conversation, in every id and path it holds. */
export const marker = "#0#"

/** The marker of conversation `n`. */
export const markerOf = (n: number): string => `#${n}#`

/** Conversation `n`'s id. */
export const conversationId = (n: number): string => `c${markerOf(n)}`

/** The path conversation `n`'s call deletes (what its tool run reports). */
export const pathOf = (n: number): string => `p${markerOf(n)}.log`

/** The prompt every conversation starts with. */
export const prompt = "Delete the old log."

/** A model that asks for the template's call after a user message and answers otherwise (stateless). */
const model = (): LanguageModel.Service => {
  const call = chatts.toolResponse(`call${marker}`, "delete_files", JSON.stringify({ paths: [pathOf(0)] }))
  const answer = chatts.textResponse("Deleted.")
  return LanguageModel.make({
    generate: (request) =>
      Effect.sync(() => request.messages[request.messages.length - 1]?.role === "user" ? call : answer)
  })
}

/** The fleet's chat; `ran` is told the paths of every run of the tool. */
export const make = (ran: (path: string) => void) =>
  Effect.runPromise(
    Chat.make({ tools: [chatts.approvalKit] }).pipe(
      Effect.provide(Layer.merge(
        LanguageModel.layer(model()),
        chatts.approvalKit.toLayer({
          delete_files: ({ paths }) =>
            Effect.sync(() => {
              for (const path of paths) ran(path)
              return { deleted: paths.length }
            })
        })
      ))
    )
  )

/** The decision of every fleet resume: approve every pending call. */
export const approveAll = (stored: ConversationStore.Stored) =>
  Effect.fromResult(Messages.pendingTools(stored.messages).reduce(
    (m: EffectResult.Result<Messages.Messages, unknown>, call) => EffectResult.flatMap(m, (ms) => Messages.approve(ms, call.id)),
    EffectResult.succeed(stored.messages)
  ))
