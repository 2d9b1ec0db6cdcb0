// Tools: a result that holds an image, shown to the model as an image (not as base64 text).
import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Effect, Layer, Schema } from "effect"

// #region screenshot
const Screenshot = Tool.make("screenshot", {
  description: "Takes a screenshot of the page.",
  parameters: { url: Schema.String },
  success: Schema.Struct({ title: Schema.String, png: Schema.String }),
  splitFiles: ({ title, png }) => ({
    result: { title, png: { file: 0 } },
    files: [Messages.file({ mediaType: "image/png", base64: png })]
  })
})
// #endregion screenshot

// #region file-cap
// At most 2 MiB of files in one call's result (default: the toolkit's, else 5 MiB); each file past it becomes a note.
export const Camera = Tool.make("camera", {
  description: "Takes photos.",
  parameters: { count: Schema.Number },
  success: Schema.Array(Schema.String),
  maxResultFileBytes: 2 * 1024 * 1024,
  splitFiles: (jpegs) => ({
    result: jpegs.map((_, file) => ({ file })),
    files: jpegs.map((base64) => Messages.file({ mediaType: "image/jpeg", base64 }))
  })
})

// A cap for every tool of a toolkit that has none of its own.
export const cameras = Toolkit.make(Camera).pipe(Toolkit.withMaxResultFileBytes(20 * 1024 * 1024))
// #endregion file-cap

/** A one-pixel PNG, for the snippet's test. */
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

/** One screenshot through a scripted model: the stored status of the call, and what the model saw of it. */
export const takeScreenshot = Effect.gen(function*() {
  const model = MockLanguageModel.make([
    MockLanguageModel.toolCalls([{ id: "s1", name: "screenshot", arguments: { url: "https://example.com" } }]),
    MockLanguageModel.text("A page titled Example.")
  ])
  const tools = Toolkit.make(Screenshot)
  const handlers = tools.toLayer({ screenshot: () => Effect.succeed({ title: "Example", png: pixel }) })
  const chat = yield* Chat.make({ tools }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
  const result = yield* chat.complete(Messages.fromUser("What is on example.com?"))
  const last = model.requests[model.requests.length - 1]!
  return {
    status: Messages.findTool(result.messages, "s1")?.status,
    seen: Messages.projectToolCall(Messages.findTool(last.messages, "s1")!).result
  }
})
