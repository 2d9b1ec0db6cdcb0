import { LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as OpenAiResponses from "../src/OpenAiResponses.js"
import { decidedConversation, emailTool, request, responsesModel, weatherTool } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("What is the capital of France?")])

const encryptedOf = (sse: string, eventType: string, itemType: string): string => {
  for (const line of sse.split("\n")) {
    if (!line.startsWith("data: ")) continue
    const data = JSON.parse(line.slice(6)) as { type: string; item?: { type: string; encrypted_content?: string } }
    if (data.type === eventType && data.item?.type === itemType && data.item.encrypted_content !== undefined) {
      return data.item.encrypted_content
    }
  }
  throw new Error("no encrypted content in fixture")
}

describe("OpenAiResponses: responses", () => {
  it.effect("parses a text response with its usage and keeps the response id (text.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* responsesModel(server)
      const response = yield* model.generate(ask)
      expect(response.parts).toHaveLength(1)
      const part = response.parts[0]!
      expect(part._tag === "Text" && part.text.startsWith("I can't provide real-time updates")).toBe(true)
      expect(response.finishReason).toBe("stop")
      expect(response.usage).toEqual({ inputTokens: 14, outputTokens: 50, reasoningTokens: 0, cachedInputTokens: 0 })
      expect(response.providerMetadata).toEqual({
        openai: { responseId: "resp_689a0b2545288193953c892439b42e2800b2e36c65a1fd4b", model: "gpt-4o-mini-2024-07-18" }
      })
      expect(server.requests[0]!.path).toBe("/v1/responses")
    }))

  it.effect("parses a function call (function-call.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/function-call.json")))
      const model = yield* responsesModel(server)
      const response = yield* model.generate(ask)
      expect(response.parts).toEqual([
        Messages.toolCall({ id: "call_YfwRsW8sUxDKipwyhWTzOXCA", name: "get_capital", arguments: "{\"country\":\"PotatoLand\"}" })
      ])
      expect(response.finishReason).toBe("tool-calls")
      expect(response.usage).toEqual({ inputTokens: 40, outputTokens: 18, reasoningTokens: 0, cachedInputTokens: 0 })
    }))

  it.effect("parses parallel function calls (function-calls-parallel.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/function-calls-parallel.json")))
      const model = yield* responsesModel(server)
      const response = yield* model.generate(ask)
      expect(response.parts).toEqual([
        Messages.toolCall({ id: "call_LWVp74L5HaH2KNvgVz9PJsrj", name: "get_location", arguments: "{\"loc_name\":\"Londos\"}" }),
        Messages.toolCall({ id: "call_YnRAWeTyxI91m5uNa5bxXwVO", name: "get_location", arguments: "{\"loc_name\":\"London\"}" })
      ])
      expect(response.finishReason).toBe("tool-calls")
    }))
})

describe("OpenAiResponses: streaming", () => {
  it.effect("streams a function call: start, then argument deltas keyed by item id (stream-function-call.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("responses/stream-function-call.sse")))
      const model = yield* responsesModel(server)
      const parts = yield* Stream.runCollect(model.stream(ask))
      expect(parts[0]).toEqual({ _tag: "ToolCallStart", id: "call_kL0PCQV7M2WMoVX8V8OtYSAL", name: "get_capital" })
      expect(parts.filter((part) => part._tag === "ToolCallDelta")).toHaveLength(5)
      expect(parts[parts.length - 1]).toEqual({
        _tag: "Finish",
        usage: { inputTokens: 255, outputTokens: 16, reasoningTokens: 0, cachedInputTokens: 0 },
        finishReason: "tool-calls",
        providerMetadata: { openai: { responseId: "resp_67e554a155508191900ee113293c4c830794405d35281ae2", model: "gpt-4o-2024-08-06" } }
      })
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("responses/stream-function-call.sse")))
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.parts).toEqual([
        Messages.toolCall({ id: "call_kL0PCQV7M2WMoVX8V8OtYSAL", name: "get_capital", arguments: "{\"country\":\"France\"}" })
      ])
    }))

  it.effect("streams text (stream-text.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("responses/stream-text.sse")))
      const model = yield* responsesModel(server)
      const response = yield* LanguageModel.collect(model.stream(ask))
      expect(response.parts).toEqual([Messages.text("The capital of France is Paris.")])
      expect(response.finishReason).toBe("stop")
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["stream"]).toBe(true)
    }))

  it.effect("keeps reasoning's encrypted content as the signature and its item id (stream-function-call-reasoning.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const sse = ReplayServer.fixture("responses/stream-function-call-reasoning.sse")
      server.enqueue(ReplayServer.sse(sse))
      const model = yield* responsesModel(server, { model: "gpt-5", reasoningEffort: "low" })
      const response = yield* LanguageModel.collect(model.stream(request([Messages.user("Calculate 100 * 200 / 3")])))
      expect(response.parts).toEqual([
        {
          _tag: "Reasoning",
          text: "",
          signature: encryptedOf(sse, "response.output_item.done", "reasoning"),
          providerMetadata: { openai: { itemId: "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405" } }
        },
        Messages.toolCall({ id: "call_CWXgs68YprAjp6t0371hiPOI", name: "final_result", arguments: "{\"result\":6666}" })
      ])
      expect(response.usage).toEqual({ inputTokens: 53, outputTokens: 469, reasoningTokens: 448, cachedInputTokens: 0 })
      expect(response.finishReason).toBe("tool-calls")
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["reasoning"]).toEqual({ effort: "low" })
      expect(body["include"]).toEqual(["reasoning.encrypted_content"])
      expect(body["store"]).toBe(false)
    }))

  it.effect("streams reasoning summary deltas into one reasoning part (synthetic events)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const event = (data: object) => `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`
      const response = { id: "resp_1", object: "response", created_at: 1, status: "completed", model: "gpt-5", output: [], usage: { input_tokens: 1, output_tokens: 2, output_tokens_details: { reasoning_tokens: 1 }, input_tokens_details: { cached_tokens: 0 }, total_tokens: 3 } }
      server.enqueue(ReplayServer.sse(
        event({ type: "response.output_item.added", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } }) +
          event({ type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index: 0, delta: "First " }) +
          event({ type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index: 0, delta: "thought." }) +
          event({ type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index: 1, delta: "Second." }) +
          event({ type: "response.output_item.done", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "enc" } }) +
          event({ type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "42" }) +
          event({ type: "response.completed", response })
      ))
      const model = yield* responsesModel(server)
      const collected = yield* LanguageModel.collect(model.stream(ask))
      expect(collected.parts).toEqual([
        { _tag: "Reasoning", text: "First thought.\n\nSecond.", signature: "enc", providerMetadata: { openai: { itemId: "rs_1" } } },
        Messages.text("42")
      ])
    }))
})

describe("OpenAiResponses: request bodies", () => {
  it.effect("is stateless by default: whole history, store false, system prompt as instructions, tools with strict", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* responsesModel(server, { maxTokens: 200 })
      yield* model.generate(request(decidedConversation(), [weatherTool, emailTool], { toolChoice: "required", parallelToolCalls: true }))
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["store"]).toBe(false)
      // gpt-4o does not reason: asking it for encrypted reasoning is a 400.
      expect(body["include"]).toBeUndefined()
      expect(body["previous_response_id"]).toBeUndefined()
      expect(body["instructions"]).toBe("You are terse.")
      expect(body["max_output_tokens"]).toBe(200)
      expect(body["tool_choice"]).toBe("required")
      expect(body["parallel_tool_calls"]).toBe(true)
      expect(body["tools"]).toEqual([
        { type: "function", name: "get_weather", description: "The weather in a city.", parameters: weatherTool.parameters, strict: true },
        { type: "function", name: "send_email", description: "Sends an email.", parameters: emailTool.parameters, strict: false }
      ])
      expect(body["input"]).toEqual([
        { role: "user", content: "Weather in Paris, then email it to my boss." },
        { role: "assistant", content: "Checking." },
        { type: "function_call", call_id: "call_weather", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
        { type: "function_call", call_id: "call_email", name: "send_email", arguments: "{\"to\":\"boss@example.com\"}" },
        { type: "function_call_output", call_id: "call_weather", output: "{\"temperature\":21}" },
        {
          type: "function_call_output",
          call_id: "call_email",
          output: JSON.stringify({ error: "The user rejected this tool call; it did not run. Reason: Do not email my boss today" })
        }
      ])
    }))

  it.effect("chains with previous_response_id: only the answers and messages after the stored response", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* responsesModel(server, { previousResponseId: true })
      yield* model.generate(request(decidedConversation(), [weatherTool, emailTool]))
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["store"]).toBe(true)
      expect(body["include"]).toBeUndefined()
      expect(body["previous_response_id"]).toBe("resp_previous")
      expect(body["instructions"]).toBe("You are terse.")
      expect(body["input"]).toEqual([
        { type: "function_call_output", call_id: "call_weather", output: "{\"temperature\":21}" },
        {
          type: "function_call_output",
          call_id: "call_email",
          output: JSON.stringify({ error: "The user rejected this tool call; it did not run. Reason: Do not email my boss today" })
        }
      ])
    }))

  it.effect("sends reasoning back with its item id and encrypted content", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* responsesModel(server)
      yield* model.generate(request([
        Messages.user("Calculate 100 * 200 / 3"),
        {
          role: "assistant",
          parts: [
            { _tag: "Reasoning", text: "Multiply, then divide.", signature: "gAAAA-encrypted", providerMetadata: { openai: { itemId: "rs_1" } } },
            { _tag: "Reasoning", text: "from another provider" },
            { ...Messages.toolCall({ id: "call_1", name: "final_result", arguments: "{\"result\":6666}" }), status: { _tag: "Completed", result: "ok" } }
          ]
        }
      ]))
      const body = server.requests[0]!.body as { input: ReadonlyArray<unknown> }
      expect(body.input).toEqual([
        { role: "user", content: "Calculate 100 * 200 / 3" },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Multiply, then divide." }], encrypted_content: "gAAAA-encrypted" },
        { type: "function_call", call_id: "call_1", name: "final_result", arguments: "{\"result\":6666}" },
        { type: "function_call_output", call_id: "call_1", output: "ok" }
      ])
    }))

  it.effect("asks for structured output with text.format json_schema, and sends files as input_image / input_file", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* responsesModel(server)
      const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false }
      yield* model.generate(request([
        Messages.user([
          Messages.text("Describe"),
          Messages.file({ mediaType: "image/png", base64: "iVBO" }),
          Messages.file({ mediaType: "application/pdf", url: "https://example.com/a.pdf" })
        ])
      ], [], { responseFormat: { type: "json", name: "Answer", description: "The answer", schema, strict: true } }))
      const body = server.requests[0]!.body as Record<string, unknown>
      expect(body["text"]).toEqual({
        format: { type: "json_schema", name: "Answer", description: "The answer", schema, strict: true }
      })
      expect(body["input"]).toEqual([{
        role: "user",
        content: [
          { type: "input_text", text: "Describe" },
          { type: "input_image", image_url: "data:image/png;base64,iVBO", detail: "auto" },
          { type: "input_file", file_url: "https://example.com/a.pdf" }
        ]
      }])
    }))
})

describe("OpenAiResponses: reasoning round trips that real models accept", () => {
  it.effect("asks for encrypted reasoning only from reasoning models (gpt-4o and gpt-4.1 answer 400 to it)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const cases: ReadonlyArray<readonly [Partial<OpenAiResponses.Options>, boolean]> = [
        [{ model: "gpt-4o" }, false],
        [{ model: "gpt-4.1-mini" }, false],
        [{ model: "gpt-5-chat-latest" }, false],
        [{ model: "gpt-5-mini" }, true],
        [{ model: "o4-mini" }, true],
        [{ model: "openai/o3" }, true],
        [{ model: "my-azure-deployment", reasoningEffort: "low" }, true],
        [{ model: "my-azure-deployment", includeEncryptedReasoning: true }, true],
        [{ model: "gpt-5", includeEncryptedReasoning: false }, false],
        [{ model: "gpt-5", store: true }, false]
      ]
      for (const [options] of cases) {
        server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
        const model = yield* responsesModel(server, options)
        yield* model.generate(ask)
      }
      const asked = server.requests.map((r) => (r.body as Record<string, unknown>)["include"] !== undefined)
      expect(asked).toEqual(cases.map(([, include]) => include))
    }))

  it.effect("sends reasoning without encrypted content back by id only when responses are stored (else a 404)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const conversation = [
        Messages.user("Calculate 100 * 200 / 3"),
        {
          role: "assistant" as const,
          parts: [
            { _tag: "Reasoning" as const, text: "", providerMetadata: { openai: { itemId: "rs_plain" } } },
            Messages.text("6666.67")
          ]
        },
        Messages.user("And times two?")
      ]
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("responses/text.json")),
        ReplayServer.json(ReplayServer.fixture("responses/text.json"))
      )
      yield* (yield* responsesModel(server, { model: "gpt-5" })).generate(request(conversation))
      yield* (yield* responsesModel(server, { model: "gpt-5", store: true })).generate(request(conversation))
      const inputs = server.requests.map((r) => (r.body as { input: ReadonlyArray<{ type?: string }> }).input)
      expect(inputs[0]!.some((item) => item.type === "reasoning")).toBe(false)
      expect(inputs[1]).toContainEqual({ type: "reasoning", id: "rs_plain", summary: [] })
    }))

  it.effect("a recorded gpt-5 reasoning item goes back with its encrypted content on the next call (stream-function-call-reasoning.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const sse = ReplayServer.fixture("responses/stream-function-call-reasoning.sse")
      server.enqueue(ReplayServer.sse(sse), ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* responsesModel(server, { model: "gpt-5" })
      const first = yield* LanguageModel.collect(model.stream(request([Messages.user("Calculate 100 * 200 / 3")])))
      const parts = first.parts.map((part) =>
        part._tag === "ToolCall" ? { ...part, status: { _tag: "Completed" as const, result: 6666 } } : part
      )
      yield* model.generate(request([Messages.user("Calculate 100 * 200 / 3"), { role: "assistant", parts }]))
      const input = (server.requests[1]!.body as { input: ReadonlyArray<{ type?: string }> }).input
      expect(input.filter((item) => item.type === "reasoning")).toEqual([{
        type: "reasoning",
        id: "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405",
        summary: [],
        encrypted_content: encryptedOf(sse, "response.output_item.done", "reasoning")
      }])
      expect((server.requests[0]!.body as Record<string, unknown>)["include"]).toEqual(["reasoning.encrypted_content"])
    }))
})
