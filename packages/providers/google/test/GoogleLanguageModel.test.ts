/**
 * GoogleLanguageModel against the replay server: the real `@google/genai`
 * SDK over HTTP, recorded Gemini bodies back, the requests checked as sent.
 */
import { Chat, ChatError, LanguageModel, Messages, Tool } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Retry } from "../src/index.js"
import {
  apiKey,
  callSignature,
  emailTool,
  geminiModel,
  request,
  textSignature,
  weatherTool
} from "./support/helpers.js"
import { ReplayServer } from "@chat-ts/core/testing"
import { fixture } from "./support/fixtures.js"
import { violations } from "./support/geminiSpec.js"

type Body = {
  readonly contents: ReadonlyArray<{ readonly role: string; readonly parts: ReadonlyArray<Record<string, unknown>> }>
  readonly [key: string]: unknown
}
const bodyOf = (server: ReplayServer.ReplayServer, index = 0): Body => server.requests[index]!.body as Body

describe("generate", () => {
  it.effect("a tool result's files go in its functionResponse as parts (inline bytes or a file URI), never inside the response JSON", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server)
      const mention = { content: [{ type: "image", file: 0 }, { type: "image", file: 1 }] }
      const answered: Messages.Messages = [
        Messages.user("Weather map of Paris?"),
        {
          role: "assistant",
          parts: [{
            ...Messages.toolCall({ id: "map", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }),
            status: {
              _tag: "Completed",
              result: mention,
              files: [
                Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" }),
                Messages.file({ mediaType: "image/jpeg", url: "gs://bucket/map.jpg" })
              ]
            }
          }]
        }
      ]
      const restored = yield* Effect.fromResult(Messages.fromJson(yield* Effect.fromResult(Messages.toJson(answered))))
      yield* model.generate(request(restored, [weatherTool]))
      expect(bodyOf(server).contents[2]).toEqual({
        role: "user",
        parts: [{
          functionResponse: {
            name: "get_weather",
            response: { output: mention },
            parts: [
              { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
              { fileData: { mimeType: "image/jpeg", fileUri: "gs://bucket/map.jpg" } }
            ]
          }
        }]
      })
    }))

  it.effect("a failed call's files go in its functionResponse as parts the same way, never inside the error JSON", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server)
      const error = { content: [{ type: "text", text: "render failed" }, { type: "image", file: 0 }] }
      const answered: Messages.Messages = [
        Messages.user("Weather map of Paris?"),
        {
          role: "assistant",
          parts: [{
            ...Messages.toolCall({ id: "map", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }),
            status: { _tag: "Failed", error, files: [Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })] }
          }]
        }
      ]
      const restored = yield* Effect.fromResult(Messages.fromJson(yield* Effect.fromResult(Messages.toJson(answered))))
      yield* model.generate(request(restored, [weatherTool]))
      expect(bodyOf(server).contents[2]).toEqual({
        role: "user",
        parts: [{
          functionResponse: {
            name: "get_weather",
            response: { error },
            parts: [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }]
          }
        }]
      })
    }))

  it.effect("sends the conversation to models/{model}:generateContent and reads text, usage with thoughts, metadata", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server, { temperature: 0.2, maxTokens: 200, stop: ["END"], topK: 40 })
      const response = yield* model.generate(request([
        Messages.system("Be brief."),
        Messages.user("Explain how AI works in a few words")
      ], [], { seed: 7, topP: 0.9 }))
      expect(response.parts).toEqual([Messages.text("AI learns patterns from data to make predictions or decisions.")])
      expect(response.finishReason).toBe("stop")
      // Gemini counts thoughts apart from the candidates: output = candidates + thoughts.
      expect(response.usage).toEqual({ inputTokens: 8, outputTokens: 37, reasoningTokens: 25 })
      expect(response.providerMetadata).toMatchObject({
        google: { responseId: "aDRxaPOUL8Sp1dkP8tCwsAQ", modelVersion: "gemini-2.5-flash", finishReason: "STOP" }
      })
      const sent = server.requests[0]!
      expect(sent.method).toBe("POST")
      expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent")
      expect(sent.headers["x-goog-api-key"]).toBe(apiKey)
      expect(sent.body).toEqual({
        contents: [{ role: "user", parts: [{ text: "Explain how AI works in a few words" }] }],
        systemInstruction: { parts: [{ text: "Be brief." }] },
        generationConfig: { temperature: 0.2, topP: 0.9, topK: 40, maxOutputTokens: 200, seed: 7, stopSequences: ["END"] }
      })
    }))

  it.effect("reads thoughts, parallel function calls and the call's thoughtSignature; finish reason tool-calls", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/function-calls-parallel.json")))
      const model = yield* geminiModel(server, { model: "gemini-3-pro-preview", thinking: { includeThoughts: true, budget: 1024 } })
      const response = yield* model.generate(request([Messages.user("Weather in Paris, then email it to my boss.")], [weatherTool, emailTool]))
      expect(response.finishReason).toBe("tool-calls")
      expect(response.parts.map((part) => part._tag)).toEqual(["Reasoning", "ToolCall", "ToolCall"])
      expect(response.parts[0]).toMatchObject({ _tag: "Reasoning", text: expect.stringContaining("Checking the weather first") })
      const [weather, email] = response.parts.slice(1) as Array<Messages.ToolCallPart>
      expect(weather).toMatchObject({ name: "get_weather", arguments: "{\"city\":\"Paris\"}", status: { _tag: "Proposed" } })
      expect(email).toMatchObject({ name: "send_email", arguments: JSON.stringify({ to: "boss@example.com", body: "Weather in Paris to follow." }) })
      // Gemini sent no ids: fresh, distinct ones were made.
      expect(weather!.id).not.toBe(email!.id)
      expect(response.providerMetadata).toMatchObject({
        google: { calls: { [weather!.id]: { signature: callSignature }, [email!.id]: {} } }
      })
      expect(response.usage).toEqual({ inputTokens: 96, outputTokens: 135, reasoningTokens: 94 })
      const body = bodyOf(server)
      expect(body["generationConfig"]).toEqual({ thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } })
      expect(body["tools"]).toEqual([{
        functionDeclarations: [
          {
            name: "get_weather",
            description: "The weather in a city.",
            parameters: { type: "OBJECT", properties: { city: { type: "STRING" } }, required: ["city"] }
          },
          {
            name: "send_email",
            description: "Sends an email.",
            parameters: { type: "OBJECT", properties: { to: { type: "STRING" }, body: { type: "STRING" } }, required: ["to"] }
          }
        ]
      }])
      expect(body["toolConfig"]).toBeUndefined()
    }))

  it.effect("sends the thought, the calls with their signature and the function responses back; text signatures too", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.json(fixture("generate/function-calls-parallel.json")),
        ReplayServer.json(fixture("generate/text-after-tools.json")),
        ReplayServer.json(fixture("generate/text.json"))
      )
      const model = yield* geminiModel(server)
      const ask = [Messages.user("Weather in Paris, then email it to my boss.")]
      const first = yield* model.generate(request(ask, [weatherTool, emailTool]))
      const [weather, email] = first.parts.slice(1) as Array<Messages.ToolCallPart>
      const assistant: Messages.Message = {
        role: "assistant",
        parts: [
          first.parts[0]!,
          { ...weather!, status: { _tag: "Completed", result: { temperature: 21 } } },
          { ...email!, status: { _tag: "Failed", error: "SMTP is down" } }
        ],
        ...(first.providerMetadata === undefined ? {} : { providerMetadata: first.providerMetadata })
      }
      const second = yield* model.generate(request([...ask, assistant], [weatherTool, emailTool]))
      expect(second.parts).toEqual([Messages.text("It is 21 degrees in Paris. I did not email your boss, as you asked.")])
      expect(bodyOf(server, 1).contents).toEqual([
        { role: "user", parts: [{ text: "Weather in Paris, then email it to my boss." }] },
        {
          role: "model",
          // The thought carried no signature: Gemini takes no unsigned thought back.
          parts: [
            { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: callSignature },
            { functionCall: { name: "send_email", args: { to: "boss@example.com", body: "Weather in Paris to follow." } } }
          ]
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_weather", response: { output: { temperature: 21 } } } },
            { functionResponse: { name: "send_email", response: { error: "SMTP is down" } } }
          ]
        }
      ])
      // The final text's signature goes back on that text.
      const final: Messages.Message = {
        role: "assistant",
        parts: second.parts,
        ...(second.providerMetadata === undefined ? {} : { providerMetadata: second.providerMetadata })
      }
      yield* model.generate(request([...ask, assistant, final, Messages.user("Thanks")], [weatherTool, emailTool]))
      expect(bodyOf(server, 2).contents.slice(3)).toEqual([
        {
          role: "model",
          parts: [{ text: "It is 21 degrees in Paris. I did not email your boss, as you asked.", thoughtSignature: textSignature }]
        },
        { role: "user", parts: [{ text: "Thanks" }] }
      ])
    }))

  it.effect("Gemini's own call ids go back in functionCall.id and functionResponse.id", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const withIds = JSON.parse(fixture("generate/function-calls-parallel.json"))
      withIds.candidates[0].content.parts[1].functionCall.id = "fc-weather-1"
      server.enqueue(ReplayServer.json(withIds), ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server)
      const ask = [Messages.user("Weather?")]
      const first = yield* model.generate(request(ask, [weatherTool, emailTool]))
      const [weather, email] = first.parts.slice(1) as Array<Messages.ToolCallPart>
      expect(weather!.id).toBe("fc-weather-1")
      const assistant: Messages.Message = {
        role: "assistant",
        parts: [
          { ...weather!, status: { _tag: "Completed", result: "sunny" } },
          { ...email!, status: { _tag: "Rejected", by: "user", reason: "not now" } }
        ],
        providerMetadata: first.providerMetadata!
      }
      yield* model.generate(request([...ask, assistant], [weatherTool, emailTool]))
      const contents = bodyOf(server, 1).contents
      expect(contents[1]!.parts[0]).toEqual({
        functionCall: { id: "fc-weather-1", name: "get_weather", args: { city: "Paris" } },
        thoughtSignature: callSignature
      })
      expect(contents[2]!.parts).toEqual([
        { functionResponse: { id: "fc-weather-1", name: "get_weather", response: { output: "sunny" } } },
        {
          functionResponse: {
            name: "send_email",
            response: { error: "The user rejected this tool call; it did not run. Reason: not now" }
          }
        }
      ])
    }))

  it.effect("maps toolChoice to functionCallingConfig; the layer's functionCalling wins", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      for (let i = 0; i < 5; i++) server.enqueue(ReplayServer.json(fixture("generate/text.json")))
      const ask = [Messages.user("Hi")]
      const model = yield* geminiModel(server)
      yield* model.generate(request(ask, [weatherTool], { toolChoice: "required" }))
      yield* model.generate(request(ask, [weatherTool], { toolChoice: "none" }))
      yield* model.generate(request(ask, [weatherTool], { toolChoice: { tool: "get_weather" } }))
      // Without tools no toolConfig is sent.
      yield* model.generate(request(ask, [], { toolChoice: "required" }))
      const fixed = yield* geminiModel(server, { functionCalling: { mode: "any", allowedFunctionNames: ["get_weather"] } })
      yield* fixed.generate(request(ask, [weatherTool], { toolChoice: "none" }))
      expect(server.requests.map((r) => (r.body as Body)["toolConfig"])).toEqual([
        { functionCallingConfig: { mode: "ANY" } },
        { functionCallingConfig: { mode: "NONE" } },
        { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } },
        undefined,
        { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } }
      ])
    }))

  it.effect("structured output: responseSchema rewritten to Gemini's subset, JSON mime type; json-schema mode sends it as is", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.json(fixture("generate/structured.json")),
        ReplayServer.json(fixture("generate/structured.json"))
      )
      const schema = {
        $schema: "http://json-schema.org/draft-07/schema#",
        $defs: { Difficulty: { type: "string", enum: ["easy", "hard"] } },
        type: "object",
        properties: {
          recipeName: { type: "string", format: "uri-reference" },
          ingredients: { type: "array", items: { type: "string" } },
          difficulty: { $ref: "#/$defs/Difficulty" }
        },
        required: ["recipeName", "ingredients", "difficulty"],
        additionalProperties: false
      }
      const responseFormat: LanguageModel.ResponseFormat = { type: "json", name: "Recipe", schema, strict: true }
      const model = yield* geminiModel(server)
      const response = yield* model.generate(request([Messages.user("A cookie recipe")], [], { responseFormat }))
      expect(JSON.parse(Messages.textOf({ role: "assistant", parts: response.parts }))).toMatchObject({ difficulty: "easy" })
      expect(bodyOf(server)["generationConfig"]).toEqual({
        responseMimeType: "application/json",
        responseSchema: {
          type: "OBJECT",
          properties: {
            recipeName: { type: "STRING" },
            ingredients: { type: "ARRAY", items: { type: "STRING" } },
            difficulty: { type: "STRING", enum: ["easy", "hard"] }
          },
          required: ["recipeName", "ingredients", "difficulty"]
        }
      })
      const raw = yield* geminiModel(server, { schemas: "json-schema" })
      yield* raw.generate(request([Messages.user("A cookie recipe")], [], { responseFormat }))
      expect(bodyOf(server, 1)["generationConfig"]).toEqual({ responseMimeType: "application/json", responseJsonSchema: schema })
    }))

  it.effect("a schema Gemini cannot express fails with InvalidRequest before anything is sent", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const model = yield* geminiModel(server)
      const recursive = {
        $defs: { Node: { type: "object", properties: { next: { $ref: "#/$defs/Node" } } } },
        $ref: "#/$defs/Node"
      }
      const error = yield* Effect.flip(model.generate(request([Messages.user("Hi")], [{ ...weatherTool, parameters: recursive }])))
      expect(error._tag).toBe("InvalidRequest")
      expect(error.message).toContain("tool 'get_weather'")
      expect(error.message).toContain("recursive")
      expect(server.requests).toHaveLength(0)
    }))

  it.effect("files go as inlineData / fileData; reasoningEffort is sent as the thinking level", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server)
      yield* model.generate(request([{
        role: "user",
        parts: [
          Messages.text("What is in these?"),
          { _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: "iVBORw0KGgo=" } },
          { _tag: "File", mediaType: "application/pdf", data: { _tag: "Url", url: "https://generativelanguage.googleapis.com/v1beta/files/abc" } }
        ]
      }], [], { reasoningEffort: "low" }))
      const body = bodyOf(server)
      expect(body.contents[0]!.parts).toEqual([
        { text: "What is in these?" },
        { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
        { fileData: { mimeType: "application/pdf", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc" } }
      ])
      expect(body["generationConfig"]).toEqual({ thinkingConfig: { thinkingLevel: "LOW" } })
    }))

  it.effect("arguments that are not a JSON object fail with InvalidRequest before sending", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const model = yield* geminiModel(server)
      const assistant = Messages.assistant([
        { ...Messages.toolCall({ id: "c1", name: "get_weather", arguments: "[1,2]" }), status: { _tag: "Completed", result: 1 } }
      ])
      const error = yield* Effect.flip(model.generate(request([Messages.user("Hi"), assistant])))
      expect(error).toBeInstanceOf(ChatError.InvalidRequest)
      expect(error.message).toContain("not a JSON object")
      expect(server.requests).toHaveLength(0)
    }))
})

describe("safety", () => {
  it.effect("a blocked prompt (promptFeedback.blockReason, no candidate) is a typed InvalidRequest with the reason as code", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.json(fixture("generate/prompt-blocked.json")),
        ReplayServer.sse(fixture("stream/prompt-blocked.sse"))
      )
      const model = yield* geminiModel(server)
      const error = yield* Effect.flip(model.generate(request([Messages.user("…")])))
      expect(error).toMatchObject({ _tag: "InvalidRequest", code: "SAFETY", param: "promptFeedback.blockReason" })
      expect(ChatError.isRetryable(error)).toBe(false)
      const streamed = yield* Effect.flip(LanguageModel.collect(model.stream(request([Messages.user("…")]))))
      expect(streamed).toMatchObject({ _tag: "InvalidRequest", code: "PROHIBITED_CONTENT" })
    }))

  it.effect("a response cut by a safety or recitation filter ends with finish reason content-filter, keeping what came", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.json(fixture("generate/finish-safety.json")),
        ReplayServer.json(fixture("generate/finish-recitation.json"))
      )
      const model = yield* geminiModel(server)
      const safety = yield* model.generate(request([Messages.user("…")]))
      expect(safety.finishReason).toBe("content-filter")
      expect(safety.parts).toEqual([Messages.text("Here is how the mixture is")])
      expect(safety.providerMetadata).toMatchObject({ google: { finishReason: "SAFETY" } })
      const recitation = yield* model.generate(request([Messages.user("…")]))
      expect(recitation.finishReason).toBe("content-filter")
      expect(recitation.parts).toEqual([])
    }))
})

describe("stream", () => {
  it.effect("streams text deltas to streamGenerateContent?alt=sse, with usage (thoughts included) in the Finish", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.sse(fixture("stream/text.sse")))
      const model = yield* geminiModel(server)
      const parts = yield* Stream.runCollect(model.stream(request([Messages.user("Why is the sky blue?")])))
      const list = [...parts]
      expect(list.filter((p) => p._tag === "TextDelta").map((p) => (p as { text: string }).text)).toEqual([
        "The sky is blue because",
        " air scatters short blue wavelengths of sunlight",
        " more than red ones."
      ])
      expect(list.at(-1)).toMatchObject({
        _tag: "Finish",
        finishReason: "stop",
        usage: { inputTokens: 7, outputTokens: 49, reasoningTokens: 31 }
      })
      expect(server.requests[0]!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    }))

  it.effect("streams thoughts and whole function calls; the collected response equals what generate gives", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.sse(fixture("stream/function-calls-thinking.sse")))
      const model = yield* geminiModel(server)
      const response = yield* LanguageModel.collect(model.stream(request([Messages.user("Weather, then email")], [weatherTool, emailTool])))
      expect(response.finishReason).toBe("tool-calls")
      expect(response.parts[0]).toEqual({
        _tag: "Reasoning",
        text: "**Planning the calls**\nThe user wants the weather in Paris and an email to their boss.",
        providerMetadata: { google: { thought: true } }
      })
      const [weather, email] = response.parts.slice(1) as Array<Messages.ToolCallPart>
      expect(weather).toMatchObject({ _tag: "ToolCall", name: "get_weather", arguments: "{\"city\":\"Paris\"}" })
      expect(email).toMatchObject({ _tag: "ToolCall", name: "send_email" })
      expect(response.providerMetadata).toMatchObject({ google: { calls: { [weather!.id]: { signature: callSignature } } } })
      expect(response.usage).toEqual({ inputTokens: 96, outputTokens: 135, reasoningTokens: 94 })
    }))

  it.effect("a signature on a closing empty text chunk is kept and goes back as its own part", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(
        ReplayServer.sse(fixture("stream/text-signature.sse")),
        ReplayServer.json(fixture("generate/text.json"))
      )
      const model = yield* geminiModel(server)
      const response = yield* LanguageModel.collect(model.stream(request([Messages.user("Weather?")])))
      expect(response.parts).toEqual([
        Messages.text("It is 21 degrees in Paris. I did not email your boss."),
        { _tag: "Reasoning", text: "", signature: textSignature, providerMetadata: { google: { thought: false } } }
      ])
      const assistant: Messages.Message = { role: "assistant", parts: response.parts, providerMetadata: response.providerMetadata! }
      yield* model.generate(request([Messages.user("Weather?"), assistant, Messages.user("Thanks")]))
      expect(bodyOf(server, 1).contents[1]).toEqual({
        role: "model",
        parts: [{ text: "It is 21 degrees in Paris. I did not email your boss." }, { text: "", thoughtSignature: textSignature }]
      })
    }))

  it.effect("an error event mid-stream fails the stream with a typed error", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.sse(fixture("stream/error-chunk.sse")))
      const model = yield* geminiModel(server)
      const error = yield* Effect.flip(LanguageModel.collect(model.stream(request([Messages.user("Hi")]))))
      expect(error).toMatchObject({ _tag: "ServerError", status: 503 })
      expect(error.message).toContain("overloaded")
    }))
})

describe("more of what docs/google.md promises", () => {
  it.effect("providerOptions are merged last; safetySettings are sent; a tool without parameters declares none", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server, {
        safetySettings: [{ category: "HARM_CATEGORY_DANGEROUS_CONTENT" as never, threshold: "BLOCK_ONLY_HIGH" as never }]
      })
      const noArgs: LanguageModel.ToolDeclaration = {
        name: "now",
        description: "The time.",
        parameters: { type: "object", properties: {}, additionalProperties: false },
        strict: true
      }
      yield* model.generate(request([Messages.user("Hi")], [noArgs], { temperature: 1, providerOptions: { temperature: 0.5, candidateCount: 1 } }))
      const body = bodyOf(server)
      expect(body["generationConfig"]).toEqual({ temperature: 0.5, candidateCount: 1 })
      expect(body["safetySettings"]).toEqual([{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", threshold: "BLOCK_ONLY_HIGH" }])
      expect(body["tools"]).toEqual([{ functionDeclarations: [{ name: "now", description: "The time." }] }])
    }))

  it.effect("finish reasons: MAX_TOKENS is length, MALFORMED_FUNCTION_CALL is error; inline images come back as File parts", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const withReason = (finishReason: string, parts: ReadonlyArray<object>) => {
        const body = JSON.parse(fixture("generate/text.json"))
        body.candidates[0].finishReason = finishReason
        body.candidates[0].content.parts = parts
        return ReplayServer.json(body)
      }
      server.enqueue(
        withReason("MAX_TOKENS", [{ text: "AI learns" }]),
        withReason("MALFORMED_FUNCTION_CALL", []),
        withReason("STOP", [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }])
      )
      const model = yield* geminiModel(server)
      expect((yield* model.generate(request([Messages.user("Hi")]))).finishReason).toBe("length")
      expect((yield* model.generate(request([Messages.user("Hi")]))).finishReason).toBe("error")
      const image = yield* model.generate(request([Messages.user("Draw")]))
      expect(image.parts).toEqual([{ _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: "iVBORw0KGgo=" } }])
    }))

  it.effect("the default policy gives up at once on a 429 asking for more than a minute", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const body = JSON.parse(fixture("errors/429-resource-exhausted.json"))
      body.error.details[2].retryDelay = "120s"
      server.enqueue(ReplayServer.json(body, { status: 429 }), ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server, { retry: Retry.defaultPolicy })
      const failure = yield* Effect.flip(model.generate(request([Messages.user("Hi")])))
      expect(failure).toMatchObject({ _tag: "RateLimited", retryAfterMillis: 120_000 })
      expect(server.requests).toHaveLength(1)
    }))
})

describe("hostile input", () => {
  it.effect("duplicate and __proto__ call ids from Gemini: every call gets its own id, no prototype is touched", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const body = JSON.parse(fixture("generate/function-calls-parallel.json"))
      body.candidates[0].content.parts[1].functionCall.id = "__proto__"
      body.candidates[0].content.parts[2].functionCall.id = "__proto__"
      server.enqueue(ReplayServer.json(body), ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server)
      const response = yield* model.generate(request([Messages.user("Hi")], [weatherTool, emailTool]))
      const [first, second] = response.parts.slice(1) as Array<Messages.ToolCallPart>
      expect(first!.id).toBe("__proto__")
      expect(second!.id).not.toBe("__proto__")
      const calls = (response.providerMetadata!["google"] as { calls: Record<string, unknown> }).calls
      expect(Object.getPrototypeOf(calls)).toBe(Object.prototype)
      expect(Object.getOwnPropertyDescriptor(calls, "__proto__")?.value).toEqual({ signature: callSignature, wireId: true })
      const assistant: Messages.Message = {
        role: "assistant",
        parts: [
          { ...first!, status: { _tag: "Completed", result: 1 } },
          { ...second!, status: { _tag: "Completed", result: 2 } }
        ],
        providerMetadata: response.providerMetadata!
      }
      yield* model.generate(request([Messages.user("Hi"), assistant]))
      expect(bodyOf(server, 1).contents[2]!.parts).toEqual([
        { functionResponse: { id: "__proto__", name: "get_weather", response: { output: 1 } } },
        { functionResponse: { name: "send_email", response: { output: 2 } } }
      ])
    }))

  it.effect("forged stored metadata (a signature that is not a string, a wireId that is not true) sends nothing of it", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server)
      const assistant: Messages.Message = {
        role: "assistant",
        parts: [
          Messages.text("Checking."),
          { ...Messages.toolCall({ id: "c1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }), status: { _tag: "Completed", result: 1 } }
        ],
        providerMetadata: { google: { calls: { c1: { signature: 42, wireId: "yes" } }, textSignatures: { "0": { x: 1 } } } }
      }
      yield* model.generate(request([Messages.user("Hi"), assistant]))
      expect(bodyOf(server).contents[1]).toEqual({
        role: "model",
        parts: [{ text: "Checking." }, { functionCall: { name: "get_weather", args: { city: "Paris" } } }]
      })
    }))
})

enum Colour {
  Red = "red",
  Blue = "blue"
}

describe("schemas on the wire (issue 32): every Gemini schema has a type, or the JSON Schema is sent", () => {
  const Paint = Tool.make("paint", {
    description: "Paint a point.",
    parameters: { colour: Schema.Enum(Colour), at: Schema.Tuple([Schema.Number, Schema.Number]) }
  })
  const Draw = Tool.make("draw", {
    description: "Draw a shape.",
    parameters: {
      shape: Schema.Union([
        Schema.Struct({ kind: Schema.Literal("circle"), radius: Schema.Number }),
        Schema.Struct({ kind: Schema.Literal("square"), side: Schema.Number })
      ])
    }
  })
  const Annotate = Tool.make("annotate", { description: "Attach free-form data.", parameters: { data: Schema.Unknown } })

  it.effect("Schema.Enum and tuple items go as `parameters` with their types; a union of structs and a Schema.Unknown as `parametersJsonSchema`, without $id", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/text.json")))
      const model = yield* geminiModel(server)
      yield* model.generate(request([Messages.user("Hi")], [Paint.declaration, Draw.declaration, Annotate.declaration]))
      const [paint, draw, annotate] = (bodyOf(server)["tools"] as ReadonlyArray<{ readonly functionDeclarations: ReadonlyArray<Record<string, unknown>> }>)[0]!
        .functionDeclarations
      expect(violations(paint!["parameters"])).toEqual([])
      expect(paint!["parameters"]).toEqual({
        type: "OBJECT",
        properties: {
          colour: { type: "STRING", enum: ["red", "blue"] },
          at: { type: "ARRAY", minItems: 2, items: { type: "NUMBER" } }
        },
        required: ["colour", "at"]
      })
      expect(draw).toEqual({ name: "draw", description: "Draw a shape.", parametersJsonSchema: Draw.declaration.parameters })
      expect(annotate).toEqual({
        name: "annotate",
        description: "Attach free-form data.",
        parametersJsonSchema: {
          type: "object",
          required: ["data"],
          properties: { data: { title: "unknown" } },
          additionalProperties: false
        }
      })
      expect(JSON.stringify(bodyOf(server))).not.toContain("$id")
    }))

  it.effect("a response format with no Gemini type is sent as responseJsonSchema; one with types as responseSchema (streamed too)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(fixture("generate/structured.json")), ReplayServer.sse(fixture("stream/text.sse")))
      const model = yield* geminiModel(server)
      const loose = Chat.responseFormat(Schema.Struct({ recipeName: Schema.String, extra: Schema.Unknown }))
      yield* model.generate(request([Messages.user("A recipe")], [], { responseFormat: loose }))
      expect(bodyOf(server, 0)["generationConfig"]).toEqual({ responseMimeType: "application/json", responseJsonSchema: loose.schema })
      const typed = Chat.responseFormat(Schema.Struct({ colour: Schema.Enum(Colour) }))
      yield* Stream.runDrain(model.stream(request([Messages.user("A colour")], [], { responseFormat: typed })))
      expect(bodyOf(server, 1)["generationConfig"]).toMatchObject({
        responseMimeType: "application/json",
        responseSchema: { type: "OBJECT", properties: { colour: { type: "STRING", enum: ["red", "blue"] } } }
      })
    }))
})
