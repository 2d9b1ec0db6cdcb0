/**
 * The wire mapping of POST /responses: input items from the core's
 * `LanguageModel.Request`, output items and stream events back to parts.
 *
 * @internal
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as Messages from "@chat-ts/core/Messages"
import * as Result from "effect/Result"
import type {
  EasyInputMessage,
  FunctionTool,
  Response,
  ResponseCreateParamsNonStreaming,
  ResponseFunctionCallOutputItem,
  ResponseFunctionCallOutputItemList,
  ResponseInputContent,
  ResponseInputItem,
  ResponseOutputItem,
  ResponseStreamEvent,
  ResponseUsage
} from "openai/resources/responses/responses"
import type { Options } from "./responsesOptions.js"
import { type ApiErrorBody, fromApi, malformed, readErrorBody, type Redactor } from "./errors.js"
import {
  fileUrl,
  isImage,
  metadataKey,
  argumentsText,
  callIdOf,
  metadataString,
  optional,
  stringField,
  systemText,
  traverse,
  unsupported,
  usage
} from "./shared.js"

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

const inputContent = (part: Messages.Part): Result.Result<ResponseInputContent, ChatError.InvalidRequest> => {
  switch (part._tag) {
    case "Text":
      return Result.succeed({ type: "input_text", text: part.text })
    case "File":
      if (isImage(part)) return Result.succeed({ type: "input_image", image_url: fileUrl(part), detail: "auto" })
      return Result.succeed(
        part.data._tag === "Url"
          ? { type: "input_file", file_url: part.data.url, ...optional("filename", part.filename) }
          : { type: "input_file", file_data: fileUrl(part), filename: part.filename ?? "file" }
      )
    default:
      return Result.fail(unsupported(`A user message may not hold a ${part._tag} part.`))
  }
}

const userItem = (message: Messages.Message): Result.Result<ResponseInputItem, ChatError.InvalidRequest> => {
  const first = message.parts[0]
  if (message.parts.length === 1 && first !== undefined && first._tag === "Text") {
    return Result.succeed({ role: "user", content: first.text })
  }
  return Result.map(traverse(message.parts, inputContent), (content) => ({ role: "user", content }))
}

/** A file of a tool result as output content: an image as `input_image`, another file as `input_file`. */
const outputFile = (file: Messages.FilePart): ResponseFunctionCallOutputItem => {
  if (isImage(file)) return { type: "input_image", image_url: fileUrl(file), detail: "auto" }
  return file.data._tag === "Url"
    ? { type: "input_file", file_url: file.data.url, ...optional("filename", file.filename) }
    : { type: "input_file", file_data: fileUrl(file), filename: file.filename ?? "file" }
}

/** A result's output: its text, and when it has files, the text then each file as content (images as images). */
const outputOf = (result: Messages.ProjectedResult): string | ResponseFunctionCallOutputItemList => {
  const files = Messages.resultFiles(result)
  return files.length === 0 ? result.text : [{ type: "input_text", text: result.text }, ...files.map(outputFile)]
}

/** The answers to a response's calls: one `function_call_output` per resolved call, through `Messages.projectToolCall`. */
const outputItems = (message: Messages.Message): Array<ResponseInputItem> => {
  const out: Array<ResponseInputItem> = []
  for (const call of Messages.toolCallsOf(message)) {
    const projected = Messages.projectToolCall(call)
    if (projected.result === undefined) continue
    out.push({ type: "function_call_output", call_id: projected.id, output: outputOf(projected.result) })
  }
  return out
}

/** The phases the API defines for assistant messages (`EasyInputMessage.phase`). */
type Phase = NonNullable<EasyInputMessage["phase"]>

const isPhase = (u: unknown): u is Phase => u === "commentary" || u === "final_answer"

/**
 * The `phase` of each text part of a message, in order, from the sources its
 * response recorded (`providerMetadata.openai.texts`, one per text part);
 * `undefined` where none was recorded or the value is not one the API defines.
 */
const textPhases = (message: Messages.Message): ReadonlyArray<Phase | undefined> => {
  const ours: unknown = message.providerMetadata?.[metadataKey]
  const texts: unknown = typeof ours === "object" && ours !== null ? Reflect.get(ours, "texts") : undefined
  if (!Array.isArray(texts)) return []
  return texts.map((source: unknown) => {
    const phase = stringField(source, "phase")
    return isPhase(phase) ? phase : undefined
  })
}

/**
 * A model response as input items, in part order: reasoning, text (with the
 * `phase` its message item had, which gpt-5.x models need back), then
 * `function_call`s with the effective arguments; then the
 * `function_call_output`s of resolved calls. Reasoning goes back only in a
 * form the server resolves: with its item id, and, when nothing is stored,
 * with its encrypted content (an id alone is a 404 with `store: false`).
 */
const assistantItems = (
  message: Messages.Message,
  stored: boolean
): Result.Result<Array<ResponseInputItem>, ChatError.InvalidRequest> => {
  const out: Array<ResponseInputItem> = []
  const phases = textPhases(message)
  let textIndex = 0
  for (const part of message.parts) {
    switch (part._tag) {
      case "Text": {
        const phase = phases[textIndex++]
        if (part.text !== "") out.push({ role: "assistant", content: part.text, ...optional("phase", phase) })
        break
      }
      case "Reasoning": {
        const id = metadataString(part.providerMetadata, "itemId")
        if (id === undefined || (!stored && part.signature === undefined)) break
        out.push({
          type: "reasoning",
          id,
          summary: part.text === "" ? [] : [{ type: "summary_text", text: part.text }],
          ...optional("encrypted_content", part.signature)
        })
        break
      }
      case "ToolCall": {
        const projected = Messages.projectToolCall(part)
        out.push({ type: "function_call", call_id: projected.id, name: projected.name, arguments: projected.arguments })
        break
      }
      case "File":
        return Result.fail(unsupported("The Responses API does not take files in assistant messages."))
    }
  }
  out.push(...outputItems(message))
  return Result.succeed(out)
}

const messageItems = (
  message: Messages.Message,
  stored: boolean
): Result.Result<Array<ResponseInputItem>, ChatError.InvalidRequest> => {
  switch (message.role) {
    case "system":
      return Result.map(systemText(message), (content) => [{ role: "system", content }])
    case "user":
      return Result.map(userItem(message), (item) => [item])
    case "assistant":
      return assistantItems(message, stored)
  }
}

/** The last response of the conversation that the server stored (its id is in the message's `providerMetadata`). */
const chainPoint = (messages: Messages.Messages): { readonly index: number; readonly responseId: string } | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== "assistant") continue
    const responseId = metadataString(message.providerMetadata, "responseId")
    return responseId === undefined ? undefined : { index: i, responseId }
  }
  return undefined
}

/** What goes into `instructions`, `input` and `previous_response_id`. */
export interface Input {
  readonly instructions: string | undefined
  readonly input: Array<ResponseInputItem>
  readonly previousResponseId: string | undefined
}

/**
 * The conversation as input. Leading system messages become `instructions`
 * (they are not carried over by `previous_response_id`, so they are always
 * sent); later ones are `system` items. When chaining and the last response
 * carries its id, only what follows it is sent: the answers to its calls and
 * the later messages.
 */
export const toInput = (
  messages: Messages.Messages,
  chain: boolean,
  stored: boolean
): Result.Result<Input, ChatError.InvalidRequest> => {
  let leading = 0
  while (leading < messages.length && messages[leading]!.role === "system") leading++
  const system = traverse(messages.slice(0, leading), systemText)
  if (Result.isFailure(system)) return Result.fail(system.failure)
  const instructions = system.success.length === 0 ? undefined : system.success.join("\n\n")
  const point = chain ? chainPoint(messages) : undefined
  const rest = point === undefined ? messages.slice(leading) : messages.slice(Math.max(point.index + 1, leading))
  return Result.map(traverse(rest, (message) => messageItems(message, stored)), (groups) => ({
    instructions,
    input: point === undefined ? groups.flat() : [...outputItems(messages[point.index]!), ...groups.flat()],
    previousResponseId: point?.responseId
  }))
}

/**
 * A tool declaration as a Responses function tool (`strict` is always sent:
 * the API's default is strict); `strict: false` when the layer turned it off.
 */
export const toTool = (declaration: LanguageModel.ToolDeclaration, strict = true): FunctionTool => ({
  type: "function",
  name: declaration.name,
  ...(declaration.description === "" ? {} : { description: declaration.description }),
  parameters: { ...declaration.parameters },
  strict: declaration.strict && strict
})

/**
 * Whether the model reasons, as far as its settings and id tell: reasoning
 * asked for, or an OpenAI reasoning family (o1, o3, o4…, gpt-5 but its chat
 * variants, codex). Other models answer 400 to `reasoning.encrypted_content`.
 */
export const isReasoningModel = (options: Options): boolean => {
  if (options.reasoningEffort !== undefined || options.reasoningSummary !== undefined) return true
  const id = options.model.toLowerCase().replace(/^.*\//, "")
  return /^(o\d|gpt-5|codex)/.test(id) && !/^gpt-5(\.\d+)?-chat/.test(id)
}

/** Whether the responses are stored on OpenAI's side (needed for chaining). */
export const isStored = (options: Options): boolean => options.previousResponseId === true || options.store === true

/** The request body (without `stream`): request options take precedence over the layer's options. */
export const toBody = (
  request: LanguageModel.Request,
  options: Options
): Result.Result<ResponseCreateParamsNonStreaming, ChatError.InvalidRequest> =>
  Result.map(toInput(request.messages, options.previousResponseId === true, isStored(options)), (input) => {
    const o = request.options
    const store = isStored(options)
    const toolChoice = o.toolChoice ?? options.toolChoice
    const parallelToolCalls = o.parallelToolCalls ?? options.parallelToolCalls
    const effort = o.reasoningEffort ?? options.reasoningEffort
    const hasTools = request.tools.length > 0
    const encrypted = !store &&
      (options.includeEncryptedReasoning ?? isReasoningModel({ ...options, ...optional("reasoningEffort", effort) }))
    const format = o.responseFormat
    const strict = options.strict !== false
    return {
      model: options.model,
      ...optional("instructions", input.instructions),
      input: input.input,
      store,
      ...optional("previous_response_id", input.previousResponseId),
      ...(encrypted ? { include: ["reasoning.encrypted_content"] } : {}),
      ...(hasTools ? { tools: request.tools.map((tool) => toTool(tool, strict)) } : {}),
      ...(toolChoice === undefined || !hasTools
        ? {}
        : { tool_choice: typeof toolChoice === "string" ? toolChoice : { type: "function", name: toolChoice.tool } }),
      ...(parallelToolCalls === undefined || !hasTools ? {} : { parallel_tool_calls: parallelToolCalls }),
      ...optional("temperature", o.temperature ?? options.temperature),
      ...optional("top_p", o.topP ?? options.topP),
      ...optional("max_output_tokens", o.maxTokens ?? options.maxTokens),
      ...(effort === undefined && options.reasoningSummary === undefined
        ? {}
        : { reasoning: { ...optional("effort", effort), ...optional("summary", options.reasoningSummary) } }),
      ...(format === undefined ? {} : {
        text: {
          format: {
            type: "json_schema",
            name: format.name,
            schema: { ...format.schema },
            strict: format.strict && strict,
            ...optional("description", format.description)
          }
        }
      }),
      ...optional("user", options.user),
      ...o.providerOptions
    }
  })

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/** The core usage of a Responses usage. */
export const fromUsage = (u: ResponseUsage | null | undefined): LanguageModel.Response["usage"] =>
  typeof u !== "object" || u === null ? LanguageModel.noUsage : usage({
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    reasoningTokens: (u.output_tokens_details as { readonly reasoning_tokens?: unknown } | null | undefined)?.reasoning_tokens,
    cachedInputTokens: (u.input_tokens_details as { readonly cached_tokens?: unknown } | null | undefined)?.cached_tokens
  })

const finishReason = (response: Response, hasToolCalls: boolean): Messages.FinishReason => {
  switch (response.status) {
    case "incomplete":
      return response.incomplete_details?.reason === "max_output_tokens"
        ? "length"
        : response.incomplete_details?.reason === "content_filter"
        ? "content-filter"
        : "other"
    case "failed":
      return "error"
    case "completed":
    case undefined:
      return hasToolCalls ? "tool-calls" : "stop"
    default:
      return "other"
  }
}

type MessageItem = Extract<ResponseOutputItem, { type: "message" }>
type WebSearchItem = Extract<ResponseOutputItem, { type: "web_search_call" }>

/** What a text part came from: its message item, `phase`, annotations (URL citations), and whether it is a refusal. */
export interface TextSource {
  readonly itemId: string
  readonly phase?: string
  readonly annotations?: ReadonlyArray<unknown>
  readonly refusal?: true
}

/**
 * What the output holds besides parts, kept in the message's
 * `providerMetadata.openai`: `texts` (one `TextSource` per text part, in
 * order) and `webSearchCalls` (the web-search items as the server sent them).
 */
export class OutputExtras {
  private readonly texts: Array<TextSource> = []
  private readonly searches: Array<WebSearchItem> = []
  private readonly byKey = new Map<string, number>()

  /** Records the source of the next text part; `key` (output and content index) lets a streamed part be completed later. */
  textPart(item: { readonly id: string }, content: { readonly type: string }, key?: string): void {
    if (key !== undefined) this.byKey.set(key, this.texts.length)
    this.texts.push({ itemId: item.id, ...(content.type === "refusal" ? { refusal: true as const } : {}) })
    this.complete(item as MessageItem, content, this.texts.length - 1)
  }

  /** Adds what only the finished item knows (`phase`, annotations) to the text part recorded under `key`. */
  completeStreamed(item: MessageItem, contentIndex: number, key: string): void {
    const index = this.byKey.get(key)
    const content = item.content?.[contentIndex]
    if (index !== undefined && content !== undefined) this.complete(item, content, index)
  }

  private complete(item: MessageItem, content: { readonly type: string }, index: number): void {
    const phase: unknown = Reflect.get(item, "phase")
    const annotations: unknown = Reflect.get(content, "annotations")
    this.texts[index] = {
      ...this.texts[index]!,
      itemId: item.id ?? this.texts[index]!.itemId,
      ...(typeof phase === "string" ? { phase } : {}),
      ...(Array.isArray(annotations) && annotations.length > 0 ? { annotations } : {})
    }
  }

  /** Records a web-search call. */
  webSearch(item: WebSearchItem): void {
    this.searches.push(item)
  }

  /** The entries to merge into `providerMetadata.openai` (`texts` only when they say more than one item id). */
  metadata(): { readonly [key: string]: unknown } {
    const telling = this.texts.length > 1 || this.texts.some((text) => Object.keys(text).length > 1)
    return {
      ...(telling ? { texts: this.texts } : {}),
      ...(this.searches.length === 0 ? {} : { webSearchCalls: this.searches })
    }
  }
}

const responseMetadata = (response: Response, extras?: OutputExtras): { readonly [key: string]: unknown } => ({
  [metadataKey]: { responseId: response.id, model: response.model, ...extras?.metadata() }
})

const reasoningText = (item: Extract<ResponseOutputItem, { type: "reasoning" }>): string => {
  const summary = (item.summary ?? []).map((s) => s.text)
  return summary.length > 0 ? summary.join("\n\n") : (item.content ?? []).map((c) => c.text).join("\n\n")
}

const reasoningMetadata = (itemId: string): { readonly [key: string]: unknown } => ({ [metadataKey]: { itemId } })

/** The error a failed response carries. */
export const failure = (response: Response, redact: Redactor): ChatError.ModelError =>
  fromApi(
    undefined,
    response.error === null || response.error === undefined
      ? { message: "The response failed without saying why." }
      : readErrorBody(response.error),
    undefined,
    { redact, now: 0 }
  )

/** A whole response as a core response. */
export const fromResponse = (
  response: Response,
  redact: Redactor
): Result.Result<LanguageModel.Response, ChatError.ModelError> => {
  if (response.status === "failed") return Result.fail(failure(response, redact))
  if (!Array.isArray(response.output)) return Result.fail(malformed("The response holds no output."))
  const parts: Array<Messages.Part> = []
  const extras = new OutputExtras()
  for (const item of response.output) {
    switch (item.type) {
      case "message":
        for (const content of item.content ?? []) {
          const text = content.type === "output_text" ? content.text : content.refusal
          if (text === "") continue
          parts.push(Messages.text(text))
          extras.textPart(item, content)
        }
        break
      case "web_search_call":
        extras.webSearch(item)
        break
      case "reasoning":
        parts.push({
          _tag: "Reasoning",
          text: reasoningText(item),
          ...(typeof item.encrypted_content === "string" ? { signature: item.encrypted_content } : {}),
          providerMetadata: reasoningMetadata(item.id)
        })
        break
      case "function_call":
        parts.push(Messages.toolCall({ id: callIdOf(item.call_id), name: item.name, arguments: argumentsText(item.arguments) }))
        break
    }
  }
  const hasToolCalls = parts.some((part) => part._tag === "ToolCall")
  return Result.succeed({
    parts,
    usage: fromUsage(response.usage),
    finishReason: finishReason(response, hasToolCalls),
    providerMetadata: responseMetadata(response, extras)
  })
}

interface CallState {
  readonly id: string
  hasArguments: boolean
}

interface ReasoningState {
  emitted: boolean
  summaryIndex: number
}

/**
 * Turns stream events into stream parts. Argument fragments name their item
 * (`item_id`, or `output_index`), mapped back to the call id given when the
 * item was added.
 */
export class StreamState {
  private readonly callsByItem = new Map<string, CallState>()
  private readonly callsByIndex = new Map<number, CallState>()
  /** Reasoning by `output_index`: some servers (GitHub Copilot) change `item_id` between events of one item. */
  private readonly reasoning = new Map<number, ReasoningState>()
  /** Text parts started, by `output_index:content_index`. */
  private readonly textParts = new Set<string>()
  private lastText: string | undefined
  private readonly extras = new OutputExtras()
  private hasToolCalls = false
  private finished = false

  constructor(private readonly redact: Redactor) {}

  /** The parts of one event, or the error it reports. */
  push(event: ResponseStreamEvent): Result.Result<Array<LanguageModel.StreamPart>, ChatError.ModelError> {
    const out: Array<LanguageModel.StreamPart> = []
    if (this.finished) return Result.succeed(out)
    switch (event.type) {
      case "response.output_item.added":
        this.itemAdded(event.item, event.output_index, out)
        break
      case "response.function_call_arguments.delta": {
        const call = this.callsByItem.get(event.item_id) ?? this.callsByIndex.get(event.output_index)
        if (call === undefined) {
          return Result.fail(malformed(`The stream sent arguments for an unknown call item '${event.item_id}'.`))
        }
        if (event.delta !== "") {
          call.hasArguments = true
          out.push({ _tag: "ToolCallDelta", id: call.id, argumentsDelta: event.delta })
        }
        break
      }
      case "response.output_text.delta":
      case "response.refusal.delta":
        this.textDelta(event.item_id, event.output_index, event.content_index, event.type, event.delta, out)
        break
      case "response.reasoning_summary_text.delta":
        this.reasoningDelta(event.item_id, event.output_index, event.summary_index, event.delta, out)
        break
      case "response.reasoning_text.delta":
        this.reasoningDelta(event.item_id, event.output_index, event.content_index, event.delta, out)
        break
      case "response.output_item.done":
        this.itemDone(event.item, event.output_index, out)
        break
      case "response.completed":
      case "response.incomplete":
        this.finished = true
        out.push({
          _tag: "Finish",
          usage: fromUsage(event.response.usage),
          finishReason: finishReason(event.response, this.hasToolCalls),
          providerMetadata: responseMetadata(event.response, this.extras)
        })
        break
      case "response.failed":
        return Result.fail(failure(event.response, this.redact))
      case "error": {
        const body: ApiErrorBody = readErrorBody(event)
        return Result.fail(fromApi(undefined, body, undefined, { redact: this.redact, now: 0 }))
      }
    }
    return Result.succeed(out)
  }

  private startCall(item: { readonly id?: string | undefined; readonly call_id: string; readonly name: string }, index: number, out: Array<LanguageModel.StreamPart>): CallState {
    const call: CallState = { id: callIdOf(item.call_id), hasArguments: false }
    if (item.id !== undefined) this.callsByItem.set(item.id, call)
    this.callsByIndex.set(index, call)
    this.hasToolCalls = true
    out.push({ _tag: "ToolCallStart", id: call.id, name: item.name })
    return call
  }

  private itemAdded(item: ResponseOutputItem, index: number, out: Array<LanguageModel.StreamPart>): void {
    if (item.type === "function_call") {
      const call = this.startCall(item, index, out)
      if (item.arguments !== "") {
        call.hasArguments = true
        out.push({ _tag: "ToolCallDelta", id: call.id, argumentsDelta: item.arguments })
      }
    } else if (item.type === "reasoning" && !this.reasoning.has(index)) {
      this.reasoning.set(index, { emitted: false, summaryIndex: 0 })
    }
  }

  /**
   * A text or refusal delta. Parts are keyed by output and content index (not
   * `item_id`, which some servers change between events): a new key starts a
   * new text part, so two message items are not glued together.
   */
  private textDelta(
    itemId: string,
    outputIndex: number,
    contentIndex: number,
    type: "response.output_text.delta" | "response.refusal.delta",
    delta: string,
    out: Array<LanguageModel.StreamPart>
  ): void {
    if (delta === "") return
    const key = `${outputIndex}:${contentIndex}`
    const isNew = !this.textParts.has(key)
    if (isNew) {
      this.textParts.add(key)
      this.extras.textPart({ id: itemId }, { type: type === "response.refusal.delta" ? "refusal" : "output_text" }, key)
    }
    out.push({ _tag: "TextDelta", text: delta, ...(isNew || key !== this.lastText ? { start: true } : {}) })
    this.lastText = key
  }

  private reasoningDelta(itemId: string, outputIndex: number, index: number, delta: string, out: Array<LanguageModel.StreamPart>): void {
    let state = this.reasoning.get(outputIndex)
    if (state === undefined) {
      state = { emitted: false, summaryIndex: index }
      this.reasoning.set(outputIndex, state)
    }
    const separator = state.emitted && index !== state.summaryIndex ? "\n\n" : ""
    state.summaryIndex = index
    out.push({
      _tag: "ReasoningDelta",
      text: separator + delta,
      ...(state.emitted ? {} : { start: true, providerMetadata: reasoningMetadata(itemId) })
    })
    state.emitted = true
  }

  private itemDone(item: ResponseOutputItem, index: number, out: Array<LanguageModel.StreamPart>): void {
    switch (item.type) {
      case "function_call": {
        const known = (item.id === undefined ? undefined : this.callsByItem.get(item.id)) ?? this.callsByIndex.get(index)
        const call = known ?? this.startCall(item, index, out)
        if (!call.hasArguments && item.arguments !== "") {
          call.hasArguments = true
          out.push({ _tag: "ToolCallDelta", id: call.id, argumentsDelta: item.arguments })
        }
        break
      }
      case "reasoning": {
        const state = this.reasoning.get(index)
        const emitted = state?.emitted === true
        out.push({
          _tag: "ReasoningDelta",
          text: emitted ? "" : reasoningText(item),
          ...(emitted ? {} : { start: true }),
          ...(typeof item.encrypted_content === "string" ? { signature: item.encrypted_content } : {}),
          providerMetadata: reasoningMetadata(item.id)
        })
        this.reasoning.set(index, { emitted: true, summaryIndex: state?.summaryIndex ?? 0 })
        break
      }
      case "message": {
        for (const [contentIndex, content] of (item.content ?? []).entries()) {
          const key = `${index}:${contentIndex}`
          if (this.textParts.has(key)) {
            this.extras.completeStreamed(item, contentIndex, key)
            continue
          }
          const text = content.type === "output_text" ? content.text : content.refusal
          if (text === "") continue
          this.textParts.add(key)
          this.extras.textPart(item, content, key)
          out.push({ _tag: "TextDelta", text, start: true })
          this.lastText = key
        }
        break
      }
      case "web_search_call":
        this.extras.webSearch(item)
        break
    }
  }

  /** Nothing more, or the error of a stream that ended before its response completed. */
  end(): Result.Result<Array<LanguageModel.StreamPart>, ChatError.ModelError> {
    return this.finished
      ? Result.succeed([])
      : Result.fail(new ChatError.NetworkError({ message: "The model's stream ended before the response was complete." }))
  }
}
