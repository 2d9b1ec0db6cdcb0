/**
 * The bridge over an `effect/ai` model that speaks OpenAI's Responses API
 * over real HTTP (support/overChatTs.ts, made with `LanguageModel.make`; no
 * `@effect/ai-openai` loads on Effect 4.1) against the loopback replay server
 * with recorded OpenAI Responses traffic: text, a streamed answer, tool
 * declarations, a tool call that pauses for approval through chat-ts's
 * `Chat`, approval with an edit and resume, structured output and the errors.
 */
import { Action, Chat, ChatError, LanguageModel, Messages, Tool, Toolkit } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as AiError from "effect/ai/AiError"
import * as AiLanguageModel from "effect/ai/LanguageModel"
import type * as AiResponse from "effect/ai/Response"
import * as AiTool from "effect/ai/Tool"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { EffectAi } from "../src/index.js"
import { apiKey, bridged, Config, ownFixture, ReplayServer } from "./support/openai.js"
import * as Scripted from "./support/scripted.js"

const ask: LanguageModel.Request = {
  messages: Messages.fromUser("What's the weather like in San Francisco?"),
  tools: [],
  options: {}
}

/** The bridged model, built in the test's scope (its HTTP client lives as long as the test). */
const modelOn = (server: ReplayServer.ReplayServer, options?: Parameters<typeof bridged>[1]) =>
  Effect.map(Layer.build(bridged(server, options)), Context.get(LanguageModel.LanguageModel))

const body = (server: ReplayServer.ReplayServer, index: number) => server.requests[index]!.body as Record<string, unknown>

/** The text deltas of a recorded SSE body, joined. */
const sseText = (sse: string) =>
  sse.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>)
    .filter((event) => event["type"] === "response.output_text.delta").map((event) => event["delta"]).join("")

describe("EffectAi bridge: answers", () => {
  it.effect("text: parts, usage, finish reason and the response id (responses/text.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* modelOn(server)
      const response = yield* model.generate(ask)
      const recorded = JSON.parse(ReplayServer.fixture("responses/text.json"))
      expect(response.parts).toEqual([Messages.text(recorded.output[0].content[0].text)])
      expect(response.usage).toEqual({ inputTokens: 14, outputTokens: 50, reasoningTokens: 0, cachedInputTokens: 0 })
      expect(response.finishReason).toBe("stop")
      expect(response.providerMetadata?.[EffectAi.metadataKey]).toMatchObject({ response: { id: recorded.id, modelId: recorded.model } })
      expect(body(server, 0)).toMatchObject({
        model: "gpt-4o",
        input: [{ role: "user", content: "What's the weather like in San Francisco?" }]
      })
      expect(server.requests[0]!.headers["authorization"]).toBe(`Bearer ${apiKey}`)
    }))

  it.effect("streams text delta by delta, then the finish with usage (responses-stream-text-sequenced.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const sse = ownFixture("responses-stream-text-sequenced.sse")
      server.enqueue(ReplayServer.sse(sse))
      const model = yield* modelOn(server)
      const parts = yield* Stream.runCollect(model.stream(ask))
      const deltas = parts.filter((part) => part._tag === "TextDelta")
      expect(deltas.length).toBeGreaterThan(3)
      expect(deltas.map((part) => part._tag === "TextDelta" && part.text).join("")).toBe(sseText(sse))
      expect(deltas[0]).toMatchObject({ start: true })
      const finish = parts[parts.length - 1]
      expect(finish?._tag).toBe("Finish")
      const response = yield* LanguageModel.collect(Stream.fromIterable(parts))
      expect(response.parts).toEqual([Messages.text(sseText(sse))])
      expect(body(server, 0)["stream"]).toBe(true)
    }))

  it.effect("streams reasoning and a tool call's arguments as fragments (responses/stream-function-call-reasoning.sse)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ReplayServer.fixture("responses/stream-function-call-reasoning.sse")))
      const model = yield* modelOn(server)
      const tools: ReadonlyArray<LanguageModel.ToolDeclaration> = [{
        name: "final_result",
        description: "The final result.",
        parameters: { type: "object", properties: {}, additionalProperties: true },
        strict: false
      }]
      const parts = yield* Stream.runCollect(model.stream({ ...ask, tools }))
      expect(parts.filter((part) => part._tag === "ToolCallDelta").length).toBeGreaterThan(1)
      const response = yield* LanguageModel.collect(Stream.fromIterable(parts))
      const call = response.parts.find((part) => part._tag === "ToolCall")
      expect(call?._tag === "ToolCall" && call.name).toBe("final_result")
      expect(call?._tag === "ToolCall" && typeof JSON.parse(call.arguments)).toBe("object")
      // The reasoning item's encrypted content is kept, to be sent back with the next request.
      const reasoning = response.parts.find((part) => part._tag === "Reasoning")
      const openai = reasoning?._tag === "Reasoning" ? reasoning.providerMetadata?.["openai"] as Record<string, unknown> : undefined
      expect(String(openai?.["encryptedContent"])).toMatch(/^gAAAAA/)
      const again = EffectAi.toPrompt([Messages.user("hi"), { role: "assistant", parts: response.parts }])
      const sentBack = again.content[1]!
      expect(sentBack.role === "assistant" && sentBack.content.find((part) => part.type === "reasoning")?.options).toMatchObject({
        openai: { encryptedContent: openai?.["encryptedContent"] }
      })
      expect(response.finishReason).toBe("tool-calls")
    }))

  it.effect("structured output goes out as the requested JSON Schema and comes back as the JSON text", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ownFixture("responses-structured-echo-schema.json")))
      const model = yield* modelOn(server)
      const schema = {
        type: "object",
        properties: { value: { type: "array", items: { type: "string" } } },
        required: ["value"],
        additionalProperties: false
      }
      const response = yield* model.generate({
        ...ask,
        options: { responseFormat: { type: "json", name: "cities", schema, strict: true } }
      })
      expect(response.parts).toEqual([Messages.text("{\"value\":[\"Paris\",\"Lyon\",\"Marseille\"]}")])
      expect(body(server, 0)["text"]).toMatchObject({ format: { type: "json_schema", name: "cities", schema, strict: true } })
    }))

  it.effect("sends chat-ts's options through `requestContext` (here the provider's temperature and token limit)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* modelOn(server, {
        bridge: {
          requestContext: (options) =>
            Context.make(Config, {
              ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
              ...(options.maxTokens === undefined ? {} : { max_output_tokens: options.maxTokens })
            })
        }
      })
      yield* model.generate({ ...ask, options: { temperature: 0.25, maxTokens: 300 } })
      expect(body(server, 0)).toMatchObject({ temperature: 0.25, max_output_tokens: 300 })
    }))
})

// ---------------------------------------------------------------------------
// Tools through chat-ts's Chat: pause, approve with an edit, reject, resume
// ---------------------------------------------------------------------------

const GetLocation = Tool.make("get_location", {
  description: "Where a place is.",
  parameters: { loc_name: Schema.String },
  success: Schema.Struct({ lat: Schema.Number, lng: Schema.Number })
})
const places = Toolkit.make(GetLocation).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))
const placesHandlers = (ran: Array<unknown>) =>
  places.toLayer({ get_location: (params) => Effect.sync(() => (ran.push(params), { lat: 51.5, lng: -0.12 })) })
const londosId = "call_LWVp74L5HaH2KNvgVz9PJsrj"
const londonId = "call_YnRAWeTyxI91m5uNa5bxXwVO"

describe("EffectAi bridge: tool calls through Chat", () => {
  it.effect("pauses for approval, resumes with the edited call, the rejection and the result (function-calls-parallel.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("responses/function-calls-parallel.json")),
        ReplayServer.json(ReplayServer.fixture("responses/text.json"))
      )
      const ran: Array<unknown> = []
      const context = yield* Layer.build(Layer.merge(bridged(server), placesHandlers(ran)))
      const chat = yield* Chat.make({ tools: places, system: "Use the tools." }).pipe(Effect.provide(context))
      const first = yield* chat.complete(Messages.fromUser("What is the location of Londos and London?"))
      expect(first.outcome).toMatchObject({ _tag: "Paused", reason: { _tag: "AwaitingApproval", toolIds: [londosId, londonId] } })
      expect(ran).toEqual([])

      // The tools went out with chat-ts's own JSON Schema of the parameters.
      expect(body(server, 0)["tools"]).toEqual([{
        type: "function",
        name: "get_location",
        description: "Where a place is.",
        parameters: chat.tools[0]!.parameters,
        strict: true
      }])
      // The stand-in provider (chat-ts's Responses wire) sends a leading system message as `instructions`.
      expect(body(server, 0)["instructions"]).toBe("Use the tools.")
      expect(body(server, 0)["input"]).toEqual([
        { role: "user", content: "What is the location of Londos and London?" }
      ])

      // The paused state goes through JSON, as it would between two requests.
      const stored = yield* Effect.fromResult(Messages.toJson(first.messages))
      const restored = yield* Effect.fromResult(Messages.fromJson(stored))
      const approved = yield* chat.approve(restored, londosId, { loc_name: "London" })
      const decided = yield* Effect.fromResult(Messages.reject(approved, londonId, "Only one lookup, please"))
      const second = yield* chat.resume(decided)
      expect(second.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ loc_name: "London" }])

      const input = body(server, 1)["input"] as ReadonlyArray<Record<string, unknown>>
      expect(input.filter((item) => item["type"] === "function_call")).toEqual([
        { type: "function_call", call_id: londosId, name: "get_location", arguments: "{\"loc_name\":\"London\"}" },
        { type: "function_call", call_id: londonId, name: "get_location", arguments: "{\"loc_name\":\"London\"}" }
      ])
      expect(input.filter((item) => item["type"] === "function_call_output")).toEqual([
        { type: "function_call_output", call_id: londosId, output: "{\"lat\":51.5,\"lng\":-0.12}" },
        {
          type: "function_call_output",
          call_id: londonId,
          output: JSON.stringify({ error: "The user rejected this tool call; it did not run. Reason: Only one lookup, please" })
        }
      ])
    }))

  it.effect("a Schema.Unknown parameter is sent as its title alone, without the $id Effect 3 wrote", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const Annotate = Tool.make("annotate", { description: "Attach free-form data.", parameters: { data: Schema.Unknown } })
      const kit = Toolkit.make(Annotate)
      const context = yield* Layer.build(Layer.merge(bridged(server), kit.toLayer({ annotate: () => Effect.void })))
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(context))
      yield* chat.complete(Messages.fromUser("Hi"))
      const tools = body(server, 0)["tools"] as ReadonlyArray<Record<string, unknown>>
      expect(tools[0]!["parameters"]).toStrictEqual({
        type: "object",
        required: ["data"],
        properties: { data: { title: "unknown" } },
        additionalProperties: false
      })
      expect(JSON.stringify(body(server, 0))).not.toContain("$id")
    }))

  it.effect("streams the same turn through Chat.stream", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.sse(ownFixture("responses-stream-text-sequenced.sse")))
      const chat = yield* Chat.make({}).pipe(Effect.provide(yield* Layer.build(bridged(server))))
      const events = yield* Stream.runCollect(chat.stream(Messages.fromUser("Hi")))
      expect(events.filter((event) => event._tag === "TextDelta").length).toBeGreaterThan(3)
      expect(events[events.length - 1]?._tag).toBe("Completed")
    }))
})

describe("EffectAi bridge: what does not map", () => {
  it.effect("a call to a tool that was not declared fails the call with MalformedResponse (function-call.json)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/function-call.json")))
      const model = yield* modelOn(server)
      const tools: ReadonlyArray<LanguageModel.ToolDeclaration> = [{
        name: "other_tool",
        description: "Not the one the model calls.",
        parameters: { type: "object", properties: {}, additionalProperties: false },
        strict: true
      }]
      const error = yield* Effect.flip(model.generate({ ...ask, tools }))
      expect(error._tag).toBe("MalformedResponse")
    }))

  it.effect("a stream with a response format arrives as one whole piece", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ownFixture("responses-structured-echo-schema.json")))
      const model = yield* modelOn(server)
      const schema = { type: "object", properties: { value: { type: "array", items: { type: "string" } } }, required: ["value"], additionalProperties: false }
      const parts = yield* Stream.runCollect(model.stream({
        ...ask,
        options: { responseFormat: { type: "json", name: "cities", schema, strict: true } }
      }))
      expect(parts.map((part) => part._tag)).toEqual(["Part", "Finish"])
      expect(body(server, 0)["stream"]).toBe(false)
    }))
})

describe("EffectAi bridge: declarations and prompts", () => {
  it("a declared tool's JSON Schema is exactly the declaration's, nested definitions included", () => {
    const parameters = {
      type: "object",
      properties: { node: { $ref: "#/$defs/Node" }, tags: { type: "array", items: { type: "string" } } },
      required: ["node", "tags"],
      additionalProperties: false,
      $defs: { Node: { type: "object", properties: { next: { anyOf: [{ $ref: "#/$defs/Node" }, { type: "null" }] } } } }
    }
    const tool = EffectAi.toTool({ name: "walk", description: "Walk a list.", parameters, strict: false })
    expect(AiTool.getJsonSchema(tool)).toEqual(parameters)
    expect(tool.name).toBe("walk")
    expect(AiTool.getDescription(tool)).toBe("Walk a list.")
    expect(AiTool.getStrictMode(tool)).toBe(false)
  })

  it("a result's files go in the tool result's modelOutput as file parts (after its text), not inside its value", () => {
    const messages: Messages.Messages = [
      Messages.user("go"),
      Messages.assistant([{
        ...Messages.toolCall({ id: "a", name: "t", arguments: "{}" }),
        status: { _tag: "Completed", result: { image: { file: 0 } }, files: [Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })] }
      }])
    ]
    const tool = EffectAi.toPrompt(messages).content[2]!
    const part = tool.role === "tool" ? tool.content[0] : undefined
    expect(part?.type === "tool-result" && part.result).toEqual({ image: { file: 0 } })
    const output = part?.type === "tool-result" ? part.modelOutput ?? [] : []
    expect(output.map((item) => item.type === "text" ? item.text : [item.mediaType, item.data instanceof Uint8Array])).toEqual([
      "{\"image\":{\"file\":0}}",
      ["image/png", true]
    ])
  })

  it("a failed call's files go in its failed tool result's modelOutput the same way, not inside its value", () => {
    const messages: Messages.Messages = [
      Messages.user("go"),
      Messages.assistant([{
        ...Messages.toolCall({ id: "a", name: "t", arguments: "{}" }),
        status: { _tag: "Failed", error: { image: { file: 0 } }, files: [Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })] }
      }])
    ]
    const tool = EffectAi.toPrompt(messages).content[2]!
    const part = tool.role === "tool" ? tool.content[0] : undefined
    expect(part?.type === "tool-result" && part.isFailure).toBe(true)
    expect(part?.type === "tool-result" && part.result).toEqual({ error: { image: { file: 0 } } })
    const output = part?.type === "tool-result" ? part.modelOutput ?? [] : []
    expect(output.map((item) => item.type === "text" ? item.text : [item.mediaType, item.data instanceof Uint8Array])).toEqual([
      "{\"error\":{\"image\":{\"file\":0}}}",
      ["image/png", true]
    ])
  })

  it("a rejected or failed call goes back as a failed tool result; an unanswered call has no result", () => {
    const messages: Messages.Messages = [
      Messages.user("go"),
      Messages.assistant([
        { ...Messages.toolCall({ id: "a", name: "t", arguments: "{\"x\":1}" }), status: { _tag: "Rejected", by: "user", reason: "no" } },
        { ...Messages.toolCall({ id: "b", name: "t", arguments: "{}" }), status: { _tag: "Failed", error: "boom" } },
        { ...Messages.toolCall({ id: "c", name: "t", arguments: "{}" }), status: { _tag: "AwaitingApproval" } }
      ])
    ]
    const prompt = EffectAi.toPrompt(messages)
    expect(prompt.content.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
    const tool = prompt.content[2]!
    expect(tool.role === "tool" && tool.content.map((part) => part.type === "tool-result" ? [part.id, part.isFailure, part.result] : part.type)).toEqual([
      ["a", true, { error: "The user rejected this tool call; it did not run. Reason: no" }],
      ["b", true, { error: "boom" }]
    ])
  })
})

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

describe("EffectAi bridge: errors", () => {
  const failWith = (reply: ReplayServer.Reply, mode: "generate" | "stream" = "generate") =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(reply)
      const model = yield* modelOn(server)
      return yield* Effect.flip(mode === "generate" ? model.generate(ask) : LanguageModel.collect(model.stream(ask)))
    })

  it.effect("a 400 is an InvalidRequest with the provider's message, not retryable (invalid-request-400-responses.json)", () =>
    Effect.gen(function*() {
      const error = yield* failWith(ReplayServer.json(ReplayServer.fixture("errors/invalid-request-400-responses.json"), { status: 400 }))
      expect(error).toMatchObject({ _tag: "InvalidRequest", status: 400, code: "decimal_below_min_value" })
      expect(error.message).toContain("Invalid 'temperature'")
      expect(ChatError.isRetryable(error)).toBe(false)
    }))

  it.effect("a 429 with retry-after is a retryable RateLimited; an exhausted quota is not retryable", () =>
    Effect.gen(function*() {
      const limited = yield* failWith(ReplayServer.json({
        error: { message: "Rate limit reached. Please try again in 3s.", type: "requests", param: null, code: "rate_limit_exceeded" }
      }, { status: 429, headers: { "retry-after": "3" } }))
      expect(limited).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 3000, code: "rate_limit_exceeded" })
      expect(ChatError.isRetryable(limited)).toBe(true)
      const quota = yield* failWith(ReplayServer.json(ReplayServer.fixture("errors/insufficient-quota.json"), { status: 429 }))
      expect(quota).toMatchObject({ _tag: "RateLimited", code: "insufficient_quota" })
      expect(ChatError.isRetryable(quota)).toBe(false)
    }))

  it.effect("5xx is a retryable ServerError; 401 an AuthenticationError whose message never holds the echoed key", () =>
    Effect.gen(function*() {
      const server = yield* failWith(ReplayServer.json({ error: { message: "The server had an error.", type: "server_error", code: null } }, { status: 503 }))
      expect(server).toMatchObject({ _tag: "ServerError", status: 503 })
      expect(ChatError.isRetryable(server)).toBe(true)
      const key = "sk-proj-TESTKEY0123456789abcdefghijklmnopqrstuvwxyzSECRET"
      const auth = yield* failWith(ReplayServer.json({
        error: { message: `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com.`, type: "invalid_request_error", code: "invalid_api_key" }
      }, { status: 401 }))
      expect(auth).toMatchObject({ _tag: "AuthenticationError", status: 401 })
      expect(JSON.stringify(auth)).not.toContain("TESTKEY")
      expect(auth.message).toContain("Incorrect API key provided: [redacted]")
    }))

  it.effect("context_length_exceeded is ContextLengthExceeded (synthetic body)", () =>
    Effect.gen(function*() {
      const error = yield* failWith(ReplayServer.json({
        error: {
          message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.",
          type: "invalid_request_error",
          param: "input",
          code: "context_length_exceeded"
        }
      }, { status: 400 }))
      expect(error._tag).toBe("ContextLengthExceeded")
    }))

  it.effect("an in-stream error part is typed by its code", () =>
    Effect.gen(function*() {
      // An effect/ai model whose stream reports the provider's error event, as effect/ai providers emit it.
      const quotaEvent = {
        type: "error",
        error: { type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota." }
      }
      const ai = yield* AiLanguageModel.make({
        generateText: () => Effect.succeed([]),
        streamText: () =>
          Stream.make<Array<AiResponse.StreamPartEncoded>>({ type: "text-delta", id: "t", delta: "Hi" }, { type: "error", error: quotaEvent })
      })
      const model = yield* Effect.provideService(EffectAi.make(), AiLanguageModel.LanguageModel, ai)
      const seen: Array<LanguageModel.StreamPart> = []
      const error = yield* Effect.flip(Stream.runForEach(model.stream(ask), (part) => Effect.sync(() => seen.push(part))))
      expect(seen).toEqual([{ _tag: "TextDelta", text: "Hi" }])
      expect(error).toMatchObject({ _tag: "RateLimited", code: "insufficient_quota" })
      expect(ChatError.isRetryable(error)).toBe(false)
    }))

  it.effect("the recorded in-stream quota error is a RateLimited that is not retried (stream-error-insufficient-quota.sse)", () =>
    Effect.gen(function*() {
      // With @effect/ai-openai 0.41 (Effect 3) the event was dropped and the stream ended unfinished (a retryable
      // NetworkError). The provider reports it as an AiError now (QuotaExhaustedError, its HTTP context), typed here.
      const error = yield* failWith(ReplayServer.sse(ReplayServer.fixture("responses/stream-error-insufficient-quota.sse")), "stream")
      expect(error).toMatchObject({ _tag: "RateLimited", code: "insufficient_quota" })
      expect(ChatError.isRetryable(error)).toBe(false)
    }))

  it.effect("a stream cut mid-way fails typed and retryable; nothing half-written is returned", () =>
    Effect.gen(function*() {
      const sse = ownFixture("responses-stream-text-sequenced.sse")
      const error = yield* failWith(ReplayServer.cut(ReplayServer.firstEvents(sse, 6)), "stream")
      expect(error._tag).toBe("NetworkError")
      expect(ChatError.isRetryable(error)).toBe(true)
    }))

  it.effect("a server that cannot be reached is a retryable NetworkError", () =>
    Effect.gen(function*() {
      const port = yield* Effect.scoped(Effect.map(ReplayServer.make, (server) => server.baseURL))
      const model = yield* modelOn({ baseURL: port } as ReplayServer.ReplayServer)
      const error = yield* Effect.flip(model.generate(ask))
      expect(error._tag).toBe("NetworkError")
    }))
})

// ---------------------------------------------------------------------------
// What the bridge hands an effect/ai model, and reads back (scripted models made with LanguageModel.make)
// ---------------------------------------------------------------------------

/** chat-ts's model over a scripted effect/ai model, built in the test's scope. */
const overScripted = (scripted: Scripted.Scripted) =>
  Effect.map(Layer.build(EffectAi.layer().pipe(Layer.provide(scripted.layer))), Context.get(LanguageModel.LanguageModel))

describe("EffectAi bridge: what a scripted effect/ai model is given and gives back", () => {
  const declarations: ReadonlyArray<LanguageModel.ToolDeclaration> = [
    { name: "strict_one", description: "Strict.", parameters: { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false }, strict: true },
    { name: "loose_one", description: "Loose.", parameters: { type: "object", properties: { b: { type: "number" } } }, strict: false }
  ]

  it.effect("the tools with their declared JSON Schema and strict flag, the tool choice, the prompt", () =>
    Effect.gen(function*() {
      const scripted = Scripted.make(() => [{ type: "text", text: "ok" }, Scripted.finish("stop")])
      const model = yield* overScripted(scripted)
      yield* model.generate({ messages: [Messages.system("Be brief."), Messages.user("Hi")], tools: declarations, options: { toolChoice: { tool: "strict_one" } } })
      const options = scripted.calls[0]!
      expect(options.tools.map((tool) => [tool.name, AiTool.getDescription(tool), AiTool.getJsonSchema(tool), AiTool.getStrictMode(tool)])).toEqual(
        declarations.map((d) => [d.name, d.description, d.parameters, d.strict])
      )
      expect(options.toolChoice).toEqual({ tool: "strict_one" })
      expect(options.prompt.content.map((message) => message.role)).toEqual(["system", "user"])
      expect(options.responseFormat).toEqual({ type: "text" })
    }))

  it.effect("a structured answer is asked with the requested JSON Schema, and comes back as its JSON text", () =>
    Effect.gen(function*() {
      const schema = { type: "object", properties: { value: { type: "array", items: { type: "string" } } }, required: ["value"], additionalProperties: false }
      const scripted = Scripted.make(() => [{ type: "text", text: "{\"value\":[\"Oslo\"]}" }, Scripted.finish("stop")])
      const model = yield* overScripted(scripted)
      const response = yield* model.generate({ ...ask, options: { responseFormat: { type: "json", name: "cities", schema, strict: true } } })
      expect(response.parts).toEqual([Messages.text("{\"value\":[\"Oslo\"]}")])
      const format = scripted.calls[0]!.responseFormat
      expect(format.type === "json" && [format.objectName, AiTool.getJsonSchemaFromSchema(format.schema)]).toEqual(["cities", schema])
    }))

  it.effect("a tool call's provider metadata is kept and sent back with the call; the response's id too", () =>
    Effect.gen(function*() {
      const scripted = Scripted.make((_, index) =>
        index === 0
          ? [
            { type: "response-metadata", id: "resp_1", modelId: "scripted-1", timestamp: "2026-12-01T00:00:00.000Z" },
            { type: "tool-call", id: "call_1", name: "strict_one", params: { a: "x" }, metadata: { openai: { itemId: "fc_1" } } },
            Scripted.finish("tool-calls")
          ]
          : [{ type: "text", text: "done" }, Scripted.finish("stop")]
      )
      const model = yield* overScripted(scripted)
      const first = yield* model.generate({ ...ask, tools: declarations })
      expect(first.finishReason).toBe("tool-calls")
      expect(first.providerMetadata?.[EffectAi.metadataKey]).toEqual({
        toolCalls: { call_1: { openai: { itemId: "fc_1" } } },
        response: { id: "resp_1", modelId: "scripted-1", timestamp: "2026-12-01T00:00:00.000Z" }
      })
      const call = first.parts.find((part) => part._tag === "ToolCall")!
      const answered: Messages.Messages = [
        ...ask.messages,
        { role: "assistant", parts: [{ ...call, status: { _tag: "Completed", result: { ok: true } } }] as ReadonlyArray<Messages.Part>, providerMetadata: first.providerMetadata! }
      ]
      yield* model.generate({ ...ask, messages: answered, tools: declarations })
      const sent = scripted.calls[1]!.prompt.content
      const assistant = sent.find((message) => message.role === "assistant")!
      expect(assistant.role === "assistant" && assistant.content.map((part) => part.type === "tool-call" ? [part.id, part.params, part.options] : part.type)).toEqual([
        ["call_1", { a: "x" }, { openai: { itemId: "fc_1" } }]
      ])
      const tool = sent.find((message) => message.role === "tool")!
      expect(tool.role === "tool" && tool.content.map((part) => part.type === "tool-result" ? [part.id, part.isFailure, part.result] : part.type)).toEqual([
        ["call_1", false, { ok: true }]
      ])
    }))

  it.effect("AiError reasons without an HTTP response are typed by their kind", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [AiError.AiErrorReason, string, boolean]> = [
        [new AiError.RateLimitError({ retryAfter: Duration.seconds(2) }), "RateLimited", true],
        [new AiError.QuotaExhaustedError({}), "RateLimited", false],
        [new AiError.AuthenticationError({ kind: "InvalidKey" }), "AuthenticationError", false],
        [new AiError.InvalidRequestError({ description: "bad temperature" }), "InvalidRequest", false],
        [new AiError.InvalidRequestError({ description: "This model's maximum context length is 8192 tokens" }), "ContextLengthExceeded", false],
        [new AiError.InternalProviderError({ description: "overloaded" }), "ServerError", true],
        [new AiError.NetworkError({ reason: "TransportError", method: "POST", url: "https://example.invalid/v1" }), "NetworkError", true],
        [new AiError.NetworkError({ reason: "InvalidUrlError", method: "POST", url: "::" }), "InvalidRequest", false],
        [new AiError.InvalidOutputError({ description: "not JSON" }), "MalformedResponse", false],
        [new AiError.UnknownError({ description: "what" }), "ServerError", true]
      ]
      for (const [reason, tag, retryable] of cases) {
        const scripted = Scripted.make(() => ({ fail: AiError.make({ module: "Scripted", method: "generateText", reason }) }))
        const model = yield* overScripted(scripted)
        const error = yield* Effect.flip(model.generate(ask))
        expect([reason._tag, error._tag, ChatError.isRetryable(error)]).toEqual([reason._tag, tag, retryable])
      }
      const limited = yield* Effect.flip(
        Effect.flatMap(overScripted(Scripted.make(() => ({ fail: AiError.make({ module: "S", method: "m", reason: new AiError.RateLimitError({ retryAfter: Duration.seconds(2) }) }) }))), (model) => model.generate(ask))
      )
      expect(limited).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 2000 })
    }))

  it.effect("the streamed answer of a scripted model: text, reasoning with its metadata, a tool call, the finish", () =>
    Effect.gen(function*() {
      const scripted = Scripted.make(() => [
        { type: "reasoning", text: "thinking", metadata: { anthropic: { signature: "sig" } } },
        { type: "text", text: "Hello" },
        { type: "tool-call", id: "c1", name: "strict_one", params: { a: "y" } },
        Scripted.finish("tool-calls", 7, 3)
      ])
      const model = yield* overScripted(scripted)
      const response = yield* LanguageModel.collect(model.stream({ ...ask, tools: declarations }))
      expect(scripted.calls[0]!.mode).toBe("stream")
      expect(response.parts).toEqual([
        { _tag: "Reasoning", text: "thinking", providerMetadata: { anthropic: { signature: "sig" } } },
        Messages.text("Hello"),
        Messages.toolCall({ id: "c1", name: "strict_one", arguments: "{\"a\":\"y\"}" })
      ])
      expect(response.usage).toEqual({ inputTokens: 7, outputTokens: 3 })
      expect(response.finishReason).toBe("tool-calls")
    }))
})
