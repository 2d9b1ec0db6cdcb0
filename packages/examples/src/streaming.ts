/**
 * Streaming a turn to the console: text as it arrives, each tool call and
 * its result, and the pause at the end of a stream. Streaming the resolved
 * messages again continues the same turn.
 *
 *   npx tsx src/streaming.ts
 */
// #region imports
import { Action, Chat, ChatEvent, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Effect, Option, Schema, Stream, Terminal } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

const SearchFlights = Tool.make("search_flights", {
  description: "Search flights between two cities on a date.",
  parameters: { from: Schema.String, to: Schema.String, date: Schema.String },
  success: Schema.Array(Schema.Struct({ flight: Schema.String, departs: Schema.String, price: Schema.Number })),
  metadata: { requiresApproval: false }
})

const BookFlight = Tool.make("book_flight", {
  description: "Book a flight (charges the card on file).",
  parameters: { flight: Schema.String },
  success: Schema.Struct({ confirmation: Schema.String }),
  metadata: { requiresApproval: true }
})

export const toolkit = Toolkit.make(SearchFlights, BookFlight).pipe(
  Toolkit.withStrategy((_call, meta) => (meta.requiresApproval ? Action.RequireApproval() : Action.Execute()))
)

export const handlers = toolkit.toLayer({
  search_flights: () =>
    Effect.succeed([
      { flight: "TP1351", departs: "07:25", price: 129 },
      { flight: "FR7712", departs: "13:40", price: 64 }
    ]),
  book_flight: ({ flight }) => Effect.succeed({ confirmation: `${flight}-QX7P` })
})

// #region print
/** Prints one turn's events as they arrive; returns the last event (a pause or the completion). */
const printTurn = (chat: Chat.Service, messages: Messages.Messages) =>
  Effect.gen(function*() {
    const terminal = yield* Terminal.Terminal
    const print = (event: ChatEvent.ChatEvent) => {
      switch (event._tag) {
        case "TextDelta":
          return terminal.display(event.text)
        case "ToolCall":
          return Console.log(`\n-> ${event.call.name} ${event.call.arguments}`)
        case "ToolResult":
          return Console.log(`<- ${event.call.name}: ${event.call.status._tag}`)
        case "Completed":
          return Console.log("")
        default:
          return Effect.void
      }
    }
    const last = yield* chat.stream(messages).pipe(Stream.tap(print), Stream.runLast)
    // A stream that did not fail ends with its final event: Paused or Completed.
    return Option.getOrThrow(Option.filter(last, ChatEvent.isFinal))
  })
// #endregion print

// #region program
export const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: toolkit })
  let last = yield* printTurn(chat, Messages.fromUser("Find me the cheapest flight from Lisbon to Porto on 12 June and book it."))
  while (last._tag === "Paused") {
    // The pause is the last event of its stream: decide, then stream the resolved messages.
    let messages = last.messages
    for (const id of PauseReason.approvalIds(last.reason)) {
      yield* Console.log(`(approving ${Messages.findTool(messages, id)?.name})`)
      messages = yield* Effect.fromResult(Messages.approve(messages, id))
    }
    last = yield* printTurn(chat, messages)
  }
  return last.messages
}).pipe(Effect.provide(handlers))
// #endregion program

/** The offline model: searches, books the cheapest flight, then confirms. */
export const offline: MockLanguageModel.Script = (request) => {
  const last = request.messages.at(-1)
  if (last === undefined || last.role === "user") {
    return MockLanguageModel.toolCalls(
      [{ name: "search_flights", arguments: { from: "Lisbon", to: "Porto", date: "2026-06-12" } }],
      { text: "Let me search the flights first." }
    )
  }
  const call = Messages.toolCallsOf(last)[0]!
  if (call.name === "search_flights" && call.status._tag === "Completed") {
    const flights = call.status.result as ReadonlyArray<{ readonly flight: string; readonly price: number }>
    const cheapest = [...flights].sort((a, b) => a.price - b.price)[0]!
    return MockLanguageModel.toolCalls([{ name: "book_flight", arguments: { flight: cheapest.flight } }], {
      text: `The cheapest is ${cheapest.flight} at ${cheapest.price} EUR. Booking it now.`
    })
  }
  return call.status._tag === "Completed"
    ? MockLanguageModel.text(`Booked! Your confirmation is ${(call.status.result as { confirmation: string }).confirmation}.`)
    : MockLanguageModel.text("I did not book the flight.")
}

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Models.languageModel(choice, offline))))
}
