/**
 * `@ai-sdk/amazon-bedrock` (AI SDK 7, specification v4) through the bridge:
 * Claude on the Converse API, every request SigV4-signed by the provider
 * (checked here against a signature recomputed from the recorded request),
 * the streams in AWS event-stream binary frames with their CRC32s
 * (../support/eventStream.ts), all on the loopback replay server.
 *
 * Fixtures: written from the Bedrock runtime API reference: `Converse`
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html: `output.message.content`
 * blocks `text`, `toolUse { toolUseId, name, input }`, `reasoningContent.reasoningText { text, signature }`,
 * `stopReason`, `usage { inputTokens, outputTokens, totalTokens, cacheReadInputTokens }`, `metrics`),
 * `ConverseStream` (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html:
 * `messageStart`, `contentBlockStart`, `contentBlockDelta`, `contentBlockStop`, `messageStop`, `metadata`
 * events, each payload padded with `p` as the service does), and the errors
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html: `{ message }` with
 * `x-amzn-errortype`). Two liberties, for the suite's scenarios: Bedrock documents no `retry-after` on a
 * `ThrottlingException` (the fixture adds one; without it the error is a `RateLimited` with no delay), and it
 * answers refused SigV4 credentials with 403 `UnrecognizedClientException` (the fixture answers 401; both map
 * to `AuthenticationError`).
 */
import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock"
import { Conformance, ReplayServer } from "@chat-ts/core/testing"
import { expect } from "@effect/vitest"
import { createHash, createHmac } from "node:crypto"
import { eventStreamFetch } from "../support/eventStream.js"
import { answer, bodyOf, bridge, cities, citiesFormat, streamedPieces } from "./shared.js"

export const accessKeyId = "AKIACONFORMANCE0EXAMPLE"
export const secretAccessKey = "conformance/SECRET/wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
const region = "us-east-1"
const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

type Call = { readonly id: string; readonly name: string; readonly arguments: { readonly [key: string]: unknown } }
const weather: Call = { id: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", name: "get_weather", arguments: { city: "Paris" } }
const time: Call = { id: "tooluse_Q1w2E3r4T5y6U7i8O9p0Aa", name: "get_time", arguments: { timezone: "Europe/Paris" } }
const usage = (input: number, output: number, cacheRead?: number) => ({
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
  ...(cacheRead === undefined ? {} : { cacheReadInputTokens: cacheRead, cacheWriteInputTokens: 0 })
})
const converse = (content: ReadonlyArray<unknown>, stopReason: string, u: object) =>
  ReplayServer.json({ output: { message: { role: "assistant", content } }, stopReason, usage: u, metrics: { latencyMs: 812 } }, {
    headers: { "x-amzn-requestid": "5d6a4f0e-conformance" }
  })

/** A ConverseStream answer, written as SSE blocks `event: <type>` / `data: <payload>` (framed into binary by `eventStreamFetch`). */
const streamOf = (events: ReadonlyArray<readonly [string, object]>) =>
  ReplayServer.sse(events.map(([type, payload]) => `event: ${type}\ndata: ${JSON.stringify({ ...payload, p: "abcdefghijklmnopqrstuvwxyzABCDEF" })}\n\n`).join(""), {
    headers: { "x-amzn-requestid": "9b1e2c3d-conformance" }
  })
const toolStream = (calls: ReadonlyArray<Call>, u: object) =>
  streamOf([
    ["messageStart", { role: "assistant" }],
    ...calls.flatMap((call, index): Array<readonly [string, object]> => {
      const args = JSON.stringify(call.arguments)
      const half = Math.ceil(args.length / 2)
      return [
        ["contentBlockStart", { contentBlockIndex: index, start: { toolUse: { toolUseId: call.id, name: call.name } } }],
        ["contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input: args.slice(0, half) } } }],
        ["contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input: args.slice(half) } } }],
        ["contentBlockStop", { contentBlockIndex: index }]
      ]
    }),
    ["messageStop", { stopReason: "tool_use" }],
    ["metadata", { usage: u, metrics: { latencyMs: 640 } }]
  ])
const toolUse = (call: Call) => ({ toolUse: { toolUseId: call.id, name: call.name, input: call.arguments } })
const error = (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
  ReplayServer.json({ message }, { status, headers: { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, ...headers } })

const signature = "EqoBCkgIARABGAIiQL2sG8tGHJ0rQv0Wq2conformance0signature0unchangedZ4Hc8QmEw=="
const thought = "The user wants the weather in Paris, so I call get_weather with Paris."

const fixtures: Conformance.Fixtures = {
  // Bedrock's `inputTokens` leaves out the tokens read from the cache; the AI SDK's input total adds them back.
  text: { reply: converse([{ text: answer }], "end_turn", usage(176, 8, 1024)), text: answer, usage: { inputTokens: 1200, outputTokens: 8, cachedInputTokens: 1024 } },
  streamText: {
    reply: streamOf([
      ["messageStart", { role: "assistant" }],
      ...streamedPieces.map((text): readonly [string, object] => ["contentBlockDelta", { contentBlockIndex: 0, delta: { text } }]),
      ["contentBlockStop", { contentBlockIndex: 0 }],
      ["messageStop", { stopReason: "end_turn" }],
      ["metadata", { usage: usage(21, 8), metrics: { latencyMs: 420 } }]
    ]),
    text: streamedPieces.join(""),
    usage: { inputTokens: 21, outputTokens: 8 }
  },
  toolCall: { reply: converse([toolUse(weather)], "tool_use", usage(400, 40)), calls: [weather], usage: { inputTokens: 400, outputTokens: 40 } },
  streamToolCall: { reply: toolStream([weather], usage(400, 40)), calls: [weather], usage: { inputTokens: 400, outputTokens: 40 } },
  parallelToolCalls: { reply: converse([toolUse(weather), toolUse(time)], "tool_use", usage(420, 70)), calls: [weather, time] },
  streamParallelToolCalls: { reply: toolStream([weather, time], usage(420, 70)), calls: [weather, time] },
  structured: { reply: converse([{ text: JSON.stringify(cities) }], "end_turn", usage(300, 20)), format: citiesFormat, value: cities },
  reasoning: {
    reply: streamOf([
      ["messageStart", { role: "assistant" }],
      ["contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: thought.slice(0, 30) } } }],
      ["contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { text: thought.slice(30) } } }],
      ["contentBlockDelta", { contentBlockIndex: 0, delta: { reasoningContent: { signature } } }],
      ["contentBlockStop", { contentBlockIndex: 0 }],
      ["contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: weather.id, name: weather.name } } }],
      ["contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: JSON.stringify(weather.arguments) } } }],
      ["contentBlockStop", { contentBlockIndex: 1 }],
      ["messageStop", { stopReason: "tool_use" }],
      ["metadata", { usage: usage(500, 90), metrics: { latencyMs: 900 } }]
    ]),
    streamed: true,
    call: weather,
    then: converse([{ text: "It is sunny in Paris." }], "end_turn", usage(600, 7))
  },
  rateLimit: { reply: error(429, "ThrottlingException", "Too many requests, please wait before trying again.", { "retry-after": "3" }), retryAfterMillis: 3000 },
  serverError: { reply: error(503, "ServiceUnavailableException", "Bedrock is unable to process your request."), status: 503 },
  unauthorized: { reply: error(401, "UnrecognizedClientException", "The security token included in the request is invalid.") }
}

const hmac = (key: string | Buffer, text: string) => createHmac("sha256", key).update(text).digest()
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/**
 * Checks the request's SigV4 signature (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html):
 * recomputed from the recorded method, path, signed headers and body with the secret key, it must equal the one sent.
 */
const checkSigV4 = (request: ReplayServer.Recorded) => {
  const authorization = request.headers.authorization ?? ""
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization)
  expect(match, `a SigV4 Authorization header: ${authorization}`).not.toBeNull()
  const [, key, day, signedRegion, service, signedHeaders, sent] = match!
  expect([key, signedRegion, service]).toEqual([accessKeyId, region, "bedrock"])
  const amzDate = request.headers["x-amz-date"]!
  const [path, query = ""] = request.path.split("?")
  // Services other than S3 sign the path encoded twice: the sent path's `%3A` is `%253A` here.
  const canonicalPath = path!.split("/").map((segment) => encodeURIComponent(segment)).join("/")
  const headers = signedHeaders!.split(";")
  const body = typeof request.body === "string" ? request.body : JSON.stringify(request.body)
  const payloadHash = request.headers["x-amz-content-sha256"] ?? sha256(body)
  const canonical = [
    request.method,
    canonicalPath,
    query,
    ...headers.map((name) => `${name}:${name === "host" ? `bedrock-runtime.${region}.amazonaws.com` : (request.headers[name] ?? "").trim()}`),
    "",
    signedHeaders,
    payloadHash
  ].join("\n")
  const scope = `${day}/${region}/bedrock/aws4_request`
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n")
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day!), region), "bedrock"), "aws4_request")
  expect(createHmac("sha256", signingKey).update(toSign).digest("hex"), "the SigV4 signature recomputed from the request").toBe(sent)
}

/** `@ai-sdk/amazon-bedrock` 5 (AI SDK 7, v4), Converse and ConverseStream. */
export const bedrock: Conformance.Harness = {
  name: "AiSdkLanguageModel on @ai-sdk/amazon-bedrock (v4, Converse, SigV4, event-stream)",
  apiKey: secretAccessKey,
  layer: (server, settings) =>
    bridge(
      createAmazonBedrock({ region, accessKeyId, secretAccessKey, fetch: eventStreamFetch(server.url) })(model),
      settings,
      [secretAccessKey]
    ),
  capabilities: { toolArgumentDeltas: true, structuredOutput: true, reasoningRoundTrip: true },
  fixtures,
  wire: {
    text: (request) => {
      expect(request.path).toBe(`/model/${encodeURIComponent(model)}/converse`)
      checkSigV4(request)
      const body = bodyOf(request)
      expect(body.system).toEqual([{ text: "You are a conformance test. Answer briefly." }])
    },
    stream: (request) => {
      expect(request.path).toBe(`/model/${encodeURIComponent(model)}/converse-stream`)
      checkSigV4(request)
    },
    toolResults: (request, sent) => {
      const messages = bodyOf(request).messages as ReadonlyArray<{ role: string; content: ReadonlyArray<{ toolResult?: { toolUseId: string; status?: string } }> }>
      const results = messages.flatMap((message) => message.content.flatMap((block) => block.toolResult === undefined ? [] : [block.toolResult]))
      expect(results.map((result) => result.toolUseId)).toEqual([sent.completed.id, sent.rejected.id])
      checkSigV4(request)
    },
    structured: (request) => {
      checkSigV4(request)
      // Claude on Bedrock: the provider asks for the format natively (no forced `json` tool).
      const fields = bodyOf(request).additionalModelRequestFields as { output_config?: { format?: { type: string } } }
      expect(fields.output_config?.format?.type).toBe("json_schema")
      expect(bodyOf(request).toolConfig).toBeUndefined()
    },
    reasoning: (request, part) => {
      const messages = bodyOf(request).messages as ReadonlyArray<{ role: string; content: ReadonlyArray<{ reasoningContent?: unknown }> }>
      const sentBack = messages.flatMap((message) => message.content.flatMap((block) => block.reasoningContent === undefined ? [] : [block.reasoningContent]))
      expect(sentBack).toEqual([{ reasoningText: { text: part.text, signature } }])
    }
  }
}
