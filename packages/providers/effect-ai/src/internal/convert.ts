/**
 * Conversions between chat-ts data and `effect/ai` data: the conversation as
 * a `Prompt`, tool declarations as `Tool`s whose JSON Schema is ours, and
 * response parts back as chat-ts parts.
 *
 * @internal
 */
import type { LanguageModel } from "@chat-ts/core"
import * as Messages from "@chat-ts/core/Messages"
import * as Prompt from "effect/ai/Prompt"
import type * as AiResponse from "effect/ai/Response"
import * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import type * as JsonSchema from "effect/JsonSchema"
import * as Result from "effect/Result"

/** The provider metadata key under which the bridge keeps what `effect/ai` said about a response. */
export const metadataKey = "@chat-ts/effect-ai"

type Metadata = { readonly [key: string]: unknown }

/** What the bridge keeps in a message's provider metadata under `metadataKey`. */
export interface Kept {
  /** The provider's metadata of each tool call, by call id (sent back with the call). */
  readonly toolCalls?: { readonly [id: string]: Metadata }
  /** The provider's response id, model id and timestamp (`response-metadata`). */
  readonly response?: { readonly id?: string; readonly modelId?: string; readonly timestamp?: string }
}

const isEmpty = (metadata: Metadata | undefined): boolean => metadata === undefined || Object.keys(metadata).length === 0

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

/**
 * A chat-ts tool declaration as an `effect/ai` tool: a dynamic tool whose
 * JSON Schema is exactly the declared one (chat-ts checks the arguments
 * against the tool's own Schema when the call runs), so every `effect/ai`
 * provider sends the tool's real parameters, with chat-ts's strict flag.
 */
export const toTool = (declaration: LanguageModel.ToolDeclaration) =>
  Tool.dynamic(declaration.name, {
    description: declaration.description,
    parameters: declaration.parameters as JsonSchema.JsonSchema
  }).annotate(Tool.Strict, declaration.strict)

/** A tool the bridge sends. */
export type DeclaredTool = ReturnType<typeof toTool>

/** The tools the bridge sends, by name. */
export type Tools = Record<string, DeclaredTool>

/**
 * The declarations as an `effect/ai` toolkit. Its handler is never called:
 * the bridge asks with `disableToolCallResolution`, since chat-ts decides and
 * runs tool calls itself (approval, scheduling, edits).
 */
export const toToolkit = (
  declarations: ReadonlyArray<LanguageModel.ToolDeclaration>
): Toolkit.WithHandler<Tools> => ({
  tools: Object.fromEntries(declarations.map((declaration) => [declaration.name, toTool(declaration)])),
  handle: (name) => Effect.die(new Error(`@chat-ts/effect-ai: tool '${String(name)}' is run by chat-ts, not by effect/ai.`))
})

// ---------------------------------------------------------------------------
// The conversation as a Prompt
// ---------------------------------------------------------------------------

const keptOf = (message: Messages.Message): Kept => {
  const kept = message.providerMetadata?.[metadataKey]
  return typeof kept === "object" && kept !== null ? kept as Kept : {}
}

/** Provider options as `effect/ai` reads them: JSON values by provider. */
const options = (metadata: unknown): Prompt.ProviderOptions =>
  typeof metadata === "object" && metadata !== null && !Array.isArray(metadata) ? metadata as Prompt.ProviderOptions : {}

const filePart = (part: Messages.FilePart): Prompt.FilePart =>
  Prompt.makePart("file", {
    mediaType: part.mediaType,
    data: part.data._tag === "Url"
      ? new URL(part.data.url)
      : Result.getOrElse(Base64.decode(part.data.base64), () => part.data._tag === "Base64" ? part.data.base64 : ""),
    ...(part.filename === undefined ? {} : { fileName: part.filename })
  })

const userPart = (part: Messages.Part): Prompt.UserMessagePart | undefined => {
  switch (part._tag) {
    case "Text":
      return Prompt.makePart("text", { text: part.text })
    case "File":
      return filePart(part)
    default:
      return undefined
  }
}

/** The messages of one chat-ts assistant message: the assistant's parts, then the answers to its calls. */
const assistantMessages = (message: Messages.Message): ReadonlyArray<Prompt.Message> => {
  const kept = keptOf(message)
  const content: Array<Prompt.AssistantMessagePart> = []
  const results: Array<Prompt.ToolResultPart> = []
  for (const part of message.parts) {
    switch (part._tag) {
      case "Text":
        content.push(Prompt.makePart("text", { text: part.text }))
        break
      case "Reasoning":
        content.push(Prompt.makePart("reasoning", { text: part.text, options: options(part.providerMetadata) }))
        break
      case "File":
        content.push(filePart(part))
        break
      case "ToolCall": {
        const projected = Messages.projectToolCall(part)
        let params: unknown
        try {
          params = JSON.parse(projected.arguments)
        } catch {
          params = projected.arguments
        }
        content.push(Prompt.makePart("tool-call", {
          id: part.id,
          name: part.name,
          params,
          providerExecuted: false,
          options: options(kept.toolCalls?.[part.id])
        }))
        if (projected.result !== undefined) {
          const files = Messages.resultFiles(projected.result)
          results.push(Prompt.makePart("tool-result", {
            id: part.id,
            name: part.name,
            isFailure: projected.result.isError,
            result: projected.result.value,
            // A result's files go as files in `modelOutput` (the provider sends them, or placeholders where it takes text only).
            ...(files.length === 0
              ? {}
              : { modelOutput: [Prompt.makePart("text", { text: projected.result.text }), ...files.map(filePart)] }),
            providerExecuted: false
          }))
        }
        break
      }
    }
  }
  const assistant = Prompt.makeMessage("assistant", { content })
  return results.length === 0 ? [assistant] : [assistant, Prompt.makeMessage("tool", { content: results })]
}

/** The conversation as an `effect/ai` prompt. */
export const toPrompt = (messages: Messages.Messages): Prompt.Prompt =>
  Prompt.fromMessages(messages.flatMap((message): ReadonlyArray<Prompt.Message> => {
    switch (message.role) {
      case "system":
        return [Prompt.makeMessage("system", { content: Messages.textOf(message) })]
      case "user":
        return [Prompt.makeMessage("user", {
          content: message.parts.flatMap((part) => {
            const converted = userPart(part)
            return converted === undefined ? [] : [converted]
          })
        })]
      case "assistant":
        return assistantMessages(message)
    }
  }))

// ---------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------

/** `effect/ai`'s finish reason as chat-ts's. */
export const finishReason = (reason: AiResponse.FinishReason): Messages.FinishReason => {
  switch (reason) {
    case "stop":
    case "length":
    case "content-filter":
    case "tool-calls":
    case "error":
      return reason
    default:
      return "other"
  }
}

/** `effect/ai`'s usage as chat-ts's (an unknown count is 0; cached input tokens are the ones read from the cache). */
export const usage = (value: AiResponse.Usage): LanguageModel.Response["usage"] => ({
  inputTokens: value.inputTokens.total ?? 0,
  outputTokens: value.outputTokens.total ?? 0,
  ...(value.outputTokens.reasoning === undefined ? {} : { reasoningTokens: value.outputTokens.reasoning }),
  ...(value.inputTokens.cacheRead === undefined ? {} : { cachedInputTokens: value.inputTokens.cacheRead })
})

/** A file part of a response as a chat-ts file part. */
export const fromFile = (part: AiResponse.FilePart): Messages.FilePart =>
  Messages.file({ mediaType: part.mediaType, base64: Base64.encode(part.data) })

/** Gathers the provider metadata of a response: the finish part's own, plus what the bridge keeps. */
export class MetadataBuilder {
  private finish: Metadata | undefined
  private readonly toolCalls: Record<string, Metadata> = {}
  private response: Kept["response"] | undefined

  /** Keeps a tool call's metadata. */
  toolCall(id: string, metadata: Metadata): void {
    if (!isEmpty(metadata)) this.toolCalls[id] = metadata
  }

  /** Keeps the response's id, model and time. */
  responseMetadata(part: AiResponse.ResponseMetadataPart): void {
    this.response = {
      ...(part.id === undefined ? {} : { id: part.id }),
      ...(part.modelId === undefined ? {} : { modelId: part.modelId }),
      ...(part.timestamp === undefined ? {} : { timestamp: DateTime.formatIso(part.timestamp) })
    }
  }

  /** Keeps the finish part's metadata. */
  finished(metadata: Metadata): void {
    if (!isEmpty(metadata)) this.finish = metadata
  }

  /** The provider metadata of the response, or `undefined` when there is none. */
  build(): Metadata | undefined {
    const kept: Kept = {
      ...(Object.keys(this.toolCalls).length === 0 ? {} : { toolCalls: this.toolCalls }),
      ...(this.response === undefined ? {} : { response: this.response })
    }
    const out: Metadata = { ...this.finish, ...(Object.keys(kept).length === 0 ? {} : { [metadataKey]: kept }) }
    return isEmpty(out) ? undefined : out
  }
}
