/**
 * The wire mapping of POST /chat/completions: requests from the core's
 * `LanguageModel.Request`, responses and stream chunks back to parts.
 *
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as Messages from "@chat-ts/core/Messages"
import * as Result from "effect/Result"
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption
} from "openai/resources/chat/completions"
import type { CompletionUsage } from "openai/resources/completions"
import type { ResponseFormatJSONSchema } from "openai/resources/shared"
import type { Options } from "./chatCompletionsOptions.js"
import { malformed, type Redactor } from "./errors.js"
import {
  fileUrl,
  isImage,
  metadataKey,
  argumentsText,
  callIdOf,
  metadataString,
  newCallId,
  optional,
  stringField,
  systemText,
  textOf,
  traverse,
  unsupported,
  usage
} from "./shared.js"

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

const audioFormat = (mediaType: string): "wav" | "mp3" | undefined => {
  const type = mediaType.toLowerCase()
  if (type === "audio/wav" || type === "audio/x-wav" || type === "audio/wave") return "wav"
  if (type === "audio/mpeg" || type === "audio/mp3") return "mp3"
  return undefined
}

const filePart = (file: Messages.FilePart): Result.Result<ChatCompletionContentPart, ChatError.InvalidRequest> => {
  if (isImage(file)) return Result.succeed({ type: "image_url", image_url: { url: fileUrl(file) } })
  const format = audioFormat(file.mediaType)
  if (file.data._tag === "Url") {
    return Result.fail(
      unsupported(`Chat Completions takes ${file.mediaType} files only as base64 data, not as a URL (only images may be URLs).`)
    )
  }
  if (format !== undefined) return Result.succeed({ type: "input_audio", input_audio: { data: file.data.base64, format } })
  return Result.succeed({
    type: "file",
    file: { file_data: fileUrl(file), filename: file.filename ?? "file" }
  })
}

const userMessage = (message: Messages.Message): Result.Result<ChatCompletionMessageParam, ChatError.InvalidRequest> => {
  const first = message.parts[0]
  if (message.parts.length === 1 && first !== undefined && first._tag === "Text") {
    return Result.succeed({ role: "user", content: first.text })
  }
  const parts = message.parts.filter((part) => part._tag === "Text" || part._tag === "File")
  return Result.map(
    traverse(parts, (part): Result.Result<ChatCompletionContentPart, ChatError.InvalidRequest> =>
      part._tag === "Text" ? Result.succeed({ type: "text", text: part.text }) : filePart(part)),
    (content) => ({ role: "user", content })
  )
}

/** What compatible servers need back on an assistant message, from its `providerMetadata.openai`. */
interface Extras {
  /** OpenRouter's `reasoning_details`, sent back as they came. */
  readonly reasoningDetails?: ReadonlyArray<unknown>
  /** Per call id, the call's `extra_content` (Gemini's `google.thought_signature`). */
  readonly toolCallExtra?: { readonly [id: string]: unknown }
}

const extrasOf = (message: Messages.Message): Extras => {
  const entry = message.providerMetadata?.[metadataKey]
  if (typeof entry !== "object" || entry === null) return {}
  const details: unknown = Reflect.get(entry, "reasoningDetails")
  const extra: unknown = Reflect.get(entry, "toolCallExtra")
  return {
    ...(Array.isArray(details) ? { reasoningDetails: details } : {}),
    ...(typeof extra === "object" && extra !== null ? { toolCallExtra: extra as { readonly [id: string]: unknown } } : {})
  }
}

/** The field of a Reasoning part read from `reasoning_content` (DeepSeek, vLLM, Kimi), which goes back. */
const reasoningContentField = "reasoning_content"

/**
 * The reasoning DeepSeek's thinking mode needs back in a tool loop (a 400
 * otherwise): the text of the parts read from `reasoning_content`.
 */
const reasoningContentOf = (message: Messages.Message): string | undefined => {
  const texts = message.parts.flatMap((part) =>
    part._tag === "Reasoning" && metadataString(part.providerMetadata, "field") === reasoningContentField ? [part.text] : []
  )
  return texts.length === 0 ? undefined : texts.join("")
}

/**
 * The assistant message, then one `tool` message per answered call. Tool
 * calls go through `Messages.projectToolCall`: the model sees the effective
 * (possibly edited) arguments, and a call without a result gets no answer.
 * What compatible servers need back goes back: `reasoning_content` within the
 * current turn (`inTurn`: after the last user message), OpenRouter's
 * `reasoning_details`, and each call's `extra_content`. Other reasoning is not
 * sent back (OpenAI takes none).
 */
const assistantMessages = (
  message: Messages.Message,
  inTurn: boolean
): Result.Result<Array<ChatCompletionMessageParam>, ChatError.InvalidRequest> => {
  if (message.parts.some((part) => part._tag === "File")) {
    return Result.fail(unsupported("Chat Completions does not take files in assistant messages."))
  }
  const extras = extrasOf(message)
  const projected = Messages.toolCallsOf(message).map(Messages.projectToolCall)
  const text = textOf(message)
  const toolCalls = projected.map((call): ChatCompletionMessageFunctionToolCall => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
    ...(extras.toolCallExtra !== undefined && Object.hasOwn(extras.toolCallExtra, call.id)
      ? { extra_content: extras.toolCallExtra[call.id] }
      : {})
  }))
  const reasoning = inTurn ? reasoningContentOf(message) : undefined
  const out: Array<ChatCompletionMessageParam> = [{
    role: "assistant",
    content: text === "" && toolCalls.length > 0 ? null : text,
    ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
    ...(reasoning === undefined ? {} : { reasoning_content: reasoning }),
    ...(extras.reasoningDetails === undefined ? {} : { reasoning_details: extras.reasoningDetails })
  }]
  for (const call of projected) {
    if (call.result === undefined) continue
    // Tool messages take text only: a result's files are named by a placeholder, never sent as base64 text.
    out.push({ role: "tool", tool_call_id: call.id, content: Messages.resultTextOnly(call.result) })
  }
  return Result.succeed(out)
}

/** The conversation as Chat Completions messages. */
export const toMessages = (
  messages: Messages.Messages
): Result.Result<Array<ChatCompletionMessageParam>, ChatError.InvalidRequest> => {
  let lastUser = messages.length - 1
  while (lastUser >= 0 && messages[lastUser]!.role !== "user") lastUser--
  return Result.map(
    traverse(messages.map((message, index) => [message, index] as const), ([message, index]): Result.Result<Array<ChatCompletionMessageParam>, ChatError.InvalidRequest> => {
      switch (message.role) {
        case "system":
          return Result.map(systemText(message), (content) => [{ role: "system", content }])
        case "user":
          return Result.map(userMessage(message), (m) => [m])
        case "assistant":
          return assistantMessages(message, index > lastUser)
      }
    }),
    (groups) => groups.flat()
  )
}

/**
 * A tool declaration as a Chat Completions function tool: `strict: true` when
 * the declaration is strict, no `strict` field otherwise (nor at all when the
 * layer turned strict mode off: some servers refuse the field).
 */
export const toTool = (declaration: LanguageModel.ToolDeclaration, strict = true): ChatCompletionTool => ({
  type: "function",
  function: {
    name: declaration.name,
    ...(declaration.description === "" ? {} : { description: declaration.description }),
    parameters: { ...declaration.parameters },
    ...(declaration.strict && strict ? { strict: true } : {})
  }
})

const toToolChoice = (choice: LanguageModel.ToolChoice): ChatCompletionToolChoiceOption =>
  typeof choice === "string" ? choice : { type: "function", function: { name: choice.tool } }

const toResponseFormat = (format: LanguageModel.ResponseFormat, strict: boolean): ResponseFormatJSONSchema => ({
  type: "json_schema",
  json_schema: {
    name: format.name,
    schema: { ...format.schema },
    ...(strict ? { strict: format.strict } : {}),
    ...optional("description", format.description)
  }
})

/** The request body (without `stream`): request options take precedence over the layer's options. */
export const toBody = (
  request: LanguageModel.Request,
  options: Options
): Result.Result<ChatCompletionCreateParamsNonStreaming, ChatError.InvalidRequest> =>
  Result.map(toMessages(request.messages), (messages) => {
    const o = request.options
    const maxTokens = o.maxTokens ?? options.maxTokens
    const toolChoice = o.toolChoice ?? options.toolChoice
    const parallelToolCalls = o.parallelToolCalls ?? options.parallelToolCalls
    const stop = o.stop ?? options.stop
    const hasTools = request.tools.length > 0
    const strict = options.strict !== false
    return {
      model: options.model,
      messages,
      ...(hasTools ? { tools: request.tools.map((tool) => toTool(tool, strict)) } : {}),
      ...(toolChoice === undefined || !hasTools ? {} : { tool_choice: toToolChoice(toolChoice) }),
      ...(parallelToolCalls === undefined || !hasTools ? {} : { parallel_tool_calls: parallelToolCalls }),
      ...optional("temperature", o.temperature ?? options.temperature),
      ...optional("top_p", o.topP ?? options.topP),
      ...optional("seed", o.seed ?? options.seed),
      ...(stop === undefined ? {} : { stop: [...stop] }),
      ...(maxTokens === undefined ? {} : (options.maxTokensParameter ?? "max_completion_tokens") === "max_tokens"
        ? { max_tokens: maxTokens }
        : { max_completion_tokens: maxTokens }),
      ...optional("reasoning_effort", o.reasoningEffort ?? options.reasoningEffort),
      ...(o.responseFormat === undefined ? {} : { response_format: toResponseFormat(o.responseFormat, strict) }),
      ...optional("user", options.user),
      ...o.providerOptions
    }
  })

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/** The core usage of a Chat Completions usage, its counts validated (servers send `null`s and strings too). */
export const fromUsage = (u: CompletionUsage | null | undefined): LanguageModel.Response["usage"] =>
  typeof u !== "object" || u === null ? LanguageModel.noUsage : usage({
    inputTokens: u.prompt_tokens,
    outputTokens: u.completion_tokens,
    reasoningTokens: field(u.completion_tokens_details, "reasoning_tokens"),
    cachedInputTokens: field(u.prompt_tokens_details, "cached_tokens")
  })

/** The usage of a chunk: `usage`, or Groq's `x_groq.usage`. */
const chunkUsage = (chunk: ChatCompletionChunk): unknown => {
  if (chunk.usage !== undefined && chunk.usage !== null) return chunk.usage
  return field(field(chunk, "x_groq"), "usage")
}

/** The core finish reason; a response holding tool calls finishes with `tool-calls` whatever the server said. */
export const fromFinishReason = (reason: string | null | undefined, hasToolCalls: boolean): Messages.FinishReason => {
  if (hasToolCalls && (reason === "stop" || reason === "tool_calls" || reason === "function_call")) return "tool-calls"
  switch (reason) {
    case "stop":
      return "stop"
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "length":
      return "length"
    case "content_filter":
      return "content-filter"
    default:
      return "other"
  }
}

/** Reasoning text sent by OpenAI-compatible servers (`reasoning_content` or `reasoning`); OpenAI sends none. */
export const reasoningOf = (message: unknown): string | undefined =>
  stringField(message, "reasoning_content") ?? stringField(message, "reasoning")

/** The Reasoning part's metadata: marks text read from `reasoning_content`, which goes back in a tool loop. */
const reasoningMetadata = (message: unknown): { readonly providerMetadata?: { readonly [key: string]: unknown } } =>
  stringField(message, reasoningContentField) === undefined ? {} : { providerMetadata: { [metadataKey]: { field: reasoningContentField } } }

const metadata = (id: string, model: string, extras: Extras = {}, refusal = ""): { readonly [key: string]: unknown } => ({
  [metadataKey]: {
    completionId: id,
    model,
    // The model refused: this text is also its own text part (the last one), apart from any content.
    ...(refusal === "" ? {} : { refusal }),
    ...(extras.reasoningDetails === undefined || extras.reasoningDetails.length === 0
      ? {}
      : { reasoningDetails: extras.reasoningDetails }),
    ...(extras.toolCallExtra === undefined || Object.keys(extras.toolCallExtra).length === 0
      ? {}
      : { toolCallExtra: extras.toolCallExtra })
  }
})

/** A field the SDK types do not declare. */
const field = (u: unknown, key: string): unknown => typeof u === "object" && u !== null ? Reflect.get(u, key) : undefined

/** The error message a server put next to `finish_reason: "error"` (OpenRouter: `error.message` on the body or chunk). */
const errorMessageOf = (...holders: ReadonlyArray<unknown>): string | undefined => {
  for (const holder of holders) {
    const error = field(holder, "error")
    const message = stringField(error, "message") ?? (typeof error === "string" ? error : undefined)
    if (message !== undefined && message !== "") return message
  }
  return undefined
}

/** `finish_reason: "error"`: the server failed while generating (vLLM, OpenRouter). */
const finishedWithError = (message: string | undefined, redact: Redactor): ChatError.ServerError =>
  new ChatError.ServerError({
    message: redact(`The server ended the response with finish_reason "error"${message === undefined ? "." : `: ${message}`}`)
  })

/** A whole completion as a core response (the first choice). */
export const fromCompletion = (
  completion: ChatCompletion,
  redact: Redactor = (text) => text
): Result.Result<LanguageModel.Response, ChatError.MalformedResponse | ChatError.ServerError> => {
  const choice = completion.choices?.find((c) => c.index === 0) ?? completion.choices?.[0]
  if (choice === undefined || choice.message === undefined || choice.message === null) {
    return Result.fail(malformed("The chat completion holds no choice."))
  }
  if ((choice.finish_reason as string) === "error") {
    return Result.fail(finishedWithError(errorMessageOf(choice, completion), redact))
  }
  const message = choice.message
  const parts: Array<Messages.Part> = []
  const reasoning = reasoningOf(message)
  if (reasoning !== undefined && reasoning !== "") parts.push({ _tag: "Reasoning", text: reasoning, ...reasoningMetadata(message) })
  if (typeof message.content === "string" && message.content !== "") parts.push(Messages.text(message.content))
  if (typeof message.refusal === "string" && message.refusal !== "") parts.push(Messages.text(message.refusal))
  const toolCallExtra: Array<[string, unknown]> = []
  for (const call of message.tool_calls ?? []) {
    if (call.type !== "function") continue
    const id = callIdOf(call.id)
    const extra = field(call, "extra_content")
    if (extra !== undefined && extra !== null) toolCallExtra.push([id, extra])
    parts.push(Messages.toolCall({ id, name: call.function.name, arguments: argumentsText(call.function.arguments) }))
  }
  const details = field(message, "reasoning_details")
  const hasToolCalls = parts.some((part) => part._tag === "ToolCall")
  return Result.succeed({
    parts,
    usage: fromUsage(completion.usage),
    finishReason: fromFinishReason(choice.finish_reason, hasToolCalls),
    providerMetadata: metadata(completion.id, completion.model, {
      ...(Array.isArray(details) ? { reasoningDetails: details } : {}),
      toolCallExtra: Object.fromEntries(toolCallExtra)
    }, typeof message.refusal === "string" ? message.refusal : "")
  })
}

/**
 * Turns stream chunks into stream parts. Argument fragments are keyed by the
 * call's `index`; the first fragment of a call carries its id and name.
 */
export class StreamState {
  private readonly ids = new Map<number, { id: string; hasArguments: boolean }>()
  private lastIndex: number | undefined
  private error: string | undefined

  constructor(private readonly redact: Redactor = (text) => text) {}
  private finishReason: string | undefined
  private hasToolCalls = false
  private usage: LanguageModel.Response["usage"] | undefined
  private id = ""
  private model = ""
  private readonly reasoningDetails: Array<{ [key: string]: unknown }> = []
  /** The refusal streamed so far. */
  private refusal = ""
  private readonly toolCallExtra = new Map<string, unknown>()

  /** The parts of one chunk. */
  push(chunk: ChatCompletionChunk): Array<LanguageModel.StreamPart> {
    const out: Array<LanguageModel.StreamPart> = []
    if (chunk.id !== undefined && chunk.id !== "") this.id = chunk.id
    if (chunk.model !== undefined && chunk.model !== "") this.model = chunk.model
    const sent = chunkUsage(chunk)
    if (typeof sent === "object" && sent !== null) this.usage = fromUsage(sent as CompletionUsage)
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== 0 && choice.index !== undefined) continue
      const delta = choice.delta
      if (delta !== undefined && delta !== null) {
        const reasoning = reasoningOf(delta)
        if (reasoning !== undefined && reasoning !== "") {
          out.push({ _tag: "ReasoningDelta", text: reasoning, ...reasoningMetadata(delta) })
        }
        const details = field(delta, "reasoning_details")
        if (Array.isArray(details)) for (const detail of details) this.addDetail(detail)
        if (typeof delta.content === "string" && delta.content !== "") out.push({ _tag: "TextDelta", text: delta.content })
        if (typeof delta.refusal === "string" && delta.refusal !== "") {
          // A refusal is its own text part, never glued to the content streamed before it.
          out.push({ _tag: "TextDelta", text: delta.refusal, ...(this.refusal === "" ? { start: true } : {}) })
          this.refusal += delta.refusal
        }
        for (const fragment of delta.tool_calls ?? []) this.toolFragment(fragment, out)
      }
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        this.finishReason = choice.finish_reason
        if ((choice.finish_reason as string) === "error") this.error ??= errorMessageOf(choice, chunk)
      }
    }
    return out
  }

  private toolFragment(
    fragment: ChatCompletionChunk.Choice.Delta.ToolCall,
    out: Array<LanguageModel.StreamPart>
  ): void {
    const freshId = fragment.id !== undefined && fragment.id !== null && fragment.id !== "" ? fragment.id : undefined
    // A fragment without `index` continues the open call, unless it names another call.
    const open = this.lastIndex === undefined ? undefined : this.ids.get(this.lastIndex)
    const index = fragment.index ?? (open !== undefined && (freshId === undefined || freshId === open.id)
      ? this.lastIndex!
      : this.ids.size)
    this.lastIndex = index
    let call = this.ids.get(index)
    // Some compatible servers send each whole call under the same index: a new
    // id on an index whose call already has arguments starts another call.
    if (call === undefined || (freshId !== undefined && freshId !== call.id && call.hasArguments)) {
      call = { id: freshId ?? newCallId(), hasArguments: false }
      this.ids.set(index, call)
      this.hasToolCalls = true
      out.push({ _tag: "ToolCallStart", id: call.id, name: fragment.function?.name ?? "" })
    }
    const extra = field(fragment, "extra_content")
    if (extra !== undefined && extra !== null) this.toolCallExtra.set(call.id, extra)
    const args = argumentsText(fragment.function?.arguments)
    if (args !== "") {
      call.hasArguments = true
      out.push({ _tag: "ToolCallDelta", id: call.id, argumentsDelta: args })
    }
  }

  /** Merges one streamed `reasoning_details` entry: entries of the same `index` are one detail in pieces. */
  private addDetail(detail: unknown): void {
    if (typeof detail !== "object" || detail === null || Array.isArray(detail)) return
    const entry = detail as { readonly [key: string]: unknown }
    const known = typeof entry.index === "number" ? this.reasoningDetails.find((d) => d.index === entry.index) : undefined
    if (known === undefined) {
      this.reasoningDetails.push({ ...entry })
      return
    }
    for (const [key, value] of Object.entries(entry)) {
      const before = known[key]
      const next = (key === "text" || key === "summary" || key === "data") && typeof before === "string" && typeof value === "string"
        ? before + value
        : value
      Object.defineProperty(known, key, { value: next, enumerable: true, writable: true, configurable: true })
    }
  }

  /** The closing `Finish` part; a stream that ended before its finish reason broke off. */
  end(): Result.Result<Array<LanguageModel.StreamPart>, ChatError.ModelError> {
    if (this.finishReason === undefined) {
      return Result.fail(
        new ChatError.NetworkError({ message: "The model's stream ended before the response was complete (no finish reason)." })
      )
    }
    if (this.finishReason === "error") return Result.fail(finishedWithError(this.error, this.redact))
    return Result.succeed([{
      _tag: "Finish",
      usage: this.usage ?? LanguageModel.noUsage,
      finishReason: fromFinishReason(this.finishReason, this.hasToolCalls),
      providerMetadata: metadata(this.id, this.model, {
        reasoningDetails: this.reasoningDetails,
        toolCallExtra: Object.fromEntries(this.toolCallExtra)
      }, this.refusal)
    }])
  }
}
