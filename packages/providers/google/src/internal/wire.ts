/**
 * The wire mapping of Gemini's generateContent: requests from the core's
 * `LanguageModel.Request`, responses and stream chunks back to parts.
 *
 * What Gemini needs back on a later request is kept in the assistant
 * message's `providerMetadata.google`: per tool call, its `thoughtSignature`
 * and whether Gemini gave the call an id; per text part, its signature. A
 * thought keeps its signature on the `Reasoning` part itself.
 *
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as Messages from "@chat-ts/core/Messages"
import type {
  Content,
  FunctionCallingConfigMode,
  FunctionResponsePart,
  GenerateContentConfig,
  GenerateContentParameters,
  GenerateContentResponse,
  Part,
  ThinkingLevel,
  Tool
} from "@google/genai"
import * as Result from "effect/Result"
import { randomUUID } from "node:crypto"
import * as GoogleSchema from "../GoogleSchema.js"
import type { Redactor } from "./errors.js"
import type { Options } from "./options.js"

/** The key of this package's entry in `providerMetadata`. */
export const metadataKey = "google"

/** What Gemini needs back about one tool call. */
interface CallMetadata {
  /** The call's `thoughtSignature`, sent back unchanged. */
  readonly signature?: string
  /** Whether the id is Gemini's own (sent back in `functionCall.id` / `functionResponse.id`). */
  readonly wireId?: boolean
}

/** The `providerMetadata.google` of an assistant message. */
interface MessageMetadata {
  readonly calls: { readonly [id: string]: CallMetadata }
  /** Signatures of text parts, by the index of the text part among the message's text parts. */
  readonly textSignatures: { readonly [index: string]: string }
}

const field = (u: unknown, key: string): unknown => typeof u === "object" && u !== null ? Reflect.get(u, key) : undefined

const stringField = (u: unknown, key: string): string | undefined => {
  const value = field(u, key)
  return typeof value === "string" ? value : undefined
}

const unsupported = (message: string): ChatError.InvalidRequest => new ChatError.InvalidRequest({ message })

const metadataOf = (message: Messages.Message): MessageMetadata => {
  const entry = message.providerMetadata?.[metadataKey]
  const calls = field(entry, "calls")
  const texts = field(entry, "textSignatures")
  return {
    calls: typeof calls === "object" && calls !== null ? calls as MessageMetadata["calls"] : {},
    textSignatures: typeof texts === "object" && texts !== null ? texts as MessageMetadata["textSignatures"] : {}
  }
}

const ownValue = <A>(record: { readonly [key: string]: A }, key: string): A | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

const filePart = (file: Messages.FilePart): Part =>
  file.data._tag === "Base64"
    ? { inlineData: { mimeType: file.mediaType, data: file.data.base64 } }
    : { fileData: { mimeType: file.mediaType, fileUri: file.data.url } }

const userContent = (message: Messages.Message): Content => ({
  role: "user",
  parts: message.parts.flatMap((part): Array<Part> =>
    part._tag === "Text" ? [{ text: part.text }] : part._tag === "File" ? [filePart(part)] : []
  )
})

/** Tool call arguments as the object `functionCall.args` needs. */
const argsObject = (call: Messages.ProjectedToolCall): Result.Result<Record<string, unknown>, ChatError.InvalidRequest> => {
  try {
    const parsed: unknown = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? Result.succeed(parsed as Record<string, unknown>)
      : Result.fail(unsupported(`The arguments of tool call '${call.id}' are not a JSON object; Gemini takes objects only.`))
  } catch {
    return Result.fail(unsupported(`The arguments of tool call '${call.id}' are not valid JSON.`))
  }
}

/** The `functionResponse.response` object: `{ output }` for a result, the `{ error }` value for a failure or rejection. */
const responseObject = (result: Messages.ProjectedResult): Record<string, unknown> =>
  result.isError && typeof result.value === "object" && result.value !== null && !Array.isArray(result.value)
    ? result.value as Record<string, unknown>
    : result.isError
    ? { error: result.value }
    : { output: result.value }

/** A file of a tool result as a function response part (inline bytes or a file URI). */
const responsePart = (file: Messages.FilePart): FunctionResponsePart =>
  file.data._tag === "Base64"
    ? { inlineData: { mimeType: file.mediaType, data: file.data.base64 } }
    : { fileData: { mimeType: file.mediaType, fileUri: file.data.url } }

/**
 * The model's content (thoughts, text and calls, with their signatures), then
 * one user content holding a `functionResponse` per answered call.
 */
const assistantContents = (message: Messages.Message): Result.Result<Array<Content>, ChatError.InvalidRequest> => {
  const metadata = metadataOf(message)
  const parts: Array<Part> = []
  const responses: Array<Part> = []
  let textIndex = 0
  for (const part of message.parts) {
    switch (part._tag) {
      case "Reasoning": {
        const thought = field(part.providerMetadata?.[metadataKey], "thought") !== false
        // A thought without its signature is not sent back (Gemini keeps no unsigned thoughts).
        if (part.signature === undefined && thought) break
        parts.push({
          text: part.text,
          ...(thought ? { thought: true } : {}),
          ...(part.signature === undefined ? {} : { thoughtSignature: part.signature })
        })
        break
      }
      case "Text": {
        const signature: unknown = ownValue(metadata.textSignatures, String(textIndex++))
        parts.push({ text: part.text, ...(typeof signature === "string" ? { thoughtSignature: signature } : {}) })
        break
      }
      case "File":
        parts.push(filePart(part))
        break
      case "ToolCall": {
        const call = Messages.projectToolCall(part)
        const args = argsObject(call)
        if (Result.isFailure(args)) return Result.fail(args.failure)
        // Stored metadata is data from outside: only a string signature and a `true` flag count.
        const known: unknown = ownValue(metadata.calls, call.id)
        const signature = stringField(known, "signature")
        const id = field(known, "wireId") === true ? { id: call.id } : {}
        parts.push({
          functionCall: { ...id, name: call.name, args: args.success },
          ...(signature === undefined ? {} : { thoughtSignature: signature })
        })
        if (call.result !== undefined) {
          const files = Messages.resultFiles(call.result).map(responsePart)
          responses.push({
            functionResponse: { ...id, name: call.name, response: responseObject(call.result), ...(files.length === 0 ? {} : { parts: files }) }
          })
        }
        break
      }
    }
  }
  const out: Array<Content> = parts.length === 0 ? [] : [{ role: "model", parts }]
  if (responses.length > 0) out.push({ role: "user", parts: responses })
  return Result.succeed(out)
}

/** The conversation as Gemini contents, and the system messages' text as the system instruction. */
export const toContents = (
  messages: Messages.Messages
): Result.Result<{ readonly contents: Array<Content>; readonly system: Array<string> }, ChatError.InvalidRequest> => {
  const contents: Array<Content> = []
  const system: Array<string> = []
  for (const message of messages) {
    switch (message.role) {
      case "system": {
        if (!message.parts.every((part) => part._tag === "Text")) {
          return Result.fail(unsupported("A system message may only hold text parts."))
        }
        system.push(message.parts.map((part) => (part._tag === "Text" ? part.text : "")).join(""))
        break
      }
      case "user":
        contents.push(userContent(message))
        break
      case "assistant": {
        const mapped = assistantContents(message)
        if (Result.isFailure(mapped)) return Result.fail(mapped.failure)
        contents.push(...mapped.success)
      }
    }
  }
  return Result.succeed({ contents, system })
}

/** A schema as it is sent: in Gemini's own dialect (`parameters`, `responseSchema`) or as JSON Schema (`parametersJsonSchema`, `responseJsonSchema`). */
interface Sent {
  readonly dialect: "openapi" | "json-schema"
  readonly schema: LanguageModel.JsonSchema
}

/**
 * A schema as Gemini takes it: rewritten to its subset, or sent as JSON
 * Schema (with `schemas: "json-schema"`, or when some subschema has no type
 * Gemini's own schema can state, which its v1beta spec requires).
 */
const schemaOf = (
  schema: LanguageModel.JsonSchema,
  what: string,
  options: Options
): Result.Result<Sent, ChatError.InvalidRequest> => {
  if (options.schemas === "json-schema") return Result.succeed({ dialect: "json-schema", schema })
  const rewritten = GoogleSchema.rewrite(schema)
  if (Result.isSuccess(rewritten)) return Result.succeed({ dialect: "openapi", schema: rewritten.success })
  return rewritten.failure._tag === "Untyped"
    ? Result.succeed({ dialect: "json-schema", schema })
    : Result.fail(unsupported(`The schema of ${what} cannot be expressed in Gemini's schema subset: ${rewritten.failure.reason}.`))
}

const isEmptyObject = (schema: LanguageModel.JsonSchema): boolean => {
  const properties = schema.properties
  return (schema.type === "OBJECT" || schema.type === "object") &&
    (typeof properties !== "object" || properties === null || Object.keys(properties).length === 0)
}

/** The tools as one Gemini tool of function declarations. */
export const toTools = (
  declarations: ReadonlyArray<LanguageModel.ToolDeclaration>,
  options: Options
): Result.Result<Array<Tool>, ChatError.InvalidRequest> => {
  const functions: NonNullable<Tool["functionDeclarations"]> = []
  for (const declaration of declarations) {
    const sent = schemaOf(declaration.parameters, `tool '${declaration.name}'`, options)
    if (Result.isFailure(sent)) return Result.fail(sent.failure)
    const { dialect, schema } = sent.success
    // A function without parameters declares none (Gemini refuses an OBJECT without properties).
    const parameters = isEmptyObject(schema)
      ? {}
      : dialect === "json-schema"
      ? { parametersJsonSchema: schema }
      : { parameters: schema }
    functions.push({
      name: declaration.name,
      ...(declaration.description === "" ? {} : { description: declaration.description }),
      ...parameters
    })
  }
  return Result.succeed(functions.length === 0 ? [] : [{ functionDeclarations: functions }])
}

const modes = { auto: "AUTO", any: "ANY", none: "NONE", validated: "VALIDATED" } as const

/** The function-calling config: the layer's `functionCalling` wins over the request's `toolChoice`. */
const toToolConfig = (
  choice: LanguageModel.ToolChoice | undefined,
  options: Options
): GenerateContentConfig["toolConfig"] | undefined => {
  const configured = options.functionCalling
  if (configured !== undefined) {
    return {
      functionCallingConfig: {
        ...(configured.mode === undefined ? {} : { mode: modes[configured.mode] as FunctionCallingConfigMode }),
        ...(configured.allowedFunctionNames === undefined
          ? {}
          : { allowedFunctionNames: [...configured.allowedFunctionNames] })
      }
    }
  }
  if (choice === undefined) return undefined
  if (typeof choice === "object") {
    return { functionCallingConfig: { mode: "ANY" as FunctionCallingConfigMode, allowedFunctionNames: [choice.tool] } }
  }
  const mode = choice === "required" ? "ANY" : choice === "none" ? "NONE" : "AUTO"
  return { functionCallingConfig: { mode: mode as FunctionCallingConfigMode } }
}

const toThinkingConfig = (
  request: LanguageModel.Request,
  options: Options
): GenerateContentConfig["thinkingConfig"] | undefined => {
  const thinking = options.thinking
  const effort = request.options.reasoningEffort
  const level = thinking?.level ?? effort
  const config = {
    ...(thinking?.budget === undefined ? {} : { thinkingBudget: thinking.budget }),
    ...(thinking?.includeThoughts === undefined ? {} : { includeThoughts: thinking.includeThoughts }),
    ...(level === undefined || thinking?.budget !== undefined ? {} : { thinkingLevel: level.toUpperCase() as ThinkingLevel })
  }
  return Object.keys(config).length === 0 ? undefined : config
}

/** The SDK parameters of one call: the request's options take precedence over the layer's. */
export const toParams = (
  request: LanguageModel.Request,
  options: Options
): Result.Result<GenerateContentParameters, ChatError.InvalidRequest> =>
  Result.gen(function*() {
    const { contents, system } = yield* toContents(request.messages)
    if (contents.length === 0) return yield* Result.fail(unsupported("Gemini needs at least one user or model message."))
    const o = request.options
    const tools = yield* toTools(request.tools, options)
    const format = o.responseFormat
    const response = format === undefined ? undefined : yield* schemaOf(format.schema, `the response format '${format.name}'`, options)
    const toolConfig = tools.length === 0 ? undefined : toToolConfig(o.toolChoice ?? options.toolChoice, options)
    const thinkingConfig = toThinkingConfig(request, options)
    const stop = o.stop ?? options.stop
    const optional = <K extends string, V>(key: K, value: V | undefined) => (value === undefined ? {} : { [key]: value })
    const config: GenerateContentConfig = {
      ...(system.length === 0 ? {} : { systemInstruction: { parts: system.map((text) => ({ text })) } }),
      ...(tools.length === 0 ? {} : { tools }),
      ...(toolConfig === undefined ? {} : { toolConfig }),
      ...optional("temperature", o.temperature ?? options.temperature),
      ...optional("topP", o.topP ?? options.topP),
      ...optional("topK", options.topK),
      ...optional("maxOutputTokens", o.maxTokens ?? options.maxTokens),
      ...optional("seed", o.seed ?? options.seed),
      ...(stop === undefined ? {} : { stopSequences: [...stop] }),
      ...(thinkingConfig === undefined ? {} : { thinkingConfig }),
      ...(response === undefined ? {} : {
        responseMimeType: "application/json",
        ...(response.dialect === "json-schema" ? { responseJsonSchema: response.schema } : { responseSchema: response.schema })
      }),
      ...(options.safetySettings === undefined ? {} : { safetySettings: options.safetySettings.map((s) => ({ ...s })) }),
      ...o.providerOptions
    } as GenerateContentConfig
    return { model: options.model, contents, config }
  })

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/** A fresh tool call id, for calls Gemini sends without one. */
export const newCallId = (): string => `call_${randomUUID().replace(/-/g, "")}`

const maxCount = Number.MAX_SAFE_INTEGER

/** A token count as sent: a whole number from 0 up, else none. */
const tokenCount = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isInteger(u) && u >= 0 && u <= maxCount ? u : undefined

/**
 * The core usage of Gemini's `usageMetadata`: input is the prompt (and tool
 * prompt) tokens, output the candidates' plus the thoughts' tokens (the
 * thoughts also as `reasoningTokens`), cached ones as `cachedInputTokens`.
 */
export const fromUsage = (usage: unknown): LanguageModel.Response["usage"] => {
  if (typeof usage !== "object" || usage === null) return LanguageModel.noUsage
  const prompt = tokenCount(field(usage, "promptTokenCount")) ?? 0
  const toolPrompt = tokenCount(field(usage, "toolUsePromptTokenCount")) ?? 0
  const candidates = tokenCount(field(usage, "candidatesTokenCount")) ?? 0
  const thoughts = tokenCount(field(usage, "thoughtsTokenCount"))
  const cached = tokenCount(field(usage, "cachedContentTokenCount"))
  return {
    inputTokens: prompt + toolPrompt,
    outputTokens: candidates + (thoughts ?? 0),
    ...(thoughts === undefined ? {} : { reasoningTokens: thoughts }),
    ...(cached === undefined ? {} : { cachedInputTokens: cached })
  }
}

const filtered: ReadonlySet<string> = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION"
])

/** The core finish reason of Gemini's `finishReason` (`STOP` with calls is `tool-calls`). */
export const fromFinishReason = (reason: string | undefined, hasToolCalls: boolean): Messages.FinishReason => {
  if (reason === undefined || reason === "STOP") return hasToolCalls ? "tool-calls" : "stop"
  if (reason === "MAX_TOKENS") return "length"
  if (filtered.has(reason)) return "content-filter"
  if (reason === "MALFORMED_FUNCTION_CALL" || reason === "UNEXPECTED_TOOL_CALL" || reason === "TOO_MANY_TOOL_CALLS") {
    return "error"
  }
  return "other"
}

/** A prompt Gemini refused to answer at all (`promptFeedback.blockReason`, no candidate). */
export const promptBlocked = (response: GenerateContentResponse, redact: Redactor): ChatError.InvalidRequest | undefined => {
  const reason = stringField(response.promptFeedback, "blockReason")
  if (reason === undefined || (response.candidates ?? []).length > 0) return undefined
  const detail = stringField(response.promptFeedback, "blockReasonMessage")
  return new ChatError.InvalidRequest({
    message: redact(`Gemini blocked the prompt (${reason})${detail === undefined ? "." : `: ${detail}`}`),
    code: reason,
    param: "promptFeedback.blockReason"
  })
}

/** Whether a wire part becomes (or continues) a core text part. */
const isPlainText = (part: Part): boolean =>
  (part.functionCall === undefined || part.functionCall === null) && part.thought !== true &&
  typeof part.text === "string" && part.text !== ""

/** Builds the parts of a candidate's content, and what must go back with them. */
class PartsReader {
  readonly calls: Record<string, CallMetadata> = {}
  readonly textSignatures: Record<string, string> = {}
  hasToolCalls = false

  /** The stream parts of one wire part; `textIndex` is the index of the text part a text joins. */
  read(part: Part, textIndex: () => number): Array<LanguageModel.StreamPart> {
    const signature = typeof part.thoughtSignature === "string" && part.thoughtSignature !== ""
      ? part.thoughtSignature
      : undefined
    if (part.functionCall !== undefined && part.functionCall !== null) {
      const wireId = typeof part.functionCall.id === "string" && part.functionCall.id !== "" && !Object.hasOwn(this.calls, part.functionCall.id)
      const id = wireId ? part.functionCall.id! : newCallId()
      Object.defineProperty(this.calls, id, {
        value: { ...(signature === undefined ? {} : { signature }), ...(wireId ? { wireId: true } : {}) },
        enumerable: true
      })
      this.hasToolCalls = true
      return [
        { _tag: "ToolCallStart", id, name: part.functionCall.name ?? "" },
        { _tag: "ToolCallDelta", id, argumentsDelta: JSON.stringify(part.functionCall.args ?? {}) }
      ]
    }
    if (typeof part.text === "string") {
      if (part.thought === true) {
        return [{
          _tag: "ReasoningDelta",
          text: part.text,
          ...(signature === undefined ? {} : { signature }),
          providerMetadata: { [metadataKey]: { thought: true } }
        }]
      }
      if (part.text === "") {
        // A signature alone on an empty text part goes back as it came.
        return signature === undefined ? [] : [{
          _tag: "ReasoningDelta",
          text: "",
          start: true,
          signature,
          providerMetadata: { [metadataKey]: { thought: false } }
        }]
      }
      if (signature !== undefined) this.textSignatures[String(textIndex())] = signature
      return [{ _tag: "TextDelta", text: part.text }]
    }
    if (part.inlineData !== undefined && typeof part.inlineData.data === "string") {
      return [{
        _tag: "Part",
        part: { _tag: "File", mediaType: part.inlineData.mimeType ?? "application/octet-stream", data: { _tag: "Base64", base64: part.inlineData.data } }
      }]
    }
    return []
  }

  metadata(response: { readonly responseId?: string | undefined; readonly modelVersion?: string | undefined }, finishReason: string | undefined) {
    return {
      [metadataKey]: {
        ...(response.responseId === undefined ? {} : { responseId: response.responseId }),
        ...(response.modelVersion === undefined ? {} : { modelVersion: response.modelVersion }),
        ...(finishReason === undefined ? {} : { finishReason }),
        calls: this.calls,
        textSignatures: this.textSignatures
      }
    }
  }
}

/** A whole response as a core response (the first candidate). */
export const fromResponse = (
  response: GenerateContentResponse,
  redact: Redactor
): Result.Result<LanguageModel.Response, ChatError.ModelError> => {
  const blocked = promptBlocked(response, redact)
  if (blocked !== undefined) return Result.fail(blocked)
  const candidate = response.candidates?.[0]
  if (candidate === undefined) {
    return Result.fail(new ChatError.MalformedResponse({ message: "The Gemini response holds no candidate." }))
  }
  const reader = new PartsReader()
  const acc = new LanguageModel.Accumulator()
  let texts = -1
  for (const part of candidate.content?.parts ?? []) {
    if (isPlainText(part)) texts++
    for (const streamPart of reader.read(part, () => texts)) {
      // Whole parts: every wire part starts a new core part.
      acc.add(streamPart._tag === "TextDelta" || streamPart._tag === "ReasoningDelta" ? { ...streamPart, start: true } : streamPart)
    }
  }
  const finishReason = candidate.finishReason as string | undefined
  acc.add({
    _tag: "Finish",
    usage: fromUsage(response.usageMetadata),
    finishReason: fromFinishReason(finishReason, reader.hasToolCalls),
    providerMetadata: reader.metadata(response, finishReason)
  })
  return Result.succeed(acc.response()!)
}

/**
 * Turns stream chunks into stream parts. Gemini sends each function call
 * whole in one chunk; text and thoughts arrive in pieces.
 */
export class StreamState {
  private readonly reader = new PartsReader()
  private finishReason: string | undefined
  private usage: LanguageModel.Response["usage"] | undefined
  private responseId: string | undefined
  private modelVersion: string | undefined
  private texts = -1
  /** The kind of the last core part begun: text deltas join a text part only right after text. */
  private last: "text" | "other" = "other"
  private blocked: ChatError.InvalidRequest | undefined

  constructor(private readonly redact: Redactor) {}

  /** The parts of one chunk. */
  push(chunk: GenerateContentResponse): Array<LanguageModel.StreamPart> {
    if (typeof chunk.responseId === "string") this.responseId = chunk.responseId
    if (typeof chunk.modelVersion === "string") this.modelVersion = chunk.modelVersion
    if (chunk.usageMetadata !== undefined) this.usage = fromUsage(chunk.usageMetadata)
    this.blocked ??= promptBlocked(chunk, this.redact)
    const candidate = chunk.candidates?.[0]
    if (candidate === undefined) return []
    const out: Array<LanguageModel.StreamPart> = []
    for (const part of candidate.content?.parts ?? []) {
      const isText = isPlainText(part)
      if (isText && this.last !== "text") this.texts++
      const parts = this.reader.read(part, () => this.texts)
      if (parts.length > 0) this.last = isText ? "text" : "other"
      out.push(...parts)
    }
    if (typeof candidate.finishReason === "string") this.finishReason = candidate.finishReason
    return out
  }

  /** The closing `Finish` part; a stream that ended before its finish reason broke off. */
  end(): Result.Result<Array<LanguageModel.StreamPart>, ChatError.ModelError> {
    if (this.blocked !== undefined && this.finishReason === undefined) return Result.fail(this.blocked)
    if (this.finishReason === undefined) {
      return Result.fail(
        new ChatError.NetworkError({ message: "Gemini's stream ended before the response was complete (no finish reason)." })
      )
    }
    return Result.succeed([{
      _tag: "Finish",
      usage: this.usage ?? LanguageModel.noUsage,
      finishReason: fromFinishReason(this.finishReason, this.reader.hasToolCalls),
      providerMetadata: this.reader.metadata({ responseId: this.responseId, modelVersion: this.modelVersion }, this.finishReason)
    }])
  }
}
