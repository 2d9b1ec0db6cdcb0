/**
 * The wire mapping of POST /v1/messages: request bodies from the core's
 * `LanguageModel.Request`, messages and stream events back to parts.
 *
 * @internal
 */
import type {
  CacheControlEphemeral,
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
  Tool,
  ToolChoice,
  ToolResultBlockParam,
  Usage
} from "@anthropic-ai/sdk/resources/messages"
import * as ChatError from "@chat-ts/core/ChatError"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as Messages from "@chat-ts/core/Messages"
import * as Result from "effect/Result"
import type { Redactor } from "./errors.js"
import type { Options } from "./options.js"

/** The key of this package's entry in `providerMetadata`. */
export const metadataKey = "anthropic"

/** The default `max_tokens` (the API requires one). */
export const defaultMaxTokens = 4096

const unsupported = (message: string): ChatError.InvalidRequest => new ChatError.InvalidRequest({ message })

const malformed = (message: string): ChatError.MalformedResponse => new ChatError.MalformedResponse({ message })

const field = (u: unknown, key: string): unknown => (typeof u === "object" && u !== null ? Reflect.get(u, key) : undefined)

/** This package's metadata entry of a part or message. */
const anthropicMetadata = (metadata: { readonly [key: string]: unknown } | undefined): unknown => metadata?.[metadataKey]

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

const imageTypes: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"])

/** A user file as an image or document block. */
const fileBlock = (file: Messages.FilePart): Result.Result<ImageBlockParam | DocumentBlockParam, ChatError.InvalidRequest> => {
  const type = file.mediaType.toLowerCase()
  const title = file.filename === undefined ? {} : { title: file.filename }
  if (type.startsWith("image/")) {
    if (file.data._tag === "Url") return Result.succeed({ type: "image", source: { type: "url", url: file.data.url } })
    if (!imageTypes.has(type)) {
      return Result.fail(unsupported(`Anthropic takes images as JPEG, PNG, GIF or WebP, not ${file.mediaType}.`))
    }
    return Result.succeed({
      type: "image",
      source: { type: "base64", media_type: type as "image/png", data: file.data.base64 }
    })
  }
  if (type === "application/pdf") {
    return Result.succeed({
      type: "document",
      source: file.data._tag === "Url"
        ? { type: "url", url: file.data.url }
        : { type: "base64", media_type: "application/pdf", data: file.data.base64 },
      ...title
    })
  }
  if (type === "text/plain" && file.data._tag === "Base64") {
    return Result.succeed({
      type: "document",
      source: { type: "text", media_type: "text/plain", data: Buffer.from(file.data.base64, "base64").toString("utf8") },
      ...title
    })
  }
  return Result.fail(
    unsupported(`Anthropic takes images, PDF documents and base64 text/plain documents, not ${file.mediaType}${file.data._tag === "Url" ? " by URL" : ""}.`)
  )
}

const userBlocks = (message: Messages.Message): Result.Result<Array<ContentBlockParam>, ChatError.InvalidRequest> => {
  const out: Array<ContentBlockParam> = []
  for (const part of message.parts) {
    if (part._tag === "Text") {
      if (part.text !== "") out.push({ type: "text", text: part.text })
    } else if (part._tag === "File") {
      const block = fileBlock(part)
      if (Result.isFailure(block)) return Result.fail(block.failure)
      out.push(block.success)
    }
  }
  return Result.succeed(out)
}

/** The `tool_use` input: the effective arguments parsed; anything but a JSON object (never sent by the API) is `{}`. */
const toolInput = (args: string): { readonly [key: string]: unknown } => {
  try {
    const parsed: unknown = JSON.parse(args === "" ? "{}" : args)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed as { readonly [key: string]: unknown } : {}
  } catch {
    return {}
  }
}

/** A Reasoning part back as the thinking block it came from: only this provider's, unchanged. */
const thinkingBlock = (part: Messages.ReasoningPart): ContentBlockParam | undefined => {
  const meta = anthropicMetadata(part.providerMetadata)
  const type = field(meta, "type")
  if (type === "redacted_thinking") {
    const data = field(meta, "data")
    return typeof data === "string" ? { type: "redacted_thinking", data } : undefined
  }
  if (type === "thinking" && part.signature !== undefined) {
    return { type: "thinking", thinking: part.text, signature: part.signature }
  }
  return undefined
}

/**
 * A `tool_result`'s content: its text, and when it has files, the text then
 * each file as an image or document block (one Anthropic does not take, as a
 * placeholder text).
 */
const resultContent = (result: Messages.ProjectedResult): NonNullable<ToolResultBlockParam["content"]> => {
  const files = Messages.resultFiles(result)
  if (files.length === 0) return result.text
  const blocks: Array<TextBlockParam | ImageBlockParam | DocumentBlockParam> = [{ type: "text", text: result.text }]
  files.forEach((file, index) => {
    const block = fileBlock(file)
    blocks.push(Result.isSuccess(block) ? block.success : { type: "text", text: Messages.filePlaceholder(file, index) })
  })
  return blocks
}

/** An assistant message's blocks, and the `tool_result` blocks of its answered calls. */
const assistantBlocks = (
  message: Messages.Message
): Result.Result<{ readonly content: Array<ContentBlockParam>; readonly results: Array<ToolResultBlockParam> }, ChatError.InvalidRequest> => {
  const content: Array<ContentBlockParam> = []
  const results: Array<ToolResultBlockParam> = []
  for (const part of message.parts) {
    switch (part._tag) {
      case "File":
        return Result.fail(unsupported("Anthropic does not take files in assistant messages."))
      case "Text":
        if (part.text !== "") content.push({ type: "text", text: part.text })
        break
      case "Reasoning": {
        const block = thinkingBlock(part)
        if (block !== undefined) content.push(block)
        break
      }
      case "ToolCall": {
        const call = Messages.projectToolCall(part)
        content.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call.arguments) })
        if (call.result !== undefined) {
          results.push({
            type: "tool_result",
            tool_use_id: call.id,
            content: resultContent(call.result),
            ...(call.result.isError ? { is_error: true } : {})
          })
        }
        break
      }
    }
  }
  return Result.succeed({ content, results })
}

/** Appends blocks to the conversation, merging them into the last message when it has the same role. */
const push = (out: Array<MessageParam>, role: "user" | "assistant", blocks: ReadonlyArray<ContentBlockParam>): void => {
  if (blocks.length === 0) return
  const last = out[out.length - 1]
  if (last !== undefined && last.role === role && Array.isArray(last.content)) last.content.push(...blocks)
  else out.push({ role, content: [...blocks] })
}

/** The system prompt and the conversation as Messages API messages. */
export const toMessages = (
  messages: Messages.Messages
): Result.Result<{ readonly system: Array<string>; readonly messages: Array<MessageParam> }, ChatError.InvalidRequest> => {
  const system: Array<string> = []
  const out: Array<MessageParam> = []
  for (const message of messages) {
    switch (message.role) {
      case "system": {
        if (!message.parts.every((part) => part._tag === "Text")) {
          return Result.fail(unsupported("A system message may only hold text parts."))
        }
        const text = Messages.textOf(message)
        if (text !== "") system.push(text)
        break
      }
      case "user": {
        const blocks = userBlocks(message)
        if (Result.isFailure(blocks)) return Result.fail(blocks.failure)
        push(out, "user", blocks.success)
        break
      }
      case "assistant": {
        const blocks = assistantBlocks(message)
        if (Result.isFailure(blocks)) return Result.fail(blocks.failure)
        push(out, "assistant", blocks.success.content)
        // The answers of this response's calls: one user message, results first.
        push(out, "user", blocks.success.results)
        break
      }
    }
  }
  return Result.succeed({ system, messages: out })
}

const cacheControl = (caching: Options["promptCaching"]): CacheControlEphemeral | undefined =>
  caching === undefined || caching === false
    ? undefined
    : caching === true || caching.ttl === undefined
    ? { type: "ephemeral" }
    : { type: "ephemeral", ttl: caching.ttl }

/** A tool declaration as a custom tool. */
export const toTool = (declaration: LanguageModel.ToolDeclaration, strict: boolean): Tool => ({
  name: declaration.name,
  ...(declaration.description === "" ? {} : { description: declaration.description }),
  input_schema: { type: "object", ...declaration.parameters },
  ...(strict && declaration.strict ? { strict: true } : {})
})

const toToolChoice = (choice: LanguageModel.ToolChoice, disableParallel: boolean): ToolChoice => {
  const parallel = disableParallel ? { disable_parallel_tool_use: true } : {}
  if (choice === "none") return { type: "none" }
  if (choice === "auto") return { type: "auto", ...parallel }
  if (choice === "required") return { type: "any", ...parallel }
  return { type: "tool", name: choice.tool, ...parallel }
}

/** A request body, and the name of the tool standing for structured output (when one does). */
export interface Body {
  readonly body: MessageCreateParamsNonStreaming
  readonly structuredTool: string | undefined
  /** What the request asked for that is not sent, to be logged as a warning (`undefined`: nothing). */
  readonly notSent: string | undefined
}

/**
 * The sampling parameters the Messages API refuses: version `2026-10-21`
 * (what `@anthropic-ai/sdk` 1.x sends) answers `temperature`, `top_p` and
 * `top_k` with a 400, even at their defaults, and the SDK no longer declares them.
 */
const sampling = ["temperature", "topP", "topK"] as const

const refusedSampling = "the Anthropic Messages API (version 2026-10-21) refuses sampling parameters (temperature, top_p, top_k)"

const effortOf = (effort: LanguageModel.Options["reasoningEffort"]): "low" | "medium" | "high" | undefined =>
  effort === undefined ? undefined : effort === "minimal" ? "low" : effort

/** The request body (without `stream`): request options take precedence over the layer's options. */
export const toBody = (request: LanguageModel.Request, options: Options): Result.Result<Body, ChatError.InvalidRequest> =>
  Result.flatMap(toMessages(request.messages), ({ messages, system }): Result.Result<Body, ChatError.InvalidRequest> => {
    const o = request.options
    // Set on the layer (past its `never` types): a setting of this provider that cannot be honoured, refused.
    const given: { readonly [K in (typeof sampling)[number]]?: unknown } = options
    const configured = sampling.filter((key) => given[key] !== undefined)
    if (configured.length > 0) {
      return Result.fail(unsupported(
        `AnthropicLanguageModel's ${configured.join(", ")} cannot be sent: ${refusedSampling}. Remove ${
          configured.length === 1 ? "it" : "them"
        } from the layer's options.`
      ))
    }
    // Set on a request (provider-neutral options, which another model of a Router may take): not sent, with a warning.
    // (Unless the caller's providerOptions send the same field themselves.)
    const wireName = { temperature: "temperature", topP: "top_p" } as const
    const asked = (["temperature", "topP"] as const).filter((key) =>
      o[key] !== undefined && (o.providerOptions === undefined || !Object.hasOwn(o.providerOptions, wireName[key]))
    )
    const notSent = asked.length === 0
      ? undefined
      : `The request's ${asked.map((key) => `${key} (${o[key]})`).join(" and ")} ${asked.length === 1 ? "is" : "are"} not sent: ${refusedSampling}.`
    const thinking = options.thinking
    const thinkingOn = thinking !== undefined
    const budget = thinking?.type === "enabled" ? thinking.budgetTokens : undefined
    const maxTokens = o.maxTokens ?? options.maxTokens ?? defaultMaxTokens + (budget ?? 0)
    if (budget !== undefined && (!Number.isInteger(budget) || budget < 1024 || budget >= maxTokens)) {
      return Result.fail(unsupported(
        `The thinking budget must be a whole number of at least 1024 tokens and below maxTokens (${maxTokens}); it is ${budget}.`
      ))
    }
    const cache = cacheControl(options.promptCaching)
    const strict = options.strictTools === true
    const format = o.responseFormat
    const mode = options.structuredOutput ?? (thinkingOn ? "native" : "tool")
    const structuredTool = format !== undefined && mode === "tool" ? format.name : undefined
    if (structuredTool !== undefined && request.tools.some((tool) => tool.name === structuredTool)) {
      return Result.fail(unsupported(`The structured output's name '${structuredTool}' is also the name of a tool.`))
    }
    if (structuredTool !== undefined && thinkingOn) {
      return Result.fail(unsupported("Anthropic refuses a forced tool while thinking is on: use structuredOutput: \"native\"."))
    }
    const declared = [
      ...request.tools.map((tool) => toTool(tool, strict)),
      ...(format !== undefined && structuredTool !== undefined
        ? [{
          name: structuredTool,
          description: format.description ?? "Give the final answer with this tool.",
          input_schema: { type: "object" as const, ...format.schema }
        }]
        : [])
    ]
    if (cache !== undefined && declared.length > 0) {
      declared[declared.length - 1] = { ...declared[declared.length - 1]!, cache_control: cache }
    }
    const disableParallel = (o.parallelToolCalls ?? options.parallelToolCalls) === false
    const chosen = o.toolChoice ?? options.toolChoice
    const toolChoice: ToolChoice | undefined = structuredTool !== undefined
      // The answer is a call of the structured tool, unless the model calls one of the real tools first.
      ? request.tools.length === 0 ? { type: "tool", name: structuredTool } : { type: "any", ...(disableParallel ? { disable_parallel_tool_use: true } : {}) }
      : request.tools.length === 0
      ? undefined
      : chosen === undefined
      ? (disableParallel ? { type: "auto", disable_parallel_tool_use: true } : undefined)
      : toToolChoice(chosen, disableParallel)
    const stop = o.stop ?? options.stop
    const effort = effortOf(o.reasoningEffort)
    const systemBlocks: Array<TextBlockParam> = system.map((text) => ({ type: "text", text }))
    if (cache !== undefined && systemBlocks.length > 0) {
      systemBlocks[systemBlocks.length - 1] = { ...systemBlocks[systemBlocks.length - 1]!, cache_control: cache }
    }
    const outputConfig = {
      ...(effort === undefined ? {} : { effort }),
      ...(format !== undefined && structuredTool === undefined ? { format: { type: "json_schema" as const, schema: { ...format.schema } } } : {})
    }
    return Result.succeed({
      structuredTool,
      notSent,
      body: {
        model: options.model,
        max_tokens: maxTokens,
        messages,
        ...(systemBlocks.length === 0 ? {} : { system: systemBlocks }),
        ...(declared.length === 0 ? {} : { tools: declared }),
        ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }),
        ...(thinking === undefined
          ? {}
          : { thinking: thinking.type === "enabled" ? { type: "enabled", budget_tokens: thinking.budgetTokens } : { type: "adaptive" } }),
        ...(stop === undefined || stop.length === 0 ? {} : { stop_sequences: [...stop] }),
        ...(Object.keys(outputConfig).length === 0 ? {} : { output_config: outputConfig }),
        ...(options.user === undefined ? {} : { metadata: { user_id: options.user } }),
        ...o.providerOptions
      }
    })
  })

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/** A token count as sent: a whole number from 0 up, or nothing. */
const count = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isSafeInteger(u) && u >= 0 ? u : undefined

/** Token counts of a message, as they arrive (a stream's `message_delta` updates some of them). */
interface Counts {
  input?: number | undefined
  output?: number | undefined
  cacheWrite?: number | undefined
  cacheRead?: number | undefined
  thinking?: number | undefined
}

/** Updates counts from an API usage object: only the counts it holds. */
const readCounts = (counts: Counts, usage: Partial<Usage> | null | undefined): void => {
  if (typeof usage !== "object" || usage === null) return
  counts.input = count(usage.input_tokens) ?? counts.input
  counts.output = count(usage.output_tokens) ?? counts.output
  counts.cacheWrite = count(usage.cache_creation_input_tokens) ?? counts.cacheWrite
  counts.cacheRead = count(usage.cache_read_input_tokens) ?? counts.cacheRead
  counts.thinking = count(field(usage.output_tokens_details, "thinking_tokens")) ?? counts.thinking
}

/**
 * The core usage: input tokens include the cache's (Anthropic counts them
 * apart), `cachedInputTokens` are those read from the cache, reasoning tokens
 * those spent thinking.
 */
const toUsage = (counts: Counts): LanguageModel.Response["usage"] => ({
  inputTokens: (counts.input ?? 0) + (counts.cacheWrite ?? 0) + (counts.cacheRead ?? 0),
  outputTokens: counts.output ?? 0,
  ...(counts.thinking === undefined ? {} : { reasoningTokens: counts.thinking }),
  ...(counts.cacheRead === undefined ? {} : { cachedInputTokens: counts.cacheRead })
})

/** The core finish reason of a stop reason. */
export const fromStopReason = (reason: string | null | undefined, hasToolCalls: boolean): Messages.FinishReason => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return hasToolCalls ? "tool-calls" : "stop"
    case "tool_use":
      return hasToolCalls ? "tool-calls" : "stop"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "refusal":
      return "content-filter"
    default:
      return "other"
  }
}

const metadata = (
  id: string,
  model: string,
  stopReason: string | null | undefined,
  stopSequence: string | null | undefined,
  counts: Counts
): { readonly [key: string]: unknown } => ({
  [metadataKey]: {
    messageId: id,
    model,
    ...(typeof stopReason === "string" ? { stopReason } : {}),
    ...(typeof stopSequence === "string" ? { stopSequence } : {}),
    ...(counts.cacheWrite === undefined ? {} : { cacheCreationInputTokens: counts.cacheWrite }),
    ...(counts.cacheRead === undefined ? {} : { cacheReadInputTokens: counts.cacheRead })
  }
})

/** A Reasoning part of a thinking block. */
const thinkingPart = (thinking: string, signature: string): Messages.ReasoningPart => ({
  _tag: "Reasoning",
  text: thinking,
  signature,
  providerMetadata: { [metadataKey]: { type: "thinking" } }
})

/** A Reasoning part of a redacted thinking block: no text, its encrypted data kept to go back. */
const redactedPart = (data: string): Messages.ReasoningPart => ({
  _tag: "Reasoning",
  text: "",
  providerMetadata: { [metadataKey]: { type: "redacted_thinking", data } }
})

/** A whole message as a core response; the structured tool's call becomes the answer's text. */
export const fromMessage = (
  message: Message,
  structuredTool: string | undefined
): Result.Result<LanguageModel.Response, ChatError.MalformedResponse> => {
  if (typeof message !== "object" || message === null || !Array.isArray(message.content)) {
    return Result.fail(malformed("The Anthropic message holds no content."))
  }
  const parts: Array<Messages.Part> = []
  for (const block of message.content) {
    switch (block.type) {
      case "text":
        parts.push(Messages.text(block.text))
        break
      case "thinking":
        parts.push(thinkingPart(block.thinking, block.signature))
        break
      case "redacted_thinking":
        parts.push(redactedPart(block.data))
        break
      case "tool_use":
        if (typeof block.id !== "string" || block.id === "" || typeof block.name !== "string") {
          return Result.fail(malformed("A tool_use block has no id or name."))
        }
        parts.push(
          block.name === structuredTool
            ? Messages.text(JSON.stringify(block.input ?? {}))
            : Messages.toolCall({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) })
        )
        break
      default:
        // Server tools' blocks (web search…) are the server's business: not parts of the conversation.
        break
    }
  }
  const counts: Counts = {}
  readCounts(counts, message.usage)
  const hasToolCalls = parts.some((part) => part._tag === "ToolCall")
  return Result.succeed({
    parts,
    usage: toUsage(counts),
    finishReason: fromStopReason(message.stop_reason, hasToolCalls),
    providerMetadata: metadata(message.id, message.model, message.stop_reason, message.stop_sequence, counts)
  })
}

/** What a content block of a stream is. */
type OpenBlock =
  | { readonly type: "text"; started: boolean }
  | { readonly type: "thinking"; started: boolean }
  | { readonly type: "tool_use"; readonly id: string; hasInput: boolean }
  | { readonly type: "structured"; started: boolean }
  | { readonly type: "other" }

/**
 * Turns stream events into stream parts. Blocks are keyed by their `index`;
 * each text or thinking block starts a new part, as in a whole message.
 */
export class StreamState {
  private readonly blocks = new Map<number, OpenBlock>()
  private readonly counts: Counts = {}
  private id = ""
  private model = ""
  private stopReason: string | null | undefined
  private stopSequence: string | null | undefined
  private stopped = false
  private hasToolCalls = false

  constructor(
    private readonly structuredTool: string | undefined,
    private readonly redact: Redactor = (text) => text
  ) {}

  /** The parts of one event. */
  push(event: RawMessageStreamEvent): Result.Result<Array<LanguageModel.StreamPart>, ChatError.ModelError> {
    const out: Array<LanguageModel.StreamPart> = []
    switch (event.type) {
      case "message_start":
        this.id = typeof event.message?.id === "string" ? event.message.id : ""
        this.model = typeof event.message?.model === "string" ? event.message.model : ""
        readCounts(this.counts, event.message?.usage)
        break
      case "content_block_start":
        return this.start(event.index, event.content_block)
      case "content_block_delta":
        return this.delta(event.index, event.delta)
      case "content_block_stop": {
        const block = this.blocks.get(event.index)
        // A call without any input fragment has an empty object as input.
        if (block?.type === "tool_use" && !block.hasInput) {
          out.push({ _tag: "ToolCallDelta", id: block.id, argumentsDelta: "{}" })
        }
        break
      }
      case "message_delta":
        this.stopReason = event.delta?.stop_reason ?? this.stopReason
        this.stopSequence = event.delta?.stop_sequence ?? this.stopSequence
        readCounts(this.counts, event.usage as Partial<Usage>)
        break
      case "message_stop":
        this.stopped = true
        break
    }
    return Result.succeed(out)
  }

  private start(
    index: number,
    block: Extract<RawMessageStreamEvent, { type: "content_block_start" }>["content_block"]
  ): Result.Result<Array<LanguageModel.StreamPart>, ChatError.ModelError> {
    if (this.blocks.has(index)) return Result.fail(malformed(`Anthropic's stream started content block ${index} twice.`))
    switch (block.type) {
      case "text":
        this.blocks.set(index, { type: "text", started: block.text !== "" })
        return Result.succeed(block.text === "" ? [] : [{ _tag: "TextDelta", text: block.text, start: true }])
      case "thinking": {
        this.blocks.set(index, { type: "thinking", started: true })
        return Result.succeed([{
          _tag: "ReasoningDelta",
          text: block.thinking,
          start: true,
          ...(block.signature === "" ? {} : { signature: block.signature }),
          providerMetadata: { [metadataKey]: { type: "thinking" } }
        }])
      }
      case "redacted_thinking":
        this.blocks.set(index, { type: "other" })
        return Result.succeed([{ _tag: "Part", part: redactedPart(block.data) }])
      case "tool_use": {
        if (typeof block.id !== "string" || block.id === "" || typeof block.name !== "string") {
          return Result.fail(malformed("A tool_use block of Anthropic's stream has no id or name."))
        }
        const input = block.input !== undefined && block.input !== null && Object.keys(block.input).length > 0
          ? JSON.stringify(block.input)
          : ""
        if (block.name === this.structuredTool) {
          this.blocks.set(index, { type: "structured", started: input !== "" })
          return Result.succeed(input === "" ? [] : [{ _tag: "TextDelta", text: input, start: true }])
        }
        this.blocks.set(index, { type: "tool_use", id: block.id, hasInput: input !== "" })
        this.hasToolCalls = true
        return Result.succeed([
          { _tag: "ToolCallStart", id: block.id, name: block.name },
          ...(input === "" ? [] : [{ _tag: "ToolCallDelta" as const, id: block.id, argumentsDelta: input }])
        ])
      }
      default:
        this.blocks.set(index, { type: "other" })
        return Result.succeed([])
    }
  }

  private delta(
    index: number,
    delta: Extract<RawMessageStreamEvent, { type: "content_block_delta" }>["delta"]
  ): Result.Result<Array<LanguageModel.StreamPart>, ChatError.ModelError> {
    const block = this.blocks.get(index)
    if (block === undefined) return Result.fail(malformed(`Anthropic's stream sent a delta for content block ${index}, which never started.`))
    switch (delta.type) {
      case "text_delta":
        if (block.type !== "text" || delta.text === "") return Result.succeed([])
        {
          const start = !block.started
          block.started = true
          return Result.succeed([{ _tag: "TextDelta", text: delta.text, ...(start ? { start: true } : {}) }])
        }
      case "thinking_delta":
        return Result.succeed(block.type === "thinking" && delta.thinking !== "" ? [{ _tag: "ReasoningDelta", text: delta.thinking }] : [])
      case "signature_delta":
        return Result.succeed(block.type === "thinking" ? [{ _tag: "ReasoningDelta", text: "", signature: delta.signature }] : [])
      case "input_json_delta": {
        if (delta.partial_json === "") return Result.succeed([])
        if (block.type === "structured") {
          const start = !block.started
          block.started = true
          return Result.succeed([{ _tag: "TextDelta", text: delta.partial_json, ...(start ? { start: true } : {}) }])
        }
        if (block.type !== "tool_use") return Result.succeed([])
        block.hasInput = true
        return Result.succeed([{ _tag: "ToolCallDelta", id: block.id, argumentsDelta: delta.partial_json }])
      }
      default:
        return Result.succeed([])
    }
  }

  /** The closing `Finish` part; a stream that ended before `message_stop` broke off. */
  end(): Result.Result<Array<LanguageModel.StreamPart>, ChatError.ModelError> {
    if (!this.stopped || this.stopReason === undefined) {
      return Result.fail(new ChatError.NetworkError({
        message: this.redact("Anthropic's stream ended before the message was complete (no message_stop).")
      }))
    }
    return Result.succeed([{
      _tag: "Finish",
      usage: toUsage(this.counts),
      finishReason: fromStopReason(this.stopReason, this.hasToolCalls),
      providerMetadata: metadata(this.id, this.model, this.stopReason, this.stopSequence, this.counts)
    }])
  }
}
