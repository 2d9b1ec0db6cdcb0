/**
 * `AnthropicLanguageModel.generate` on the real SDK against the replay
 * server: what goes on the wire (system, messages, tools, thinking, files,
 * caching, structured output, sampling) and what comes back.
 */
import { ChatError, type LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Stream from "effect/Stream"
import * as AnthropicLanguageModel from "../src/AnthropicLanguageModel.js"
import { apiKey, bodyOf, clientLayer, model, request, testTool, weatherTool } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const text = () => ReplayServer.json(ReplayServer.fixture("messages/text-after-tool.json"))

describe("generate", () => {
  it.effect("reads a recorded tool_use response: text, calls with their input as JSON text, usage, finish", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("messages/tool-use-parallel.json")))
      const m = yield* model(server)
      const response = yield* m.generate(request([Messages.user("Use the test_tool twice")], [testTool]))
      expect(response.parts).toEqual([
        Messages.text("I'll use the test_tool twice as requested - first with count 1, then with count 2."),
        Messages.toolCall({ id: "toolu_01L8GVQapA1HmggQcrwboukH", name: "test_tool", arguments: "{\"count\":1}" }),
        Messages.toolCall({ id: "toolu_01J5Fvzxu7DP1Uh59c1kr5JD", name: "test_tool", arguments: "{\"count\":2}" })
      ])
      expect(response.finishReason).toBe("tool-calls")
      expect(response.usage).toEqual({ inputTokens: 418, outputTokens: 113, cachedInputTokens: 0 })
      expect(response.providerMetadata).toEqual({
        anthropic: {
          messageId: "msg_014tGTGP6AJwJvBHFgXxjp88",
          model: "claude-opus-4-8",
          stopReason: "tool_use",
          cacheCreationInputTokens: 0,
          cacheReadInputTokens: 0
        }
      })
      const headers = server.requests[0]!.headers
      // SDK 1.x sends the key as a bearer token, with its API version.
      expect(headers["authorization"]).toBe(`Bearer ${apiKey}`)
      expect(headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(headers["x-stainless-retry-count"]).toBe("0")
    }))

  it.effect("sends system messages as system blocks, merges consecutive user messages, sends client headers", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text())
      const m = yield* AnthropicLanguageModel.make({ model: "claude-opus-4-8", retry: false }).pipe(
        Effect.provide(clientLayer(server, { headers: { "anthropic-beta": "files-api-2025-04-14" } }))
      )
      yield* m.generate(request([
        Messages.system("You are terse."),
        Messages.system("Answer in French."),
        Messages.user("Hello"),
        Messages.user("Again")
      ]))
      const body = bodyOf(server, 0)
      expect(body["system"]).toEqual([{ type: "text", text: "You are terse." }, { type: "text", text: "Answer in French." }])
      expect(body["messages"]).toEqual([{ role: "user", content: [{ type: "text", text: "Hello" }, { type: "text", text: "Again" }] }])
      expect(body["tools"]).toBeUndefined()
      expect(server.requests[0]!.headers["anthropic-beta"]).toBe("files-api-2025-04-14")
    }))

  it.effect("sends tool choice, parallel-call switch, stop sequences, user and provider options", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text(), text(), text())
      const m = yield* model(server, { user: "user-42" })
      yield* m.generate(request([Messages.user("Hi")], [testTool], {
        toolChoice: "required",
        parallelToolCalls: false,
        stop: ["END"],
        maxTokens: 100,
        providerOptions: { service_tier: "standard_only" }
      }))
      expect(bodyOf(server, 0)).toMatchObject({
        max_tokens: 100,
        tool_choice: { type: "any", disable_parallel_tool_use: true },
        stop_sequences: ["END"],
        metadata: { user_id: "user-42" },
        service_tier: "standard_only"
      })
      yield* m.generate(request([Messages.user("Hi")], [testTool], { toolChoice: { tool: "test_tool" } }))
      expect(bodyOf(server, 1)["tool_choice"]).toEqual({ type: "tool", name: "test_tool" })
      yield* m.generate(request([Messages.user("Hi")], [testTool], { toolChoice: "none" }))
      expect(bodyOf(server, 2)["tool_choice"]).toEqual({ type: "none" })
    }))

  it.effect("sends strict only when asked (strictTools), and never for non-strict declarations", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text(), text())
      yield* (yield* model(server)).generate(request([Messages.user("Hi")], [testTool]))
      expect(bodyOf(server, 0)["tools"]).toEqual([{
        name: "test_tool",
        description: "A test tool",
        input_schema: testTool.parameters
      }])
      yield* (yield* model(server, { strictTools: true })).generate(request([Messages.user("Hi")], [testTool, weatherTool]))
      expect((bodyOf(server, 1)["tools"] as Array<Record<string, unknown>>).map((tool) => tool["strict"])).toEqual([true, undefined])
    }))

  it.effect("images and documents from file parts; unsupported files are refused before sending", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text())
      const m = yield* model(server)
      yield* m.generate(request([Messages.user([
        Messages.text("What is in these?"),
        Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" }),
        Messages.file({ mediaType: "image/jpeg", url: "https://example.com/cat.jpg" }),
        Messages.file({ mediaType: "application/pdf", base64: "JVBERi0xLjQ=", filename: "report.pdf" }),
        Messages.file({ mediaType: "application/pdf", url: "https://example.com/paper.pdf" }),
        Messages.file({ mediaType: "text/plain", base64: Buffer.from("plain words").toString("base64"), filename: "notes.txt" })
      ])]))
      expect(bodyOf(server, 0)["messages"]).toEqual([{
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQ=" }, title: "report.pdf" },
          { type: "document", source: { type: "url", url: "https://example.com/paper.pdf" } },
          { type: "document", source: { type: "text", media_type: "text/plain", data: "plain words" }, title: "notes.txt" }
        ]
      }])
      const refused = (file: ReturnType<typeof Messages.file>) =>
        Effect.flip(m.generate(request([Messages.user([file])])))
      expect(yield* refused(Messages.file({ mediaType: "audio/wav", base64: "UklGRg==" }))).toBeInstanceOf(ChatError.InvalidRequest)
      expect(yield* refused(Messages.file({ mediaType: "image/bmp", base64: "Qk0=" }))).toBeInstanceOf(ChatError.InvalidRequest)
      expect(yield* refused(Messages.file({ mediaType: "text/plain", url: "https://example.com/a.txt" }))).toBeInstanceOf(
        ChatError.InvalidRequest
      )
      const inAssistant = yield* Effect.flip(m.generate(request([
        Messages.user("Hi"),
        Messages.assistant([Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })])
      ])))
      expect(inAssistant).toBeInstanceOf(ChatError.InvalidRequest)
      expect(server.requests).toHaveLength(1)
    }))
})

describe("extended thinking", () => {
  const thinkingResponse = () => ReplayServer.json(ReplayServer.fixture("constructed/thinking-tool-use.json"))

  it.effect("reads thinking (with its signature) and redacted thinking as Reasoning parts, and usage with cache and thinking tokens", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(thinkingResponse())
      const m = yield* model(server, { thinking: { type: "enabled", budgetTokens: 2048 } })
      const response = yield* m.generate(request([Messages.user("Weather in Paris?")], [weatherTool]))
      expect(response.parts.map((part) => part._tag)).toEqual(["Reasoning", "Reasoning", "Text", "ToolCall"])
      expect(response.parts[0]).toEqual({
        _tag: "Reasoning",
        text: "The user wants to know the current weather in Paris. I have access to a function `get_weather`...",
        signature: "BDaL4VrbR2Oj0hO4XpJxT28J5TILnCrrUXoKiiNBZW9P+nr8XSj1zuZzAl4egiCCpQNvfyUuFFJP5CncdYZEQPPmLxYsNrcs....",
        providerMetadata: { anthropic: { type: "thinking" } }
      })
      expect(response.parts[1]).toMatchObject({ _tag: "Reasoning", text: "", providerMetadata: { anthropic: { type: "redacted_thinking" } } })
      expect(response.usage).toEqual({ inputTokens: 2095 + 1024 + 3072, outputTokens: 503, reasoningTokens: 310, cachedInputTokens: 3072 })
      expect(response.providerMetadata?.["anthropic"]).toMatchObject({ cacheCreationInputTokens: 1024, cacheReadInputTokens: 3072 })
      const body = bodyOf(server, 0)
      expect(body["thinking"]).toEqual({ type: "enabled", budget_tokens: 2048 })
      expect(body["max_tokens"]).toBe(4096 + 2048)
    }))

  it.effect("sends thinking and redacted thinking back unchanged, in order, with the call's result in the tool loop", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(thinkingResponse(), text())
      const m = yield* model(server, { thinking: { type: "enabled", budgetTokens: 2048 } })
      const first = yield* m.generate(request([Messages.user("Weather in Paris?")], [weatherTool]))
      const raw = JSON.parse(ReplayServer.fixture("constructed/thinking-tool-use.json")) as { content: Array<unknown> }
      const answered = Messages.updateTool(
        [Messages.user("Weather in Paris?"), { role: "assistant", parts: first.parts }],
        "toolu_01CswdEQBMshySk6Y9DFKrfq",
        (call) => ({ ...call, status: { _tag: "Completed", result: { celsius: 21 } } })
      )
      // Round trip through the stored JSON form, as a paused conversation would be.
      const restored = yield* Effect.fromResult(Messages.fromJson(yield* Effect.fromResult(Messages.toJson(answered))))
      yield* m.generate(request(restored, [weatherTool]))
      expect(bodyOf(server, 1)["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
        { role: "assistant", content: raw.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01CswdEQBMshySk6Y9DFKrfq", content: "{\"celsius\":21}" }] }
      ])
    }))

  it.effect("a tool result's files go in its tool_result as image blocks (one it cannot take as a placeholder), never as base64 text", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text())
      const m = yield* model(server)
      const png = Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })
      const tiff = Messages.file({ mediaType: "image/tiff", base64: "SUkqAA==" })
      const answered: Messages.Messages = [
        Messages.user("Show me the chart"),
        {
          role: "assistant",
          parts: [{
            ...Messages.toolCall({ id: "toolu_chart", name: "test_tool", arguments: "{}" }),
            status: { _tag: "Completed", result: { content: [{ type: "image", file: 0 }, { type: "image", file: 1 }] }, files: [png, tiff] }
          }]
        }
      ]
      const restored = yield* Effect.fromResult(Messages.fromJson(yield* Effect.fromResult(Messages.toJson(answered))))
      yield* m.generate(request(restored, [testTool]))
      const messages = bodyOf(server, 0)["messages"] as ReadonlyArray<{ readonly content: ReadonlyArray<unknown> }>
      expect(messages[2]!.content).toEqual([{
        type: "tool_result",
        tool_use_id: "toolu_chart",
        content: [
          { type: "text", text: "{\"content\":[{\"type\":\"image\",\"file\":0},{\"type\":\"image\",\"file\":1}]}" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          { type: "text", text: Messages.filePlaceholder(tiff, 1) }
        ]
      }])
    }))

  it.effect("a failed call's files go in its tool_result (is_error) as image blocks the same way, never as base64 text", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text())
      const m = yield* model(server)
      const png = Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })
      const tiff = Messages.file({ mediaType: "image/tiff", base64: "SUkqAA==" })
      const error = { content: [{ type: "text", text: "render failed" }, { type: "image", file: 0 }, { type: "image", file: 1 }] }
      const answered: Messages.Messages = [
        Messages.user("Show me the chart"),
        {
          role: "assistant",
          parts: [{
            ...Messages.toolCall({ id: "toolu_chart", name: "test_tool", arguments: "{}" }),
            status: { _tag: "Failed", error, files: [png, tiff] }
          }]
        }
      ]
      const restored = yield* Effect.fromResult(Messages.fromJson(yield* Effect.fromResult(Messages.toJson(answered))))
      yield* m.generate(request(restored, [testTool]))
      const messages = bodyOf(server, 0)["messages"] as ReadonlyArray<{ readonly content: ReadonlyArray<unknown> }>
      expect(messages[2]!.content).toEqual([{
        type: "tool_result",
        tool_use_id: "toolu_chart",
        is_error: true,
        content: [
          { type: "text", text: JSON.stringify({ error }) },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          { type: "text", text: Messages.filePlaceholder(tiff, 1) }
        ]
      }])
    }))

  it.effect("drops reasoning that is not Anthropic's (another provider's, or without a signature)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text())
      const m = yield* model(server)
      yield* m.generate(request([
        Messages.user("Hi"),
        Messages.assistant([
          { _tag: "Reasoning", text: "openai reasoning", signature: "enc_abc", providerMetadata: { openai: { itemId: "rs_1" } } },
          { _tag: "Reasoning", text: "no signature", providerMetadata: { anthropic: { type: "thinking" } } },
          Messages.text("Hello")
        ]),
        Messages.user("Bye")
      ]))
      expect(bodyOf(server, 0)["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: "Hi" }] },
        { role: "assistant", content: [{ type: "text", text: "Hello" }] },
        { role: "user", content: [{ type: "text", text: "Bye" }] }
      ])
    }))

  it.effect("adaptive thinking; reasoningEffort as output_config.effort", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text(), text())
      const adaptive = yield* model(server, { thinking: { type: "adaptive" } })
      yield* adaptive.generate(request([Messages.user("Hi")], [], { reasoningEffort: "minimal", seed: 7 }))
      expect(bodyOf(server, 0)).toMatchObject({ thinking: { type: "adaptive" }, max_tokens: 4096, output_config: { effort: "low" } })
      const enabled = yield* model(server, { thinking: { type: "enabled", budgetTokens: 1024 } })
      yield* enabled.generate(request([Messages.user("Hi")]))
      expect(bodyOf(server, 1)).toMatchObject({ thinking: { type: "enabled", budget_tokens: 1024 }, max_tokens: 5120 })
      // The Messages API has no seed.
      expect(bodyOf(server, 0)["seed"]).toBeUndefined()
    }))

  it.effect("refuses a thinking budget below 1024 or not below maxTokens, before sending", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const low = yield* model(server, { thinking: { type: "enabled", budgetTokens: 500 } })
      expect(yield* Effect.flip(low.generate(request([Messages.user("Hi")])))).toBeInstanceOf(ChatError.InvalidRequest)
      const high = yield* model(server, { thinking: { type: "enabled", budgetTokens: 4000 }, maxTokens: 4000 })
      const error = yield* Effect.flip(high.generate(request([Messages.user("Hi")])))
      expect(error.message).toContain("below maxTokens (4000)")
      expect(server.requests).toHaveLength(0)
    }))
})

describe("prompt caching", () => {
  it.effect("puts cache_control on the last system block and the last tool; off by default", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text(), text())
      const cached = yield* model(server, { promptCaching: { ttl: "1h" } })
      yield* cached.generate(request([Messages.system("A"), Messages.system("B"), Messages.user("Hi")], [weatherTool, testTool]))
      const body = bodyOf(server, 0)
      expect(body["system"]).toEqual([{ type: "text", text: "A" }, { type: "text", text: "B", cache_control: { type: "ephemeral", ttl: "1h" } }])
      expect((body["tools"] as Array<Record<string, unknown>>).map((tool) => tool["cache_control"])).toEqual([
        undefined,
        { type: "ephemeral", ttl: "1h" }
      ])
      yield* (yield* model(server)).generate(request([Messages.system("A"), Messages.user("Hi")], [testTool]))
      expect(JSON.stringify(bodyOf(server, 1))).not.toContain("cache_control")
    }))
})

describe("structured output", () => {
  const format: LanguageModel.ResponseFormat = {
    type: "json",
    name: "Weather",
    schema: { type: "object", properties: { city: { type: "string" }, celsius: { type: "number" } }, required: ["city", "celsius"] },
    strict: true
  }

  it.effect("asks with a forced tool and reads its input back as the answer's text", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("constructed/structured-tool.json")))
      const m = yield* model(server)
      const response = yield* m.generate(request([Messages.user("Weather in Paris?")], [], { responseFormat: format }))
      expect(response.parts).toEqual([Messages.text("{\"city\":\"Paris\",\"celsius\":21}")])
      expect(response.finishReason).toBe("stop")
      expect(bodyOf(server, 0)).toMatchObject({
        tools: [{ name: "Weather", input_schema: format.schema }],
        tool_choice: { type: "tool", name: "Weather" }
      })
    }))

  it.effect("with other tools the model must call one (any): a real call stays a call", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("messages/tool-use.json")))
      const m = yield* model(server)
      const response = yield* m.generate(request([Messages.user("Hi")], [testTool], { responseFormat: format }))
      expect(response.parts.map((part) => part._tag)).toEqual(["Text", "ToolCall"])
      expect(response.finishReason).toBe("tool-calls")
      const body = bodyOf(server, 0)
      expect(body["tool_choice"]).toEqual({ type: "any" })
      expect((body["tools"] as Array<{ name: string }>).map((tool) => tool.name)).toEqual(["test_tool", "Weather"])
    }))

  it.effect("native: output_config.format (the default while thinking); a clash with a tool name is refused", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text(), text())
      yield* (yield* model(server, { structuredOutput: "native" })).generate(request([Messages.user("Hi")], [], { responseFormat: format }))
      expect(bodyOf(server, 0)["output_config"]).toEqual({ format: { type: "json_schema", schema: format.schema } })
      expect(bodyOf(server, 0)["tools"]).toBeUndefined()
      yield* (yield* model(server, { thinking: { type: "enabled", budgetTokens: 1024 } })).generate(
        request([Messages.user("Hi")], [], { responseFormat: format })
      )
      expect(bodyOf(server, 1)["output_config"]).toEqual({ format: { type: "json_schema", schema: format.schema } })
      const clash = yield* Effect.flip(
        (yield* model(server)).generate(request([Messages.user("Hi")], [{ ...testTool, name: "Weather" }], { responseFormat: format }))
      )
      expect(clash).toBeInstanceOf(ChatError.InvalidRequest)
      const forcedWhileThinking = yield* Effect.flip(
        (yield* model(server, { thinking: { type: "adaptive" }, structuredOutput: "tool" })).generate(
          request([Messages.user("Hi")], [], { responseFormat: format })
        )
      )
      expect(forcedWhileThinking.message).toContain("structuredOutput: \"native\"")
      expect(server.requests).toHaveLength(2)
    }))
})

describe("finish reasons", () => {
  const withStop = (stop_reason: string) => {
    const body = JSON.parse(ReplayServer.fixture("messages/text-after-tool.json")) as Record<string, unknown>
    return ReplayServer.json({ ...body, stop_reason })
  }
  it.effect("maps end_turn, stop_sequence, max_tokens, refusal, pause_turn, model_context_window_exceeded", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const reasons = ["end_turn", "stop_sequence", "max_tokens", "refusal", "pause_turn", "model_context_window_exceeded"]
      server.enqueue(...reasons.map(withStop))
      const m = yield* model(server)
      const out: Array<[string, string, unknown]> = []
      for (const reason of reasons) {
        const response = yield* m.generate(request([Messages.user("Hi")]))
        out.push([reason, response.finishReason, (response.providerMetadata?.["anthropic"] as { stopReason?: string }).stopReason])
      }
      expect(out).toEqual([
        ["end_turn", "stop", "end_turn"],
        ["stop_sequence", "stop", "stop_sequence"],
        ["max_tokens", "length", "max_tokens"],
        ["refusal", "content-filter", "refusal"],
        ["pause_turn", "other", "pause_turn"],
        ["model_context_window_exceeded", "length", "model_context_window_exceeded"]
      ])
    }))
})

describe("hostile or odd answers", () => {
  const recorded = () => JSON.parse(ReplayServer.fixture("messages/tool-use.json")) as Record<string, unknown> & { content: Array<Record<string, unknown>> }

  it.effect("a tool_use without an id is a MalformedResponse; odd usage counts are no counts", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const noId = recorded()
      noId.content = noId.content.map((block) => block["type"] === "tool_use" ? { ...block, id: "" } : block)
      const oddUsage = { ...recorded(), usage: { input_tokens: -3, output_tokens: "12", cache_read_input_tokens: 1.5, cache_creation_input_tokens: null } }
      server.enqueue(ReplayServer.json(noId), ReplayServer.json(oddUsage))
      const m = yield* model(server)
      expect(yield* Effect.flip(m.generate(request([Messages.user("Hi")], [testTool])))).toBeInstanceOf(ChatError.MalformedResponse)
      const response = yield* m.generate(request([Messages.user("Hi")], [testTool]))
      expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0 })
    }))

  it.effect("a __proto__ key in a call's input stays data: its arguments text keeps it, no prototype is touched", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const body = ReplayServer.fixture("messages/tool-use.json").replace("\"value\": \"test\"", "\"__proto__\": { \"polluted\": true }, \"value\": \"test\"")
      server.enqueue(ReplayServer.json(body))
      const response = yield* (yield* model(server)).generate(request([Messages.user("Hi")], [testTool]))
      const call = response.parts.find((part) => part._tag === "ToolCall")!
      expect(JSON.parse((call as Messages.ToolCallPart).arguments)).toEqual(JSON.parse("{\"__proto__\":{\"polluted\":true},\"value\":\"test\"}"))
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    }))
})


describe("sampling parameters (issue 32): the API version the SDK sends refuses them", () => {
  const logged = (logs: Array<string>) =>
    Logger.layer([Logger.make(({ logLevel, message }) => void logs.push(`${logLevel} ${Array.isArray(message) ? message.join(" ") : String(message)}`))])

  it.effect("a request's temperature and topP are not sent, with one warning naming them; providerOptions are sent as given", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(text(), text(), text())
      const logs: Array<string> = []
      const m = yield* model(server)
      yield* m.generate(request([Messages.user("Hi")], [], { temperature: 0.3, topP: 0.5 })).pipe(Effect.provide(logged(logs)))
      const body = bodyOf(server, 0)
      expect(body).not.toHaveProperty("temperature")
      expect(body).not.toHaveProperty("top_p")
      expect(body).not.toHaveProperty("top_k")
      expect(logs).toEqual([
        "Warn The request's temperature (0.3) and topP (0.5) are not sent: the Anthropic Messages API (version 2026-10-21) refuses sampling parameters (temperature, top_p, top_k)."
      ])
      // Nothing to say when nothing was asked.
      yield* m.generate(request([Messages.user("Hi")])).pipe(Effect.provide(logged(logs)))
      expect(logs).toHaveLength(1)
      // providerOptions are the caller's own body fields, for an endpoint that still takes them.
      yield* m.generate(request([Messages.user("Hi")], [], { temperature: 0.9, providerOptions: { temperature: 0.2 } })).pipe(
        Effect.provide(logged(logs))
      )
      expect(bodyOf(server, 2)["temperature"]).toBe(0.2)
      expect(logs).toHaveLength(1)
      expect(server.requests[0]!.headers["anthropic-version"]).toBe("2026-10-21")
    }))

  it.effect("streamed: the same body, warned once per call", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("stream/text.sse")))
      const logs: Array<string> = []
      const m = yield* model(server)
      yield* Stream.runDrain(m.stream(request([Messages.user("Hi")], [], { temperature: 1 }))).pipe(Effect.provide(logged(logs)))
      expect(bodyOf(server, 0)).not.toHaveProperty("temperature")
      expect(bodyOf(server, 0)["stream"]).toBe(true)
      expect(logs).toEqual([
        "Warn The request's temperature (1) is not sent: the Anthropic Messages API (version 2026-10-21) refuses sampling parameters (temperature, top_p, top_k)."
      ])
    }))

  it.effect("on the layer they are a compile error; set anyway, every call is an InvalidRequest and nothing is sent", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      // @ts-expect-error temperature is not an option of the layer
      const typed: AnthropicLanguageModel.Options = { model: "claude-opus-4-8", temperature: 0.3 }
      const m = yield* model(server, typed)
      const error = yield* Effect.flip(m.generate(request([Messages.user("Hi")])))
      expect(error).toBeInstanceOf(ChatError.InvalidRequest)
      expect(error.message).toBe(
        "AnthropicLanguageModel's temperature cannot be sent: the Anthropic Messages API (version 2026-10-21) refuses sampling parameters (temperature, top_p, top_k). Remove it from the layer's options."
      )
      const loose = { topP: 0.9, topK: 40 } as unknown as Partial<AnthropicLanguageModel.Options>
      const streamed = yield* Effect.flip(Stream.runDrain((yield* model(server, loose)).stream(request([Messages.user("Hi")]))))
      expect(streamed.message).toContain("AnthropicLanguageModel's topP, topK cannot be sent")
      expect(server.requests).toHaveLength(0)
    }))
})
