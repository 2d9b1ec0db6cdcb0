/**
 * A tool result's files (an MCP server's screenshot, say) reach the model as
 * files where the API takes them, never as base64 inside the result's text
 * (issue 24, defect 11): Responses sends them in the `function_call_output`'s
 * content list (images as `input_image`, other files as `input_file`); Chat
 * Completions' tool messages take text only, so each file is a short
 * placeholder there. A failed call's files (an MCP error result's image) go
 * the same way. Real SDK, replay server; the item shapes are checked against
 * the SDK's types.
 */
import { Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ResponseFunctionCallOutputItemList, ResponseInputItem } from "openai/resources/responses/responses"
import { chatModel, request, responsesModel, weatherTool } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const png = Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })
const pdf = Messages.file({ mediaType: "application/pdf", base64: "JVBERi0=", filename: "report.pdf" })
const mention = { content: [{ type: "image", mimeType: "image/png", file: 0 }, { type: "resource", file: 1 }] }

/** How the call ended: completed with the mention as its result, or failed with it as its error. */
const statuses = [
  { name: "completed", status: { _tag: "Completed", result: mention, files: [png, pdf] }, text: JSON.stringify(mention) },
  { name: "failed", status: { _tag: "Failed", error: mention, files: [png, pdf] }, text: JSON.stringify({ error: mention }) }
] as const

/** A conversation whose one call ended with two files, read back from its stored JSON as a resumed pause would be. */
const withFiles = (status: Messages.ToolCallStatus): Messages.Messages => {
  const messages: Messages.Messages = [
    Messages.user("Weather map of Paris?"),
    {
      role: "assistant",
      parts: [{
        ...Messages.toolCall({ id: "call_map", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }),
        status
      }]
    }
  ]
  const json = Messages.toJson(messages)
  if (json._tag === "Failure") throw new Error(json.failure.message)
  const back = Messages.fromJson(json.success)
  if (back._tag === "Failure") throw new Error(back.failure.message)
  return back.success
}

describe("tool results with files", () => {
  for (const { name, status, text } of statuses) {
    it.effect(`Responses, ${name} call: the function_call_output holds the text, then the image as input_image and the PDF as input_file`, () =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
        const model = yield* responsesModel(server)
        yield* model.generate(request(withFiles(status), [weatherTool]))
        const input = (server.requests[0]!.body as { readonly input: ReadonlyArray<ResponseInputItem> }).input
        const output: ResponseFunctionCallOutputItemList = [
          { type: "input_text", text },
          { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
          { type: "input_file", file_data: "data:application/pdf;base64,JVBERi0=", filename: "report.pdf" }
        ]
        expect(input[2]).toEqual({ type: "function_call_output", call_id: "call_map", output })
        expect(JSON.stringify(input[2])).not.toContain("\"data\":")
      }))

    it.effect(`Chat Completions, ${name} call: the tool message is the text and one placeholder per file, no bytes`, () =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
        const model = yield* chatModel(server)
        yield* model.generate(request(withFiles(status), [weatherTool]))
        const messages = (server.requests[0]!.body as { readonly messages: ReadonlyArray<Record<string, unknown>> }).messages
        expect(messages[2]).toEqual({
          role: "tool",
          tool_call_id: "call_map",
          content: [text, Messages.filePlaceholder(png, 0), Messages.filePlaceholder(pdf, 1)].join("\n")
        })
        expect(String(messages[2]!["content"])).not.toContain("iVBORw0KGgo")
      }))
  }
})
