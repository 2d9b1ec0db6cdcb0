/**
 * Compatible servers whose reasoning must go back (issue 12, item 4): a turn
 * runs through `Chat` on the real SDK against the replay server, the model
 * calls a tool, and the request that carries the tool's result is checked.
 * Replies: `fixtures/constructed/` (built after each server's docs, see the
 * fixtures README), then the recorded `chat-completions/text.json`.
 */
import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import { clientLayer } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

type Body = { readonly messages: ReadonlyArray<{ readonly [key: string]: any }> }

const GetWeather = Tool.make("get_weather", {
  description: "The weather in a city.",
  parameters: { city: Schema.String },
  success: Schema.Struct({ temperature: Schema.Number })
})
const kit = Toolkit.make(GetWeather)
const handlers = kit.toLayer({ get_weather: () => Effect.succeed({ temperature: 21 }) })

const chatOn = (server: ReplayServer.ReplayServer, model: string) =>
  Chat.make({ tools: kit }).pipe(
    Effect.provide(Layer.merge(
      OpenAiChatCompletions.layer({ model, retry: false }).pipe(Layer.provide(clientLayer(server))),
      handlers
    ))
  )

const assistantOf = (server: ReplayServer.ReplayServer, request: number) =>
  (server.requests[request]!.body as Body).messages.find((m) => m.role === "assistant")!

describe("compatible servers: reasoning that must go back", () => {
  it.effect("DeepSeek thinking mode: reasoning_content goes back within the tool loop, not in later turns", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const text = ReplayServer.json(ReplayServer.fixture("chat-completions/text.json"))
      server.enqueue(ReplayServer.json(ReplayServer.fixture("constructed/deepseek-thinking-tool-call.json")), text, text)
      const chat = yield* chatOn(server, "deepseek-reasoner")
      const first = yield* chat.complete(Messages.fromUser("Weather in Hangzhou tomorrow?"))
      expect(first.outcome._tag).toBe("Complete")
      const reasoning = "The user wants the weather in Hangzhou tomorrow. I should call get_weather with the city."
      expect(first.messages[1]!.parts[0]).toEqual({
        _tag: "Reasoning",
        text: reasoning,
        providerMetadata: { openai: { field: "reasoning_content" } }
      })
      expect(assistantOf(server, 1)).toMatchObject({ reasoning_content: reasoning, tool_calls: [{ id: "call_00_kZ8qVnJm4Rw2T" }] })

      yield* chat.complete([...first.messages, Messages.user("And the day after?")])
      expect(assistantOf(server, 2)).not.toHaveProperty("reasoning_content")
    }))

  it.effect("Gemini 3: each call's extra_content (thought_signature) goes back on that call", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("constructed/gemini-tool-call-thought-signature.json")),
        ReplayServer.json(ReplayServer.fixture("chat-completions/text.json"))
      )
      const chat = yield* chatOn(server, "gemini-3-pro-preview")
      const result = yield* chat.complete(Messages.fromUser("Weather in Paris?"))
      expect(result.outcome._tag).toBe("Complete")
      expect(assistantOf(server, 1).tool_calls).toEqual([{
        id: "function-call-8413592375620394851",
        type: "function",
        function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
        extra_content: { google: { thought_signature: "CsoBAVSoXO6Pz2kQ0tR3bW1cm9EZXZPc2lnbmF0dXJlQQ==" } }
      }])
    }))

  it.effect("Gemini 3, streamed: the signature on the call's first fragment goes back the same way", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.sse(ReplayServer.fixture("constructed/gemini-stream-thought-signature.sse")),
        ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse"))
      )
      const chat = yield* chatOn(server, "gemini-3-pro-preview")
      yield* Stream.runDrain(chat.stream(Messages.fromUser("Weather in Paris?")))
      expect(assistantOf(server, 1).tool_calls[0].extra_content).toEqual({
        google: { thought_signature: "CsoBAVSoXO6Pz2kQ0tR3bW1cm9EZXZPc2lnbmF0dXJlQg==" }
      })
    }))

  it.effect("OpenRouter: streamed reasoning_details are merged by index and go back on the message", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.sse(ReplayServer.fixture("constructed/openrouter-reasoning-details.sse")),
        ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse"))
      )
      const chat = yield* chatOn(server, "anthropic/claude-sonnet-4.5")
      yield* Stream.runDrain(chat.stream(Messages.fromUser("Weather in Paris?")))
      const assistant = assistantOf(server, 1)
      expect(assistant.reasoning_details).toEqual([{
        type: "reasoning.text",
        text: "The user asks for Paris weather.",
        signature: "ErUBCkYIBhgCIkDsig+openrouter+example",
        format: "anthropic-claude-v1",
        index: 0
      }])
      // OpenRouter's plain `reasoning` text is shown, never sent back as reasoning_content.
      expect(assistant).not.toHaveProperty("reasoning_content")
      expect(assistant.tool_calls[0].id).toBe("toolu_01Xq7fWm2")
    }))
})
