/**
 * A chat-ts `LanguageModel.Request` as the call options of an AI SDK model
 * (specification V4): the conversation as the AI SDK prompt, the tools, the
 * tool choice, the response format and the options.
 *
 * Each response's calls are `tool-call` parts of its assistant message and
 * their answers `tool-result` parts of one `tool` message right after it, as
 * `Messages.projectToolCall` shows them (edited arguments, a rejection's
 * reason, a result's files). Reasoning goes back with its provider metadata
 * as the part's `providerOptions`, unchanged (signed thinking, encrypted
 * reasoning), as the AI SDK itself sends it.
 *
 * @internal
 */
import type {
  JSONValue,
  LanguageModelV4CallOptions,
  LanguageModelV4FilePart,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4TextPart,
  LanguageModelV4ToolChoice,
  LanguageModelV4ToolResultOutput,
  SharedV4FileData,
  SharedV4ProviderOptions
} from "@ai-sdk/provider"
import type * as LanguageModel from "@chat-ts/core/LanguageModel"
import * as Messages from "@chat-ts/core/Messages"
import * as Result from "effect/Result"
import { metadataKey } from "./response.js"

type Assistant = Extract<LanguageModelV4Message, { role: "assistant" }>["content"][number]
type ToolResultPart = Extract<Extract<LanguageModelV4Message, { role: "tool" }>["content"][number], { type: "tool-result" }>
type ContentItem = Extract<LanguageModelV4ToolResultOutput, { type: "content" }>["value"][number]

/** A file's bytes or address as the AI SDK takes them. */
export const fileData = (data: Messages.FilePart["data"]): SharedV4FileData =>
  data._tag === "Base64" ? { type: "data", data: data.base64 } : { type: "url", url: new URL(data.url) }

const filePart = (file: Messages.FilePart): LanguageModelV4FilePart => ({
  type: "file",
  mediaType: file.mediaType,
  data: fileData(file.data),
  ...(file.filename === undefined ? {} : { filename: file.filename })
})

/** A provider metadata record as the `providerOptions` of a prompt part (the same shape: provider → JSON). */
const asProviderOptions = (metadata: { readonly [key: string]: unknown } | undefined): SharedV4ProviderOptions | undefined =>
  metadata === undefined ? undefined : (metadata as SharedV4ProviderOptions)

/** The arguments of a call as the AI SDK holds them: their JSON value, or the text itself when it is not JSON. */
const inputOf = (text: string): unknown => {
  const parsed = Messages.parseJson(text)
  return Result.isSuccess(parsed) ? parsed.success : text
}

const outputOf = (projected: Messages.ProjectedResult, filesAs: ToolResultFiles): LanguageModelV4ToolResultOutput => {
  const files = Messages.resultFiles(projected)
  if (files.length > 0 && filesAs === "placeholders") {
    const text = Messages.resultTextOnly(projected)
    return projected.isError ? { type: "error-text", value: text } : { type: "text", value: text }
  }
  if (files.length > 0) {
    const value: Array<ContentItem> = [
      { type: "text", text: projected.text },
      ...files.map((file): ContentItem => ({
        type: "file",
        mediaType: file.mediaType,
        data: fileData(file.data),
        ...(file.filename === undefined ? {} : { filename: file.filename })
      }))
    ]
    return { type: "content", value }
  }
  if (projected.isError) return { type: "error-text", value: projected.text }
  return typeof projected.value === "string"
    ? { type: "text", value: projected.value }
    : { type: "json", value: (projected.value ?? null) as JSONValue }
}

/** The calls' own provider metadata a response kept (see `Response.metadataKey`), by call id. */
const callMetadataOf = (metadata: { readonly [key: string]: unknown } | undefined): { readonly [id: string]: SharedV4ProviderOptions } => {
  const kept: unknown = metadata?.[metadataKey]
  if (typeof kept !== "object" || kept === null) return {}
  const calls: unknown = Reflect.get(kept, "toolCalls")
  return typeof calls === "object" && calls !== null && !Array.isArray(calls) ? (calls as { readonly [id: string]: SharedV4ProviderOptions }) : {}
}

/**
 * How a tool result's files reach the model: as files of the AI SDK's `content` output (the
 * providers that take them: Bedrock, Anthropic, Google, OpenAI Responses), or as one short
 * `Messages.filePlaceholder` each, for a provider that would turn a `content` output into JSON
 * text and show the model the file's base64 (Mistral, Groq, OpenAI-compatible Chat Completions).
 */
export type ToolResultFiles = "files" | "placeholders"

/** The conversation as the AI SDK prompt. */
export const toPrompt = (messages: Messages.Messages, filesAs: ToolResultFiles = "files"): LanguageModelV4Prompt => {
  const prompt: Array<LanguageModelV4Message> = []
  for (const message of messages) {
    switch (message.role) {
      case "system": {
        const text = message.parts.flatMap((part) => part._tag === "Text" ? [part.text] : []).join("\n")
        if (text !== "") prompt.push({ role: "system", content: text })
        break
      }
      case "user": {
        const content = message.parts.flatMap((part): Array<LanguageModelV4TextPart | LanguageModelV4FilePart> =>
          part._tag === "Text" ? [{ type: "text", text: part.text }] : part._tag === "File" ? [filePart(part)] : []
        )
        if (content.length > 0) prompt.push({ role: "user", content })
        break
      }
      case "assistant": {
        const callOptions = callMetadataOf(message.providerMetadata)
        const content: Array<Assistant> = []
        const results: Array<ToolResultPart> = []
        for (const part of message.parts) {
          switch (part._tag) {
            case "Text":
              content.push({ type: "text", text: part.text })
              break
            case "File":
              content.push(filePart(part))
              break
            case "Reasoning": {
              const providerOptions = asProviderOptions(part.providerMetadata)
              content.push({ type: "reasoning", text: part.text, ...(providerOptions === undefined ? {} : { providerOptions }) })
              break
            }
            case "ToolCall": {
              const projected = Messages.projectToolCall(part)
              const providerOptions = callOptions[projected.id]
              content.push({
                type: "tool-call",
                toolCallId: projected.id,
                toolName: projected.name,
                input: inputOf(projected.arguments),
                ...(providerOptions === undefined ? {} : { providerOptions })
              })
              if (projected.result !== undefined) {
                results.push({ type: "tool-result", toolCallId: projected.id, toolName: projected.name, output: outputOf(projected.result, filesAs) })
              }
              break
            }
          }
        }
        if (content.length > 0) prompt.push({ role: "assistant", content })
        if (results.length > 0) prompt.push({ role: "tool", content: results })
        break
      }
    }
  }
  return prompt
}

const toolChoice = (choice: LanguageModel.ToolChoice): LanguageModelV4ToolChoice =>
  typeof choice === "string" ? { type: choice } : { type: "tool", toolName: choice.tool }

const tool = (declaration: LanguageModel.ToolDeclaration): LanguageModelV4FunctionTool => ({
  type: "function",
  name: declaration.name,
  description: declaration.description,
  inputSchema: declaration.parameters as LanguageModelV4FunctionTool["inputSchema"],
  ...(declaration.strict ? { strict: true } : {})
})

/** What the layer adds to every call: `providerOptions` (per provider, merged under the request's own) and headers. */
export interface Defaults {
  readonly providerOptions?: SharedV4ProviderOptions | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly toolResultFiles?: ToolResultFiles | undefined
}

const mergeProviderOptions = (
  base: SharedV4ProviderOptions | undefined,
  own: { readonly [key: string]: unknown } | undefined
): SharedV4ProviderOptions | undefined => {
  if (own === undefined) return base
  if (base === undefined) return own as SharedV4ProviderOptions
  const out: Record<string, Record<string, JSONValue | undefined>> = { ...base }
  for (const [provider, value] of Object.entries(own)) {
    const before = out[provider]
    out[provider] = typeof value === "object" && value !== null && before !== undefined
      ? { ...before, ...(value as Record<string, JSONValue | undefined>) }
      : (value as Record<string, JSONValue | undefined>)
  }
  return out
}

/** The call options of a request, without the abort signal (each attempt gets its own). */
export const toCallOptions = (request: LanguageModel.Request, defaults: Defaults): LanguageModelV4CallOptions => {
  const o = request.options
  const format = o.responseFormat
  const providerOptions = mergeProviderOptions(defaults.providerOptions, o.providerOptions)
  return {
    prompt: toPrompt(request.messages, defaults.toolResultFiles),
    ...(request.tools.length === 0 ? {} : { tools: request.tools.map(tool) }),
    ...(o.toolChoice === undefined ? {} : { toolChoice: toolChoice(o.toolChoice) }),
    ...(format === undefined
      ? {}
      : {
        responseFormat: {
          type: "json",
          schema: format.schema as NonNullable<LanguageModelV4FunctionTool["inputSchema"]>,
          name: format.name,
          ...(format.description === undefined ? {} : { description: format.description })
        }
      }),
    ...(o.temperature === undefined ? {} : { temperature: o.temperature }),
    ...(o.maxTokens === undefined ? {} : { maxOutputTokens: o.maxTokens }),
    ...(o.topP === undefined ? {} : { topP: o.topP }),
    ...(o.stop === undefined ? {} : { stopSequences: [...o.stop] }),
    ...(o.seed === undefined ? {} : { seed: o.seed }),
    ...(o.reasoningEffort === undefined ? {} : { reasoning: o.reasoningEffort }),
    ...(providerOptions === undefined ? {} : { providerOptions }),
    ...(defaults.headers === undefined ? {} : { headers: { ...defaults.headers } })
  }
}
