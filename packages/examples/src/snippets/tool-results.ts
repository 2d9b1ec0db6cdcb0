// Tools: results with a size. A result longer than its cap reaches the model (and the stored state) cut, with a marker.
import { Chat, Messages, Tool, Toolkit, ToolResult } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Effect, Layer, Result, Schema } from "effect"

// #region cap
const ReadLog = Tool.make("read_log", {
  description: "Read a log file.",
  parameters: { path: Schema.String },
  success: Schema.String,
  // At most 20,000 characters of each result reach the model (default: the toolkit's, else 50,000).
  maxResultChars: 20_000
})

// A cap for every tool of a toolkit that has none of its own.
const tools = Toolkit.make(ReadLog).pipe(Toolkit.withMaxResultChars(100_000))
// #endregion cap

/** Where this example keeps full results (yours: a database, a bucket, a folder). */
export const saved = new Map<string, unknown>()

// #region store
// The full results that were cut go to the application's store; the marker the model reads names the key.
const fullResults = ToolResult.layerStore((full) =>
  Effect.sync(() => {
    const key = `results/${full.id}.json`
    saved.set(key, full.value)
    return key
  })
)
// #endregion store

/** A 1 MB log read through a scripted model: what the model saw of it, the stored document's size, and what was kept. */
export const readBigLog = Effect.gen(function*() {
  const model = MockLanguageModel.make([
    MockLanguageModel.toolCalls([{ id: "l1", name: "read_log", arguments: { path: "app.log" } }]),
    MockLanguageModel.text("The log is long; it starts with a boot.")
  ])
  const log = "boot ok\n".repeat(131_072)
  const handlers = tools.toLayer({ read_log: () => Effect.succeed(log) })
  const chat = yield* Chat.make({ tools }).pipe(Effect.provide(Layer.mergeAll(model.layer, handlers, fullResults)))
  const result = yield* chat.complete(Messages.fromUser("What is in app.log?"))
  const last = model.requests[model.requests.length - 1]!
  return {
    seen: Messages.projectToolCall(Messages.findTool(last.messages, "l1")!).result!.text,
    storedChars: Result.getOrThrow(Messages.toJson(result.messages)).length,
    kept: saved.get("results/l1.json") === log
  }
})
