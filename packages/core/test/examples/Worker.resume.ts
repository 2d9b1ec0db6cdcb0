/** The `@example` of `Worker.resume` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { type Chat, Messages, Worker } from "@chat-ts/core"
import { Effect } from "effect"

// A person approved call `callId` of stored conversation `id`: record it and resume the turn, under a
// lease (another worker resuming `id` meanwhile gets ConversationBusy and runs nothing).
// Needs a ConversationStore (ConversationStore.layerMemory, @chat-ts/sql, …).
const approveAndResume = <R>(chat: Chat.Service<R>, id: string, callId: string) =>
  Worker.resume(chat, id, (stored) => Effect.fromResult(Messages.approve(stored.messages, callId)), {
    owner: "worker-1"
  })
// #endregion

export { approveAndResume }
