/**
 * What an AI SDK model answered (specification V4), as chat-ts: a whole
 * generate result as a `LanguageModel.Response`, and the parts of a stream as
 * `LanguageModel.StreamPart`s through a decoder made per stream.
 *
 * Calls the provider ran itself (`providerExecuted`), sources, approvals the
 * provider asked for and custom parts are not chat-ts parts and are left out;
 * a finish reason the AI SDK calls `interrupted` is an `error` for chat-ts, so
 * the calls of a response cut short never run.
 *
 * @internal
 */
import type {
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4FileDataData,
  SharedV4FileDataUrl
} from "@ai-sdk/provider"
import type * as ChatError from "@chat-ts/core/ChatError"
import { MalformedResponse, NetworkError } from "@chat-ts/core/ChatError"
import type * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as Messages from "@chat-ts/core/Messages"
import type { Usage } from "@chat-ts/core/Usage"
import * as Result from "effect/Result"

/** The usage of a response: input and output totals, cached input and reasoning tokens when reported. */
export const usageOf = (usage: LanguageModelV4Usage | undefined): Usage => {
  if (usage === undefined) return { inputTokens: 0, outputTokens: 0 }
  const cached = usage.inputTokens.cacheRead
  const reasoning = usage.outputTokens.reasoning
  return {
    inputTokens: usage.inputTokens.total ?? 0,
    outputTokens: usage.outputTokens.total ?? 0,
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
    ...(cached === undefined ? {} : { cachedInputTokens: cached })
  }
}

/** The finish reason as chat-ts names it (`interrupted`: `error`, so no call of the response runs). */
export const finishReasonOf = (reason: LanguageModelV4FinishReason | undefined): Messages.FinishReason => {
  switch (reason?.unified) {
    case "stop":
    case "length":
    case "content-filter":
    case "tool-calls":
    case "error":
      return reason.unified
    case "interrupted":
      return "error"
    default:
      return "other"
  }
}

const base64 = (data: Uint8Array | string): string => typeof data === "string" ? data : Buffer.from(data).toString("base64")

/** A file the model made, as a chat-ts file part. */
export const filePartOf = (mediaType: string, data: SharedV4FileDataData | SharedV4FileDataUrl): Messages.FilePart => ({
  _tag: "File",
  mediaType,
  data: data.type === "data" ? { _tag: "Base64", base64: base64(data.data) } : { _tag: "Url", url: data.url.toString() }
})

/**
 * Where a response keeps its calls' own provider metadata (Gemini's thought signatures on function
 * calls, say): chat-ts's call parts have no such field, so the message's `providerMetadata` holds it
 * under this key, by call id, and it goes back as each call's `providerOptions`.
 */
export const metadataKey = "@chat-ts/ai-sdk-provider"

type Metadata = { readonly [key: string]: unknown }

/** The response's metadata with the calls' own under `metadataKey`, when any call has some. */
export const withCallMetadata = (
  metadata: Metadata | undefined,
  calls: ReadonlyMap<string, Metadata>
): Metadata | undefined =>
  calls.size === 0 ? metadata : { ...metadata, [metadataKey]: { toolCalls: Object.fromEntries(calls) } }

const malformed = (message: string) => new MalformedResponse({ message })

const callOf = (toolCallId: string, toolName: string, input: string): Result.Result<Messages.ToolCallPart, ChatError.ModelError> =>
  toolCallId === "" || toolName === ""
    ? Result.fail(malformed(`The model sent a tool call without ${toolCallId === "" ? "an id" : "a name"}.`))
    : Result.succeed(Messages.toolCall({ id: toolCallId, name: toolName, arguments: input }))

const partOf = (content: LanguageModelV4Content): Result.Result<ReadonlyArray<Messages.Part>, ChatError.ModelError> => {
  switch (content.type) {
    case "text":
      return Result.succeed(content.text === "" ? [] : [Messages.text(content.text)])
    case "reasoning":
      return Result.succeed([{
        _tag: "Reasoning",
        text: content.text,
        ...(content.providerMetadata === undefined ? {} : { providerMetadata: content.providerMetadata })
      }])
    case "file":
      return Result.succeed([filePartOf(content.mediaType, content.data)])
    case "tool-call":
      return content.providerExecuted === true ? Result.succeed([]) : Result.map(callOf(content.toolCallId, content.toolName, content.input), (call) => [call])
    default:
      return Result.succeed([])
  }
}

/** A whole generate result as a response. */
export const fromGenerate = (
  result: LanguageModelV4GenerateResult,
  structured: boolean
): Result.Result<LanguageModel.Response, ChatError.ModelError> => {
  if (typeof result !== "object" || result === null || !Array.isArray(result.content)) {
    return Result.fail(malformed("The model's answer holds no content."))
  }
  const parts: Array<Messages.Part> = []
  const callMetadata = new Map<string, Metadata>()
  for (const content of result.content) {
    const made = partOf(content)
    if (Result.isFailure(made)) return Result.fail(made.failure)
    parts.push(...made.success)
    if (content.type === "tool-call" && content.providerExecuted !== true && content.providerMetadata !== undefined) {
      callMetadata.set(content.toolCallId, content.providerMetadata)
    }
  }
  const providerMetadata = withCallMetadata(result.providerMetadata, callMetadata)
  // A provider that answers structured output outside the text (a forced tool): that answer is the text.
  if (structured && result.structuredOutputText !== undefined && !parts.some((part) => part._tag === "Text")) {
    parts.push(Messages.text(result.structuredOutputText))
  }
  return Result.succeed({
    parts,
    usage: usageOf(result.usage),
    finishReason: finishReasonOf(result.finishReason),
    ...(providerMetadata === undefined ? {} : { providerMetadata })
  })
}

type Decoded = Result.Result<ReadonlyArray<LanguageModel.StreamPart>, ChatError.ModelError>

const none: Decoded = Result.succeed([])

/** Maps the parts of one stream, in order; made once per stream. */
export class StreamState {
  private lastText: string | undefined
  private lastReasoning: string | undefined
  /** Calls whose input is streaming: the fragments so far (the id is the call's id). */
  private readonly inputs = new Map<string, Array<string>>()
  /** Calls the provider runs itself: neither their input nor their result is ours. */
  private readonly ignored = new Set<string>()
  private finished = false
  /** The calls' own provider metadata, by id, for the finish. */
  private readonly callMetadata = new Map<string, Metadata>()

  constructor(private readonly toError: (error: unknown) => ChatError.ModelError) {}

  /** The chat-ts parts of one AI SDK stream part. */
  push(part: LanguageModelV4StreamPart): Decoded {
    if (this.finished) return none
    switch (part.type) {
      case "text-delta": {
        if (part.delta === "") return none
        const start = this.lastText !== undefined && this.lastText !== part.id
        this.lastText = part.id
        this.lastReasoning = undefined
        return Result.succeed([{ _tag: "TextDelta", text: part.delta, ...(start ? { start: true } : {}) }])
      }
      case "reasoning-start":
      case "reasoning-delta":
      case "reasoning-end": {
        const text = part.type === "reasoning-delta" ? part.delta : ""
        const start = part.type === "reasoning-start" || (this.lastReasoning !== part.id)
        if (text === "" && part.providerMetadata === undefined && part.type !== "reasoning-start") return none
        this.lastReasoning = part.id
        this.lastText = undefined
        return Result.succeed([{
          _tag: "ReasoningDelta",
          text,
          ...(start ? { start: true } : {}),
          ...(part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata })
        }])
      }
      case "tool-input-start": {
        if (part.providerExecuted === true) {
          this.ignored.add(part.id)
          return none
        }
        if (part.id === "" || part.toolName === "") return Result.fail(malformed("The model streamed a tool call without an id or a name."))
        this.inputs.set(part.id, [])
        this.lastText = this.lastReasoning = undefined
        return Result.succeed([{ _tag: "ToolCallStart", id: part.id, name: part.toolName }])
      }
      case "tool-input-delta": {
        const fragments = this.inputs.get(part.id)
        if (fragments === undefined || part.delta === "") return none
        fragments.push(part.delta)
        return Result.succeed([{ _tag: "ToolCallDelta", id: part.id, argumentsDelta: part.delta }])
      }
      case "tool-call": {
        if (part.providerExecuted === true || this.ignored.has(part.toolCallId)) return none
        if (part.providerMetadata !== undefined) this.callMetadata.set(part.toolCallId, part.providerMetadata)
        const fragments = this.inputs.get(part.toolCallId)
        if (fragments === undefined) {
          // A call that was not streamed: its start and its whole input at once.
          const made = callOf(part.toolCallId, part.toolName, part.input)
          if (Result.isFailure(made)) return Result.fail(made.failure)
          this.inputs.set(part.toolCallId, [part.input])
          this.lastText = this.lastReasoning = undefined
          return Result.succeed([
            { _tag: "ToolCallStart", id: part.toolCallId, name: part.toolName },
            ...(part.input === "" ? [] : [{ _tag: "ToolCallDelta" as const, id: part.toolCallId, argumentsDelta: part.input }])
          ])
        }
        const sent = fragments.join("")
        if (sent === part.input) return none
        // The final input completes what streamed (a provider that sends `{}` for a call without arguments).
        if (part.input.startsWith(sent)) {
          const rest = part.input.slice(sent.length)
          fragments.push(rest)
          return Result.succeed([{ _tag: "ToolCallDelta", id: part.toolCallId, argumentsDelta: rest }])
        }
        return Result.fail(malformed(`The model's final arguments of call ${part.toolCallId} disagree with the ones it streamed.`))
      }
      case "file":
        this.lastText = this.lastReasoning = undefined
        return Result.succeed([{ _tag: "Part", part: filePartOf(part.mediaType, part.data) }])
      case "error":
        return Result.fail(this.toError(part.error))
      case "finish": {
        this.finished = true
        // `interrupted`, or no reason from the vendor at all: the provider closed a stream that never said it was done.
        const reason = part.finishReason
        if (reason?.unified === "interrupted" || (reason?.raw === undefined && reason?.unified === "other")) {
          return Result.fail(new NetworkError({ message: "The model's stream ended before the response was complete." }))
        }
        const providerMetadata = withCallMetadata(part.providerMetadata, this.callMetadata)
        return Result.succeed([{
          _tag: "Finish",
          usage: usageOf(part.usage),
          finishReason: finishReasonOf(part.finishReason),
          ...(providerMetadata === undefined ? {} : { providerMetadata })
        }])
      }
      default:
        return none
    }
  }

  /** What the end of the stream means: nothing more after a finish, a `NetworkError` before one. */
  end(): Decoded {
    return this.finished
      ? none
      : Result.fail(new NetworkError({ message: "The model's stream ended before the response was complete." }))
  }
}
