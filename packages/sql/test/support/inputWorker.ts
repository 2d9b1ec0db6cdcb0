/**
 * A process streaming one turn with an input side (issue 37), checkpointing every state to the
 * SQLite store (`SQLITE_FILE`, `TABLE`, migrating it) under conversation `CONVERSATION`: it loads
 * the conversation (or starts it with "Pay the bill."), streams it with `chat.stream(…, { input })`
 * and writes one JSON line per event (`{"event": tag}`); each stdin line is a user message sent as
 * input. The model streams one part every `DELAY_MS`: first a `pay` call (auto-approved; each run
 * appended to `RUNS_FILE` before it works), then text. Killed with `kill -9` by the test mid-burst.
 */
import { Action, Chat, ChatInput, ConversationStore, Messages, Tool, Toolkit } from "@chat-ts/core"
import type { LanguageModel } from "@chat-ts/core"
import * as Core from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Effect, Layer, Option, Queue, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as readline from "node:readline"
import { SqliteClient, SqlConversationStore } from "../../src/index.js"

const Pay = Tool.make("pay", { description: "Pay.", parameters: { bill: Schema.String }, success: Schema.String })
const tools = Toolkit.withStrategy(Toolkit.make(Pay), () => Action.Execute())
const handlers = tools.toLayer({
  pay: ({ bill }) => Effect.sync(() => (fs.appendFileSync(process.env["RUNS_FILE"]!, JSON.stringify({ bill, pid: process.pid }) + "\n"), "paid"))
})

const delay = Number(process.env["DELAY_MS"] ?? "100")
const scripted = MockLanguageModel.make((request) =>
  request.messages.some((message) => message.role === "assistant")
    ? MockLanguageModel.text("Paid. Is there anything else I can help you with today, at all?")
    : MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { bill: "b-1" } }])
)
const slow: LanguageModel.Service = {
  generate: scripted.generate,
  stream: (request) => Stream.tap(scripted.stream(request), () => Effect.sleep(`${delay} millis`))
}

const reply = (value: object) => process.stdout.write(JSON.stringify(value) + "\n")
const table = process.env["TABLE"]!
const id = process.env["CONVERSATION"]!

const program = Effect.gen(function*() {
  yield* SqlConversationStore.migrate({ table })
  const store = yield* ConversationStore.ConversationStore
  const loaded = yield* store.load(id)
  const stored = Option.isSome(loaded) ? loaded.value : yield* store.save(id, Messages.fromUser("Pay the bill."))
  const input = yield* Queue.unbounded<ChatInput.ChatInput>()
  readline.createInterface({ input: process.stdin }).on("line", (line) => void Queue.offerUnsafe(input, Messages.user(line)))
  const chat = yield* Chat.make({ tools })
  reply({ ready: true })
  yield* chat.stream(stored.messages, { input, checkpoint: ConversationStore.checkpoint(store, id, stored.version) }).pipe(
    Stream.runForEach((event) => Effect.sync(() => reply({ event: event._tag })))
  )
  reply({ done: true })
})

const layer = Layer.mergeAll(SqlConversationStore.layer({ table }), handlers, Core.LanguageModel.layer(slow)).pipe(
  Layer.provideMerge(SqliteClient.layer({ filename: process.env["SQLITE_FILE"]! }))
)

Effect.runPromise(Effect.provide(program, layer)).then(
  () => process.exit(0),
  (error) => {
    reply({ error: String(error) })
    process.exit(1)
  }
)
