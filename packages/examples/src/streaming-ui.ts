/**
 * What a user interface shows while a turn streams: the calls the model is
 * preparing, their arguments as they arrive (`ToolCallDelta`), and a
 * structured answer filling in as its JSON arrives (`streamStructured`).
 *
 *   npx tsx src/streaming-ui.ts
 */
// #region imports
import { Action, Chat, ChatEvent, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Effect, Option, Schema, Stream } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number })
})

export const toolkit = Toolkit.make(DeleteFiles).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

export const handlers = toolkit.toLayer({ delete_files: ({ paths }) => Effect.succeed({ deleted: paths.length }) })

// #region deltas
/** The calls the model is preparing, by id: their name and the arguments so far. A UI renders this on each change. */
export type Preparing = ReadonlyMap<string, { readonly name: string; readonly arguments: string }>

/** A delta adds to its call; once the call is complete (`ToolCall`, same id) it is no longer being prepared. */
export const track = (preparing: Preparing, event: ChatEvent.ChatEvent): Preparing => {
  if (event._tag === "ToolCallDelta") {
    const sofar = preparing.get(event.id)?.arguments ?? ""
    return new Map(preparing).set(event.id, { name: event.name, arguments: sofar + event.argumentsDelta })
  }
  if (event._tag === "ToolCall" && preparing.has(event.call.id)) {
    const next = new Map(preparing)
    next.delete(event.call.id)
    return next
  }
  return preparing
}

/** Streams a turn, printing "preparing name(arguments so far…" as calls arrive; returns its last event. */
export const watchCalls = (chat: Chat.Service, messages: Messages.Messages) =>
  chat.stream(messages).pipe(
    Stream.mapAccum(() => new Map() as Preparing, (preparing, event) => {
      const next = track(preparing, event)
      return [next, [{ event, next }]]
    }),
    Stream.tap(({ event, next }) =>
      event._tag === "ToolCallDelta"
        ? Console.log([...next.values()].map((call) => `preparing ${call.name}(${call.arguments}…`).join("; "))
        : event._tag === "ToolCall"
        ? Console.log(`ready: ${event.call.name}(${event.call.arguments}) [${event.call.id}]`)
        : Effect.void
    ),
    Stream.runLast,
    Effect.map((last) => Option.getOrThrow(Option.map(last, ({ event }) => event)))
  )
// #endregion deltas

// #region structured
const Trip = Schema.Struct({
  city: Schema.String,
  days: Schema.Number,
  sights: Schema.Array(Schema.String)
}).annotate({ identifier: "Trip" })

/** Shows the trip filling in as its JSON arrives, then the decoded value. */
export const planTrip = (chat: Chat.Service, messages: Messages.Messages) =>
  chat.streamStructured(messages, Trip).pipe(
    Stream.tap((event) =>
      event._tag === "Partial"
        ? Console.log(`so far: ${JSON.stringify(event.value)}`) // unknown: not checked against Trip yet
        : Effect.void
    ),
    Stream.runLast,
    Effect.flatMap((last) =>
      Option.match(last, {
        onNone: () => Effect.die(new Error("a structured stream that did not fail ends with Completed or Paused")),
        onSome: (event) =>
          event._tag === "Completed"
            ? Effect.as(Console.log(`${event.value.days} days in ${event.value.city}`), event.value) // typed
            // A turn with tools may end Paused, as completeStructured's does: resolve and stream again.
            : Effect.die(new Error(`the turn ended with ${event._tag}`))
      })
    )
  )
// #endregion structured

// #region program
export const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: toolkit })
  const last = yield* watchCalls(chat, Messages.fromUser("Delete the January and February logs."))
  yield* Console.log(`(the turn ended with ${last._tag})`)
  return yield* planTrip(chat, Messages.fromUser("Plan two days in Porto."))
}).pipe(Effect.provide(handlers))
// #endregion program

/** The offline model: asks to delete two logs; answers the trip as JSON when asked for a response format. */
export const offline: MockLanguageModel.Script = (request) =>
  request.options.responseFormat === undefined
    ? MockLanguageModel.toolCalls([{ id: "del_1", name: "delete_files", arguments: { paths: ["jan.log", "feb.log"] } }])
    : MockLanguageModel.text(JSON.stringify({ city: "Porto", days: 2, sights: ["Ribeira", "Livraria Lello"] }))

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Models.languageModel(choice, offline))))
}
