import { LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { chatModel, decidedConversation, emailTool, request, weatherTool } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("What's the weather like in SF?")])

describe("OpenAiChatCompletions: responses", () => {
  it.effect("parses a text completion with its usage (text.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const model = yield* chatModel(server)
      const response = yield* model.generate(ask)
      expect(response.parts).toHaveLength(1)
      const part = response.parts[0]!
      expect(part._tag).toBe("Text")
      expect(part._tag === "Text" && part.text.startsWith("**Holiday Name:** Galaxy Day")).toBe(true)
      expect(response.finishReason).toBe("stop")
      expect(response.usage).toEqual({ inputTokens: 16, outputTokens: 363, reasoningTokens: 0, cachedInputTokens: 0 })
      expect(response.providerMetadata).toEqual({
        openai: { completionId: "chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU", model: "gpt-4.1-nano-2025-04-14" }
      })
      expect(server.requests[0]!.path).toBe("/v1/chat/completions")
      expect(server.requests[0]!.method).toBe("POST")
    }))

  it.effect("parses parallel tool calls, keeping the model's raw arguments (tool-calls-parallel.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/tool-calls-parallel.json")))
      const model = yield* chatModel(server)
      const response = yield* model.generate(ask)
      expect(response.parts).toEqual([
        Messages.toolCall({
          id: "call_fdNz3vOBKYgOIpMdWotB9MjY",
          name: "GetWeatherArgs",
          arguments: "{\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}"
        }),
        Messages.toolCall({
          id: "call_h1DWI1POMJLb0KwIyQHWXD4p",
          name: "get_stock_price",
          arguments: "{\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}"
        })
      ])
      expect(response.finishReason).toBe("tool-calls")
      expect(response.usage).toEqual({ inputTokens: 149, outputTokens: 60, reasoningTokens: 0 })
    }))
})

describe("OpenAiChatCompletions: streaming", () => {
  it.effect("streams text deltas and finishes with the usage chunk (stream-text.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse")))
      const model = yield* chatModel(server)
      const parts = yield* Stream.runCollect(model.stream(ask))
      const deltas = parts.filter((part) => part._tag === "TextDelta")
      expect(deltas.length).toBeGreaterThan(20)
      const last = parts[parts.length - 1]!
      expect(last).toEqual({
        _tag: "Finish",
        usage: { inputTokens: 14, outputTokens: 30, reasoningTokens: 0 },
        finishReason: "stop",
        providerMetadata: { openai: { completionId: "chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL", model: "gpt-4o-2024-08-06" } }
      })
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["stream"]).toBe(true)
      expect(body["stream_options"]).toEqual({ include_usage: true })
    }))

  it.effect("gathers a streamed text into one text part (stream-text.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse")))
      const model = yield* chatModel(server)
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.parts).toHaveLength(1)
      const part = response.parts[0]!
      expect(part._tag === "Text" && part.text.startsWith("I'm unable to")).toBe(true)
      expect(part._tag === "Text" && part.text.endsWith("weather app.")).toBe(true)
    }))

  it.effect("reads the include_usage stream with cached tokens (stream-text-include-usage.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text-include-usage.sse")))
      const model = yield* chatModel(server)
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.usage).toEqual({ inputTokens: 16, outputTokens: 300, reasoningTokens: 0, cachedInputTokens: 0 })
      expect(response.finishReason).toBe("stop")
      expect(response.parts).toHaveLength(1)
    }))

  it.effect("streams one tool call: start, then argument fragments (stream-tool-call.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-tool-call.sse")))
      const model = yield* chatModel(server)
      const parts = yield* Stream.runCollect(model.stream(ask))
      expect(parts[0]).toEqual({ _tag: "ToolCallStart", id: "call_CTf1nWJLqSeRgDqaCG27xZ74", name: "get_weather" })
      const fragments = parts.filter((part) => part._tag === "ToolCallDelta")
      expect(fragments).toHaveLength(10)
      expect(fragments.every((part) => part.id === "call_CTf1nWJLqSeRgDqaCG27xZ74")).toBe(true)
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-tool-call.sse")))
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.parts).toEqual([
        Messages.toolCall({
          id: "call_CTf1nWJLqSeRgDqaCG27xZ74",
          name: "get_weather",
          arguments: "{\"city\":\"San Francisco\",\"state\":\"CA\"}"
        })
      ])
      expect(response.finishReason).toBe("tool-calls")
      expect(response.usage).toEqual({ inputTokens: 48, outputTokens: 19, reasoningTokens: 0 })
    }))

  it.effect("streams two parallel tool calls keyed by index (stream-tool-calls-parallel.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-tool-calls-parallel.sse")))
      const model = yield* chatModel(server)
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.parts.map((part) => part._tag)).toEqual(["ToolCall", "ToolCall"])
      const [first, second] = response.parts as ReadonlyArray<Messages.ToolCallPart>
      expect(first!.name).toBe("GetWeatherArgs")
      expect(JSON.parse(first!.arguments)).toEqual({ city: "Edinburgh", country: "GB", units: "c" })
      expect(second!.name).toBe("get_stock_price")
      expect(JSON.parse(second!.arguments)).toEqual({ ticker: "AAPL", exchange: "NASDAQ" })
      expect(first!.id).not.toBe(second!.id)
      expect(response.finishReason).toBe("tool-calls")
    }))

  it.effect("maps interleaved fragments of two calls to their ids by index (synthetic chunks)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "chatcmpl-x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
      const call = (index: number, fields: object) => ({ tool_calls: [{ index, ...fields }] })
      server.enqueue(ReplayServer.sse(
        chunk(call(0, { id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } })) +
          chunk(call(1, { id: "call_b", type: "function", function: { name: "send_email", arguments: "{\"to\"" } })) +
          chunk(call(0, { function: { arguments: "{\"city\":" } })) +
          chunk(call(1, { function: { arguments: ":\"boss\"}" } })) +
          chunk(call(0, { function: { arguments: "\"Paris\"}" } })) +
          chunk({}, "tool_calls") +
          "data: [DONE]\n\n"
      ))
      const model = yield* chatModel(server)
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.parts).toEqual([
        Messages.toolCall({ id: "call_a", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }),
        Messages.toolCall({ id: "call_b", name: "send_email", arguments: "{\"to\":\"boss\"}" })
      ])
      expect(response.usage).toEqual(LanguageModel.noUsage)
    }))
})

describe("OpenAiChatCompletions: request bodies", () => {
  it.effect("declares tools (strict only when the declaration is), tool choice and parallel calls", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const model = yield* chatModel(server, { temperature: 0.2, maxTokens: 100 })
      yield* model.generate(
        request([Messages.user("Hi")], [weatherTool, emailTool], {
          toolChoice: { tool: "get_weather" },
          parallelToolCalls: false,
          temperature: 0.7
        })
      )
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["model"]).toBe("gpt-4o-2024-08-06")
      expect(body["tools"]).toEqual([
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "The weather in a city.",
            parameters: weatherTool.parameters,
            strict: true
          }
        },
        {
          type: "function",
          function: { name: "send_email", description: "Sends an email.", parameters: emailTool.parameters }
        }
      ])
      expect(body["tool_choice"]).toEqual({ type: "function", function: { name: "get_weather" } })
      expect(body["parallel_tool_calls"]).toBe(false)
      expect(body["temperature"]).toBe(0.7)
      expect(body["max_completion_tokens"]).toBe(100)
      expect(body["stream"]).toBe(false)
    }))

  it.effect("sends the system prompt, the calls with their edited arguments and the results of approve/reject", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const model = yield* chatModel(server)
      yield* model.generate(request(decidedConversation(), [weatherTool, emailTool]))
      const body = server.requests[0]!.body as { messages: ReadonlyArray<Record<string, unknown>> }
      expect(body.messages).toEqual([
        { role: "system", content: "You are terse." },
        { role: "user", content: "Weather in Paris, then email it to my boss." },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            { id: "call_weather", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
            { id: "call_email", type: "function", function: { name: "send_email", arguments: "{\"to\":\"boss@example.com\"}" } }
          ]
        },
        { role: "tool", tool_call_id: "call_weather", content: "{\"temperature\":21}" },
        {
          role: "tool",
          tool_call_id: "call_email",
          content: JSON.stringify({ error: "The user rejected this tool call; it did not run. Reason: Do not email my boss today" })
        }
      ])
    }))

  it.effect("shows a failed call's error and sends no result for an unresolved call", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const model = yield* chatModel(server)
      yield* model.generate(request([
        Messages.user("Go"),
        {
          role: "assistant",
          parts: [
            { ...Messages.toolCall({ id: "call_failed", name: "get_weather", arguments: "{}" }), status: { _tag: "Failed", error: "city missing" } },
            { ...Messages.toolCall({ id: "call_waiting", name: "get_weather", arguments: "{\"city\":\"Oslo\"}" }), status: { _tag: "AwaitingApproval" } }
          ]
        }
      ]))
      const body = server.requests[0]!.body as { messages: ReadonlyArray<Record<string, unknown>> }
      const tools = body.messages.filter((message) => message["role"] === "tool")
      expect(tools).toEqual([{ role: "tool", tool_call_id: "call_failed", content: "{\"error\":\"city missing\"}" }])
      expect(body.messages[1]!["content"]).toBeNull()
    }))

  it.effect("asks for structured output with a json_schema response format", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const model = yield* chatModel(server)
      const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false }
      yield* model.generate(request([Messages.user("Hi")], [], {
        responseFormat: { type: "json", name: "Answer", schema, strict: true }
      }))
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["response_format"]).toEqual({ type: "json_schema", json_schema: { name: "Answer", schema, strict: true } })
      expect(body["tools"]).toBeUndefined()
    }))

  it.effect("merges per-request provider options last into the body", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const model = yield* chatModel(server)
      yield* model.generate(request([Messages.user("Hi")], [], {
        temperature: 0.2,
        providerOptions: { service_tier: "flex", metadata: { ticket: "T-1" } }
      }))
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["service_tier"]).toBe("flex")
      expect(body["metadata"]).toEqual({ ticket: "T-1" })
      expect(body["temperature"]).toBe(0.2)
    }))

  it.effect("sends images as image_url parts and other files as base64 file parts", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")))
      const model = yield* chatModel(server, { maxTokens: 10, maxTokensParameter: "max_tokens" })
      yield* model.generate(request([
        Messages.user([
          Messages.text("What is in these?"),
          Messages.file({ mediaType: "image/png", url: "https://example.com/cat.png" }),
          Messages.file({ mediaType: "image/jpeg", base64: "AAAA" }),
          Messages.file({ mediaType: "application/pdf", base64: "JVBERi0=", filename: "doc.pdf" })
        ])
      ]))
      const body = server.requests[0]!.body as { messages: ReadonlyArray<Record<string, unknown>>; max_tokens: number }
      expect(body.max_tokens).toBe(10)
      expect(body.messages[0]).toEqual({
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,AAAA" } },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "doc.pdf" } }
        ]
      })
    }))

  it.effect("refuses a file it cannot send, before any request", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const model = yield* chatModel(server)
      const error = yield* Effect.flip(model.generate(request([
        Messages.user([Messages.file({ mediaType: "application/pdf", url: "https://example.com/doc.pdf" })])
      ])))
      expect(error._tag).toBe("InvalidRequest")
      expect(server.requests).toHaveLength(0)
    }))
})

describe("OpenAiChatCompletions: stream_options", () => {
  it.effect("streamUsage: false sends no stream_options (older vLLM / Fireworks refuse it); providerOptions can set it", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse")),
        ReplayServer.sse(ReplayServer.fixture("chat-completions/stream-text.sse"))
      )
      const off = yield* chatModel(server, { streamUsage: false })
      const parts = yield* Stream.runCollect(off.stream(ask))
      expect(parts[parts.length - 1]!._tag).toBe("Finish")
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body).not.toHaveProperty("stream_options")
      expect(body["stream"]).toBe(true)

      const custom = yield* chatModel(server)
      yield* Stream.runDrain(custom.stream(request(ask.messages, [], { providerOptions: { stream_options: { include_usage: false } } })))
      expect((server.requests[1]!.body as Record<string, unknown>)["stream_options"]).toEqual({ include_usage: false })
    }))
})
