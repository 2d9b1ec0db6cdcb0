// Streaming: a turn's events read with `for await` from code outside Effect (`chat.events`).
// #region imports
import { Action, Chat, ChatError, type ChatEvent, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Effect, Layer, Schema } from "effect"
// #endregion imports

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number })
})

const toolkit = Toolkit.make(DeleteFiles).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

const handlers = toolkit.toLayer({ delete_files: ({ paths }) => Effect.succeed({ deleted: paths.length }) })

/** A chat on a scripted model: it asks to delete two logs, then confirms. */
export const makeChat = (): Promise<Chat.Service> =>
  Effect.runPromise(
    Chat.make({ tools: toolkit }).pipe(
      Effect.provide(Layer.merge(
        MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "d1", name: "delete_files", arguments: { paths: ["jan.log", "feb.log"] } }], {
            text: "I will delete them."
          }),
          MockLanguageModel.text("Deleted both.")
        ]).layer,
        handlers
      ))
    )
  )

// #region events
/** Writes a turn's text as it arrives; returns its last event (Paused or Completed, with the messages). */
export const printTurn = async (
  chat: Chat.Service,
  messages: Messages.Messages,
  write: (text: string) => void,
  signal?: AbortSignal
): Promise<ChatEvent.Final | undefined> => {
  const events = chat.events(messages, { signal })
  try {
    for await (const event of events) {
      if (event._tag === "TextDelta") write(event.text)
      if (event._tag === "ToolCall") write(`\n-> ${event.call.name} ${event.call.arguments}\n`)
    }
  } catch (error) {
    // The turn's typed errors are thrown as they are (an abort throws the signal's reason).
    if (error instanceof ChatError.NetworkError) write(`\n(the model's stream broke off: ${error.message})\n`)
    throw error
  }
  return events.final
}
// #endregion events

// #region through-pauses
/** Streams a turn, approves every call it pauses on and streams again, until it is complete. */
export const approveAll = async (chat: Chat.Service, ask: string, write: (text: string) => void) => {
  let last = await printTurn(chat, Messages.fromUser(ask), write)
  while (last?._tag === "Paused") {
    let messages = last.messages
    for (const call of Messages.pendingTools(messages)) {
      const approved = Messages.approve(messages, call.id)
      if (approved._tag === "Failure") throw approved.failure
      messages = approved.success
    }
    last = await printTurn(chat, messages, write)
  }
  return last
}
// #endregion through-pauses
