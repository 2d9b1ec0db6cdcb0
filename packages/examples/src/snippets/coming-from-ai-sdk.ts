// Coming from the AI SDK: one agent, its tools written once with `tool()` from `ai`, run by
// `streamText` with `needsApproval`, then by chat-ts (docs/coming-from-ai-sdk.md).
// #region imports
import { AiSdkToolkit } from "@chat-ts/ai-sdk-provider"
import { Chat, ConversationStore, Messages, Worker } from "@chat-ts/core"
import { isStepCount, type LanguageModel, type ModelMessage, streamText, tool } from "ai"
import { Effect } from "effect"
import { z } from "zod"
// #endregion imports

/** A bank in memory: what the tools did, for the tests to count. */
export const bank = {
  transfers: [] as Array<{ readonly from: string; readonly to: string; readonly amount: number }>,
  transfer(from: string, to: string, amount: number) {
    this.transfers.push({ from, to, amount })
    return { ok: true, reference: `T${this.transfers.length}` }
  }
}

// #region tools
const account = z.string().regex(/^[A-Z]{2}\d{4}$/).describe("An account number, like PT0001")

/** The agent's tools, as an AI SDK program writes them. */
export const tools = {
  get_balance: tool({
    description: "The balance of an account, in euros.",
    inputSchema: z.object({ account }),
    execute: async ({ account }) => ({ account, balance: 1250 })
  }),
  transfer: tool({
    description: "Transfer euros from one account to another.",
    inputSchema: z.object({ from: account, to: account, amount: z.number().positive().max(10_000) }),
    // Small transfers run; larger ones wait for a person.
    needsApproval: async ({ amount }) => amount > 100,
    execute: async ({ from, to, amount }) => bank.transfer(from, to, amount)
  })
}
// #endregion tools

// #region ai-sdk
/**
 * One request of the AI SDK app: the client sends the whole history (its own copy), and
 * `streamText` runs the approved calls it finds in it, then the model.
 */
export const aiSdkRequest = async (model: LanguageModel, messages: Array<ModelMessage>) => {
  const result = streamText({ model, tools, messages, stopWhen: isStepCount(5) })
  await result.consumeStream()
  return [...messages, ...(await result.response).messages]
}

/** The pending approvals of a history: what the page shows a person. */
export const approvalRequests = (messages: ReadonlyArray<ModelMessage>) =>
  messages.flatMap((message) =>
    message.role === "assistant" && typeof message.content !== "string"
      ? message.content.flatMap((part) => (part.type === "tool-approval-request" ? [part.approvalId] : []))
      : []
  )

/** The person's answer, added by the client to its copy of the history and sent with the next request. */
export const approveInAiSdk = (messages: Array<ModelMessage>, approvalId: string): Array<ModelMessage> => [
  ...messages,
  { role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: true }] }
]
// #endregion ai-sdk

// #region chat-ts
/** The same agent on chat-ts: the same tools, the same code in them; `needsApproval` is its strategy. */
export const makeAgent = Effect.gen(function*() {
  const toolkit = yield* AiSdkToolkit.make(tools)
  return yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(toolkit.handlers))
})

/** A request: run the turn; a pause is stored server-side, under the conversation's id. */
export const ask = (chat: Chat.Service, id: string, text: string) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const result = yield* chat.complete(Messages.fromUser(text))
    if (result.outcome._tag === "Paused") yield* store.save(id, result.messages, { expectedVersion: 0 })
    return result
  })

/**
 * A person's decision, from any process, minutes or days later: applied to the stored
 * conversation under its lease (another run holding it: `ConversationBusy`, nothing run), an edit
 * checked against the zod schema first (`InvalidEditedArguments`, nothing stored or run).
 */
export const approve = (chat: Chat.Service, id: string, callId: string, edited?: unknown) =>
  Worker.resume(chat, id, (stored) => chat.approve(stored.messages, callId, edited))
// #endregion chat-ts
