/**
 * Files both ways through a real provider: `@ai-sdk/amazon-bedrock` sends a
 * user's image and a tool result's image as Converse `image` blocks (the
 * tool's in its `toolResult` content), on the loopback replay server; the
 * body's shape is the Converse reference's
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html).
 */
import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock"
import { Messages } from "@chat-ts/core"
import { ReplayServer } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as AiSdkLanguageModel from "../src/AiSdkLanguageModel.js"
import { eventStreamFetch } from "./support/eventStream.js"

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

describe("files through @ai-sdk/amazon-bedrock", () => {
  it.effect("a user's image and a tool result's image are sent as image blocks, the tool's inside its toolResult", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json({
        output: { message: { role: "assistant", content: [{ text: "A red pixel." }] } },
        stopReason: "end_turn",
        usage: { inputTokens: 30, outputTokens: 4, totalTokens: 34 },
        metrics: { latencyMs: 300 }
      }))
      const model = yield* AiSdkLanguageModel.make({
        model: createAmazonBedrock({ region: "us-east-1", accessKeyId: "AKIAFILES", secretAccessKey: "files-secret", fetch: eventStreamFetch(server.url) })(
          "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
        ),
        retry: false
      })
      const call = {
        ...Messages.toolCall({ id: "tooluse_shot1", name: "screenshot", arguments: "{}" }),
        status: { _tag: "Completed" as const, result: { shown: "file 0" }, files: [Messages.file({ mediaType: "image/png", base64: png })] }
      }
      const response = yield* model.generate({
        messages: [Messages.user([Messages.text("What is this?"), Messages.file({ mediaType: "image/png", base64: png })]), { role: "assistant", parts: [call] }],
        tools: [{ name: "screenshot", description: "Takes a screenshot.", parameters: { type: "object", properties: {} }, strict: false }],
        options: {}
      })
      expect(Messages.textOf({ role: "assistant", parts: response.parts })).toBe("A red pixel.")
      const messages = (server.requests[0]!.body as { messages: ReadonlyArray<{ role: string; content: ReadonlyArray<Record<string, unknown>> }> }).messages
      expect(messages[0]!.content).toContainEqual({ image: { format: "png", source: { bytes: png } } })
      const result = messages.flatMap((m) => m.content).find((block) => "toolResult" in block)!.toolResult as { toolUseId: string; content: ReadonlyArray<unknown> }
      expect(result.toolUseId).toBe("tooluse_shot1")
      expect(result.content).toContainEqual({ image: { format: "png", source: { bytes: png } } })
    }))
})
