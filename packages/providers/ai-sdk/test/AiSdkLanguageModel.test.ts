/**
 * What the bridge does beyond the conformance suite, on a scripted AI SDK
 * model (./support/scripted.ts) that records what it is sent: the model is
 * refused at build unless it is of specification v4 or v3; files go both
 * ways (a user's image, a tool result's image, a file the model made);
 * reasoning goes back with its metadata; usage keeps cached and reasoning
 * tokens; `providerOptions` of the layer and of the request reach the model;
 * a response cut short (`length`, `interrupted`) runs none of its calls;
 * interrupting a call aborts its signal; the total timeout bounds a call.
 */
import { APICallError } from "@ai-sdk/provider"
import { Chat, ChatError, LanguageModel, Messages, Tool, Toolkit } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as AiSdkLanguageModel from "../src/AiSdkLanguageModel.js"
import { UnsupportedModel } from "../src/AiSdkModelError.js"
import * as Scripted from "./support/scripted.js"

const ask = (messages: Messages.Messages, options: LanguageModel.Options = {}): LanguageModel.Request => ({ messages, tools: [], options })
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const build = (model: AiSdkLanguageModel.AnyModel, options: Partial<AiSdkLanguageModel.Options> = {}) =>
  AiSdkLanguageModel.make({ model, retry: false, ...options })

describe("AiSdkLanguageModel: the model it is built on", () => {
  it.effect("a v2 model, an embedding model or any other value is refused at build with UnsupportedModel", () =>
    Effect.gen(function*() {
      const v2 = { specificationVersion: "v2", provider: "old", modelId: "m", doGenerate: () => Promise.resolve({}), doStream: () => Promise.resolve({}) }
      const error = yield* Effect.flip(build(v2))
      expect(error).toBeInstanceOf(UnsupportedModel)
      expect(error.specificationVersion).toBe("v2")
      expect(error.message).toContain("v2")
      expect(error.message).toContain("v4 (AI SDK 7) and v3 (AI SDK 6)")
      const embedding = { specificationVersion: "v4", provider: "p", modelId: "e", doEmbed: () => Promise.resolve({}) }
      expect((yield* Effect.flip(build(embedding)))._tag).toBe("UnsupportedModel")
      expect((yield* Effect.flip(build("mistral-large-latest" as never)))._tag).toBe("UnsupportedModel")
      const layerExit = yield* Effect.exit(Layer.build(AiSdkLanguageModel.layer({ model: v2 })))
      expect(Exit.isFailure(layerExit)).toBe(true)
    }))

  it.effect("a v3 model (AI SDK 6) is spoken to in v3's shapes: file data as bytes or URL, tool-result images as image-data, no reasoning option", () =>
    Effect.gen(function*() {
      const v3 = Scripted.v3Model({
        content: [{ type: "text", text: "seen" }, { type: "file", mediaType: "image/png", data: png }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: Scripted.usage(3, 2),
        warnings: []
      })
      const model = yield* build(v3)
      const call = { ...Messages.toolCall({ id: "c1", name: "shot", arguments: "{}" }), status: { _tag: "Completed" as const, result: "a screenshot", files: [Messages.file({ mediaType: "image/png", base64: png })] } }
      const response = yield* model.generate(ask([
        Messages.user([Messages.text("look"), Messages.file({ mediaType: "image/png", url: "https://example.com/a.png" })]),
        { role: "assistant", parts: [call] }
      ], { reasoningEffort: "high" }))
      expect(response.parts).toEqual([Messages.text("seen"), { _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: png } }])
      const sent = v3.calls[0]!
      expect("reasoning" in sent).toBe(false)
      const user = sent.prompt[0]!
      expect(user.role === "user" && user.content[1]).toMatchObject({ type: "file", data: new URL("https://example.com/a.png") })
      const tool = sent.prompt.find((message) => message.role === "tool")!
      expect(tool.content[0]).toMatchObject({
        type: "tool-result",
        toolCallId: "c1",
        output: { type: "content", value: [{ type: "text", text: "a screenshot" }, { type: "image-data", data: png, mediaType: "image/png" }] }
      })
    }))
})

describe("AiSdkLanguageModel: what it sends", () => {
  it.effect("files both ways: a user's image and a tool result's image are sent as files; a file the model made is a File part", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model(Scripted.generate({
        content: [{ type: "file", mediaType: "image/png", data: { type: "data", data: Uint8Array.from(Buffer.from(png, "base64")) } }]
      }))
      const model = yield* build(scripted)
      const call = { ...Messages.toolCall({ id: "c1", name: "shot", arguments: "{\"page\":1}" }), status: { _tag: "Completed" as const, result: { shown: "file 0" }, files: [Messages.file({ mediaType: "image/png", base64: png })] } }
      const response = yield* model.generate(ask([
        Messages.user([Messages.text("look"), Messages.file({ mediaType: "image/png", base64: png })]),
        { role: "assistant", parts: [call] }
      ]))
      expect(response.parts).toEqual([{ _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: png } }])
      const prompt = scripted.calls[0]!.prompt
      expect(prompt[0]).toEqual({ role: "user", content: [{ type: "text", text: "look" }, { type: "file", mediaType: "image/png", data: { type: "data", data: png } }] })
      expect(prompt[1]).toEqual({ role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "shot", input: { page: 1 } }] })
      expect(prompt[2]).toEqual({
        role: "tool",
        content: [{
          type: "tool-result",
          toolCallId: "c1",
          toolName: "shot",
          output: { type: "content", value: [{ type: "text", text: "{\"shown\":\"file 0\"}" }, { type: "file", mediaType: "image/png", data: { type: "data", data: png } }] }
        }]
      })
    }))

  it.effect("toolResultFiles \"placeholders\": a tool result's file reaches a text-only provider as a short placeholder, never its base64", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model(Scripted.generate({ content: [{ type: "text", text: "ok" }] }))
      const model = yield* build(scripted, { toolResultFiles: "placeholders" })
      const file = Messages.file({ mediaType: "image/png", base64: png })
      const call = { ...Messages.toolCall({ id: "c1", name: "shot", arguments: "{}" }), status: { _tag: "Completed" as const, result: { shown: "file 0" }, files: [file] } }
      yield* model.generate(ask([Messages.user("look"), { role: "assistant", parts: [call] }]))
      const tool = scripted.calls[0]!.prompt[2]!
      expect(tool).toEqual({
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "c1", toolName: "shot", output: { type: "text", value: `{"shown":"file 0"}\n${Messages.filePlaceholder(file, 0)}` } }]
      })
      expect(JSON.stringify(tool)).not.toContain(png)
    }))

  it.effect("reasoning goes back with its provider metadata unchanged, as the part's providerOptions", () =>
    Effect.gen(function*() {
      const metadata = { anthropic: { signature: "sig-Ab12==" }, openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAAA-encrypted" } }
      const scripted = Scripted.model(
        Scripted.generate({ content: [{ type: "reasoning", text: "think", providerMetadata: metadata }, { type: "tool-call", toolCallId: "c1", toolName: "t", input: "{}" }] }),
        Scripted.generate({ content: [{ type: "text", text: "done" }] })
      )
      const model = yield* build(scripted)
      const first = yield* model.generate(ask([Messages.user("go")]))
      expect(first.parts[0]).toEqual({ _tag: "Reasoning", text: "think", providerMetadata: metadata })
      const parts = first.parts.map((part) => part._tag === "ToolCall" ? { ...part, status: { _tag: "Completed" as const, result: 1 } } : part)
      yield* model.generate(ask([Messages.user("go"), { role: "assistant", parts }]))
      expect(scripted.calls[1]!.prompt[1]).toEqual({
        role: "assistant",
        content: [{ type: "reasoning", text: "think", providerOptions: metadata }, { type: "tool-call", toolCallId: "c1", toolName: "t", input: {} }]
      })
    }))

  it.effect("options: sampling, stop, seed, reasoning effort, tool choice, the response format with our JSON Schema, providerOptions of the layer merged under the request's", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model(Scripted.generate({ content: [{ type: "text", text: "{}" }] }))
      const model = yield* build(scripted, { providerOptions: { mistral: { safePrompt: true, parallelToolCalls: false } }, headers: { "x-team": "a" } })
      const schema = { type: "object", properties: { value: { type: "string" } }, required: ["value"], additionalProperties: false }
      yield* model.generate({
        messages: [Messages.system("sys"), Messages.user("hi")],
        tools: [{ name: "t", description: "a tool", parameters: schema, strict: true }],
        options: {
          temperature: 0.2,
          maxTokens: 100,
          topP: 0.9,
          stop: ["END"],
          seed: 7,
          reasoningEffort: "low",
          toolChoice: { tool: "t" },
          responseFormat: { type: "json", name: "answer", schema, strict: true, description: "the answer" },
          providerOptions: { mistral: { parallelToolCalls: true }, groq: { user: "u1" } }
        }
      })
      const sent = scripted.calls[0]!
      expect(sent).toMatchObject({
        prompt: [{ role: "system", content: "sys" }, { role: "user", content: [{ type: "text", text: "hi" }] }],
        tools: [{ type: "function", name: "t", description: "a tool", inputSchema: schema, strict: true }],
        toolChoice: { type: "tool", toolName: "t" },
        responseFormat: { type: "json", name: "answer", schema, description: "the answer" },
        temperature: 0.2,
        maxOutputTokens: 100,
        topP: 0.9,
        stopSequences: ["END"],
        seed: 7,
        reasoning: "low",
        providerOptions: { mistral: { safePrompt: true, parallelToolCalls: true }, groq: { user: "u1" } },
        headers: { "x-team": "a" }
      })
      expect(sent.abortSignal).toBeInstanceOf(AbortSignal)
    }))
})

describe("AiSdkLanguageModel: what it makes of an answer", () => {
  it.effect("usage keeps cached input and reasoning tokens, generate and stream", () =>
    Effect.gen(function*() {
      const u = Scripted.usage(1000, 300, { cacheRead: 800, reasoning: 200 })
      const scripted = Scripted.model(
        Scripted.generate({ content: [{ type: "text", text: "a" }], usage: u }),
        Scripted.stream([{ type: "text-delta", id: "0", delta: "a" }, { type: "finish", usage: u, finishReason: { unified: "stop", raw: "stop" } }])
      )
      const model = yield* build(scripted)
      const want = { inputTokens: 1000, outputTokens: 300, cachedInputTokens: 800, reasoningTokens: 200 }
      expect((yield* model.generate(ask([Messages.user("q")]))).usage).toEqual(want)
      expect((yield* LanguageModel.collect(model.stream(ask([Messages.user("q")])))).usage).toEqual(want)
    }))

  it.effect("a call the provider ran itself is not a chat-ts call; a call without an id is a MalformedResponse", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model(
        Scripted.generate({ content: [{ type: "tool-call", toolCallId: "ws1", toolName: "web_search", input: "{}", providerExecuted: true }, { type: "text", text: "found" }] }),
        Scripted.generate({ content: [{ type: "tool-call", toolCallId: "", toolName: "t", input: "{}" }] }),
        Scripted.stream([
          { type: "tool-input-start", id: "c1", toolName: "t" },
          { type: "tool-input-delta", id: "c1", delta: "{\"a\":" },
          { type: "tool-call", toolCallId: "c1", toolName: "t", input: "{\"b\":2}" },
          { type: "finish", usage: Scripted.usage(1, 1), finishReason: { unified: "tool-calls", raw: "tool_calls" } }
        ])
      )
      const model = yield* build(scripted)
      expect((yield* model.generate(ask([Messages.user("q")]))).parts).toEqual([Messages.text("found")])
      expect((yield* Effect.flip(model.generate(ask([Messages.user("q")]))))._tag).toBe("MalformedResponse")
      const disagreeing = yield* Effect.flip(LanguageModel.collect(model.stream(ask([Messages.user("q")]))))
      expect(disagreeing._tag).toBe("MalformedResponse")
    }))

  it.effect("a stream whose call comes whole (no input deltas) still streams its start and arguments; `{}` completes an empty input", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model(Scripted.stream([
        { type: "tool-call", toolCallId: "c1", toolName: "t", input: "{\"x\":1}" },
        { type: "tool-input-start", id: "c2", toolName: "u" },
        { type: "tool-input-end", id: "c2" },
        { type: "tool-call", toolCallId: "c2", toolName: "u", input: "{}" },
        { type: "finish", usage: Scripted.usage(1, 1), finishReason: { unified: "tool-calls", raw: "tool_use" } }
      ]))
      const model = yield* build(scripted)
      const parts = Array.from(yield* Stream.runCollect(model.stream(ask([Messages.user("q")]))))
      expect(parts.slice(0, 4)).toEqual([
        { _tag: "ToolCallStart", id: "c1", name: "t" },
        { _tag: "ToolCallDelta", id: "c1", argumentsDelta: "{\"x\":1}" },
        { _tag: "ToolCallStart", id: "c2", name: "u" },
        { _tag: "ToolCallDelta", id: "c2", argumentsDelta: "{}" }
      ])
    }))

  const tool = Tool.make("t", { description: "a tool", parameters: Schema.Struct({}), success: Schema.Unknown })
  const kit = Toolkit.make(tool)
  const handlers = (ran: Array<string>) => kit.toLayer({ t: () => Effect.sync(() => (ran.push("t"), "ran")) })

  for (const [reason, expected] of [["length", "length"], ["interrupted", "error"], ["content-filter", "content-filter"]] as const) {
    it.effect(`a response cut short (AI SDK finish "${reason}" → "${expected}") runs none of its calls`, () =>
      Effect.gen(function*() {
        const scripted = Scripted.model(
          Scripted.generate({ content: [{ type: "tool-call", toolCallId: "c1", toolName: "t", input: "{}" }], finishReason: { unified: reason, raw: reason } }),
          Scripted.generate({ content: [{ type: "text", text: "sorry" }] })
        )
        const ran: Array<string> = []
        const model = yield* build(scripted)
        const chat = yield* Chat.make({ tools: kit }).pipe(
          Effect.provide(Layer.merge(LanguageModel.layer(model), handlers(ran)))
        )
        const result = yield* chat.complete(Messages.fromUser("go"))
        expect(ran).toEqual([])
        const response = result.messages.find((message) => message.role === "assistant")!
        expect(response.finishReason).toBe(expected)
        expect(Messages.toolCallsOf(response)[0]!.status._tag).not.toBe("Completed")
      }))
  }

  for (const streamed of [false, true]) {
    it.effect(`a call's own provider metadata (a thought signature) goes back as its providerOptions in the tool loop (Chat, ${streamed ? "stream" : "generate"})`, () =>
      Effect.gen(function*() {
        const signature = { google: { thoughtSignature: "CiQB0e2Kb-signed" } }
        const first = streamed
          ? Scripted.stream([
            { type: "tool-call", toolCallId: "c1", toolName: "t", input: "{}", providerMetadata: signature },
            { type: "finish", usage: Scripted.usage(1, 1), finishReason: { unified: "tool-calls", raw: "STOP" } }
          ])
          : Scripted.generate({ content: [{ type: "tool-call", toolCallId: "c1", toolName: "t", input: "{}", providerMetadata: signature }], finishReason: { unified: "tool-calls", raw: "STOP" } })
        const second = streamed
          ? Scripted.stream([{ type: "text-delta", id: "0", delta: "done" }, { type: "finish", usage: Scripted.usage(1, 1), finishReason: { unified: "stop", raw: "STOP" } }])
          : Scripted.generate({ content: [{ type: "text", text: "done" }] })
        const scripted = Scripted.model(first, second)
        const ran: Array<string> = []
        const model = yield* build(scripted)
        const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(LanguageModel.layer(model), handlers(ran))))
        if (streamed) yield* Stream.runDrain(chat.stream(Messages.fromUser("go")))
        else yield* chat.complete(Messages.fromUser("go"))
        expect(ran).toEqual(["t"])
        const assistant = scripted.calls[1]!.prompt.find((message) => message.role === "assistant")!
        expect(assistant.content).toEqual([{ type: "tool-call", toolCallId: "c1", toolName: "t", input: {}, providerOptions: signature }])
      }))
  }

  it.effect("control: the same call in a response finished \"tool-calls\" runs", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model(
        Scripted.generate({ content: [{ type: "tool-call", toolCallId: "c1", toolName: "t", input: "{}" }], finishReason: { unified: "tool-calls", raw: "tool_calls" } }),
        Scripted.generate({ content: [{ type: "text", text: "done" }] })
      )
      const ran: Array<string> = []
      const model = yield* build(scripted)
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(LanguageModel.layer(model), handlers(ran))))
      yield* chat.complete(Messages.fromUser("go"))
      expect(ran).toEqual(["t"])
    }))

  it.effect("a stream finishing `interrupted` (the vendor never said it was done) is a NetworkError", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model(Scripted.stream([
        { type: "text-delta", id: "0", delta: "half" },
        { type: "finish", usage: Scripted.usage(1, 1), finishReason: { unified: "interrupted", raw: undefined } }
      ]))
      const model = yield* build(scripted)
      expect((yield* Effect.flip(LanguageModel.collect(model.stream(ask([Messages.user("q")])))))._tag).toBe("NetworkError")
    }))
})

describe("AiSdkLanguageModel: errors, interruption and time", () => {
  const apiError = (statusCode: number | undefined, headers: Record<string, string> = {}, body = "{\"error\":{\"message\":\"vendor says no\"}}") =>
    new APICallError({ message: "Bad", url: "https://api.example.com/v1/chat", requestBodyValues: {}, ...(statusCode === undefined ? {} : { statusCode }), responseHeaders: headers, responseBody: body })

  it.effect("APICallError by status: 429 RateLimited with retry-after, 5xx ServerError, 401/403 never retried, 400 InvalidRequest, context length, no status a NetworkError; a thrown provider Error is not retried", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [apiError(429, { "retry-after": "7" }), "RateLimited"],
        [apiError(500), "ServerError"],
        [apiError(529), "ServerError"],
        [new APICallError({ message: "Responses API returned no output", url: "u", requestBodyValues: {}, statusCode: 500, isRetryable: false }), "MalformedResponse"],
        [apiError(401), "AuthenticationError"],
        [apiError(403), "AuthenticationError"],
        [apiError(400), "InvalidRequest"],
        [apiError(400, {}, "{\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}"), "ContextLengthExceeded"],
        [apiError(undefined), "NetworkError"],
        [new Error("Unsupported content type in assistant message: file"), "InvalidRequest"]
      ]
      const scripted = Scripted.model(...cases.map(([error]) => ({ _tag: "Throw" as const, error })))
      const model = yield* build(scripted)
      for (const [, tag] of cases) {
        const error = yield* Effect.flip(model.generate(ask([Messages.user("q")])))
        expect(error._tag).toBe(tag)
        if (error._tag === "RateLimited") expect(error.retryAfterMillis).toBe(7000)
        if (tag === "InvalidRequest" && error._tag === "InvalidRequest" && error.status === 400) expect(error.message).toContain("vendor says no")
      }
    }))

  it.effect("the default retry policy never retries a 401, and retries a 503 once it waited", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model({ _tag: "Throw", error: apiError(401) }, { _tag: "Throw", error: apiError(503) }, Scripted.generate({ content: [{ type: "text", text: "ok" }] }))
      const model = yield* AiSdkLanguageModel.make({ model: scripted })
      expect((yield* Effect.flip(model.generate(ask([Messages.user("q")]))))._tag).toBe("AuthenticationError")
      expect(scripted.calls.length).toBe(1)
      const fiber = yield* Effect.forkChild(model.generate(ask([Messages.user("q")])))
      yield* TestClock.adjust("1 minute")
      const response = yield* Fiber.join(fiber)
      expect(response.parts).toEqual([Messages.text("ok")])
      expect(scripted.calls.length).toBe(3)
    }))

  it.effect("interrupting a call aborts the model's abortSignal", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model({ _tag: "Hang" })
      const model = yield* build(scripted)
      const fiber = yield* Effect.forkChild(model.generate(ask([Messages.user("q")])))
      yield* Effect.yieldNow
      while (scripted.calls.length === 0) yield* Effect.yieldNow
      expect(scripted.calls[0]!.abortSignal!.aborted).toBe(false)
      yield* Fiber.interrupt(fiber)
      expect(scripted.calls[0]!.abortSignal!.aborted).toBe(true)
    }))

  it.effect("the total timeout stops a generate that never answers (TestClock) with a NetworkError, and aborts it", () =>
    Effect.gen(function*() {
      const scripted = Scripted.model({ _tag: "Hang" })
      const model = yield* build(scripted, { totalTimeout: "30 seconds" })
      const fiber = yield* Effect.forkChild(Effect.flip(model.generate(ask([Messages.user("q")]))))
      while (scripted.calls.length === 0) yield* Effect.yieldNow
      yield* TestClock.adjust("29 seconds")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      expect(error).toBeInstanceOf(ChatError.NetworkError)
      expect(error.message).toContain("totalTimeout")
      expect(scripted.calls[0]!.abortSignal!.aborted).toBe(true)
    }))
})
