/**
 * The AG-UI interrupts of a paused conversation: one per call that waits,
 * for a person (`tool_call`) or for its time (`chat-ts:scheduled`), with the
 * answer it expects as a JSON Schema and chat-ts's details in `metadata`.
 *
 * @internal
 */
import type { LanguageModel } from "@chat-ts/core"
import * as DecisionPolicy from "@chat-ts/core/DecisionPolicy"
import * as Messages from "@chat-ts/core/Messages"
import * as AgUiProtocol from "../AgUiProtocol.js"
import { waiting } from "./decisions.js"

/** The JSON Schema of the answer to an interrupt; `editedArgs` is the tool's parameters, when known. */
const responseSchema = (parameters: unknown) => ({
  type: "object",
  properties: {
    approved: { type: "boolean", description: "Run the call (true) or decline it (false)." },
    ...(parameters === undefined
      ? {}
      : { editedArgs: { ...(parameters as object), description: "The whole arguments to run with instead (replaced, not merged)." } }),
    reason: { type: "string", description: "Why it is declined (the model sees it)." }
  },
  required: ["approved"]
})

/** Who may decide the call, how far its quorum got, who asked, and the reviewer's verdict. */
const deciding = (messages: Messages.Messages, call: Messages.ToolCallPart) => {
  const status = call.status
  const policy = DecisionPolicy.of(call)
  const progress = DecisionPolicy.progress(call)
  const requester = DecisionPolicy.requesterOf(messages, call.id)
  const asked = DecisionPolicy.requestersOf(messages, call.id)
  const requesters = [...new Set(asked.flatMap((person) => person === undefined ? [] : [person.id]))]
  const review = status._tag === "AwaitingApproval" ? status.review : undefined
  return {
    ...(policy === undefined ? {} : { policy }),
    ...(requester === undefined ? {} : { requester: requester.id }),
    ...(requesters.length === 0 ? {} : { requesters }),
    ...(asked.some((person) => person === undefined) ? { requesterUnknown: true } : {}),
    quorum: { needed: progress.quorum, votes: progress.votes.map((vote) => ({ by: vote.by, at: vote.at })) },
    ...(review === undefined ? {} : { review })
  }
}

/** The interrupt of one waiting call. */
const interruptOf = (messages: Messages.Messages, call: Messages.ToolCallPart, tool: LanguageModel.ToolDeclaration | undefined) => {
  const status = call.status
  const expiresAt = status._tag === "AwaitingApproval" ? status.expiresAt : undefined
  const scheduledAt = status._tag === "Scheduled" ? status.at : undefined
  const details: AgUiProtocol.InterruptDetails = {
    tool: call.name,
    ...(tool === undefined ? {} : { description: tool.description, parameters: tool.parameters }),
    arguments: Messages.parsedArguments(call),
    waitsFor: scheduledAt === undefined ? "approval" : "time",
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(scheduledAt === undefined ? {} : { scheduledAt }),
    ...deciding(messages, call)
  }
  return {
    id: call.id,
    reason: scheduledAt === undefined ? AgUiProtocol.approvalReason : AgUiProtocol.scheduledReason,
    message: scheduledAt === undefined
      ? `Run ${call.name}?`
      : `${call.name} is scheduled for ${new Date(scheduledAt).toISOString()}: run it now, decline it, or cancel to let it wait.`,
    toolCallId: call.id,
    responseSchema: responseSchema(tool?.parameters),
    ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
    metadata: { [AgUiProtocol.metadataKey]: details } satisfies AgUiProtocol.InterruptMetadata
  }
}

/** The interrupts of every call of `messages` that waits. */
export const interruptsOf = (messages: Messages.Messages, tools: ReadonlyArray<LanguageModel.ToolDeclaration>) => {
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  return waiting(messages).map((call) => interruptOf(messages, call, byName.get(call.name)))
}
