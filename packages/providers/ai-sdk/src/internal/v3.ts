/**
 * An AI SDK 6 model (specification V3) spoken to as a V4 one: V4 call
 * options become V3 ones (file data as its bytes or URL, tool-result files
 * as V3's `image-*` / `file-*` items, no `reasoning` option), and V3 results
 * and stream parts become V4 ones (a file's data tagged). Everything else has
 * the same shape in both specifications.
 *
 * @internal
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3StreamPart,
  LanguageModelV3ToolResultOutput,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Message,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4ToolResultOutput,
  SharedV4FileData
} from "@ai-sdk/provider"

/** What the bridge calls: the two methods of a V4 model. */
export interface Calls {
  readonly doGenerate: (options: LanguageModelV4CallOptions) => PromiseLike<LanguageModelV4GenerateResult>
  readonly doStream: (options: LanguageModelV4CallOptions) => PromiseLike<LanguageModelV4StreamResult>
}

const dataOf = (data: SharedV4FileData): Uint8Array | string | URL => {
  switch (data.type) {
    case "data":
      return data.data
    case "url":
      return data.url
    case "text":
      return Buffer.from(data.text, "utf8").toString("base64")
    case "reference":
      throw new TypeError("A file given by provider reference cannot be sent to an AI SDK 6 model.")
  }
}

type V3Item = Extract<LanguageModelV3ToolResultOutput, { type: "content" }>["value"][number]
type V4Item = Extract<LanguageModelV4ToolResultOutput, { type: "content" }>["value"][number]

const itemOf = (item: V4Item): V3Item => {
  if (item.type !== "file") return item
  const image = item.mediaType.startsWith("image/")
  if (item.data.type === "url") return { type: image ? "image-url" : "file-url", url: item.data.url.toString() }
  const data = dataOf(item.data)
  const base64 = typeof data === "string" ? data : data instanceof URL ? data.toString() : Buffer.from(data).toString("base64")
  return image
    ? { type: "image-data", data: base64, mediaType: item.mediaType }
    : { type: "file-data", data: base64, mediaType: item.mediaType, ...(item.filename === undefined ? {} : { filename: item.filename }) }
}

const outputOf = (output: LanguageModelV4ToolResultOutput): LanguageModelV3ToolResultOutput =>
  output.type === "content" ? { type: "content", value: output.value.map(itemOf) } : output

const fileOf = (part: { readonly data: SharedV4FileData; readonly mediaType: string; readonly filename?: string }): LanguageModelV3FilePart => ({
  type: "file",
  mediaType: part.mediaType,
  data: dataOf(part.data),
  ...(part.filename === undefined ? {} : { filename: part.filename })
})

const messageOf = (message: LanguageModelV4Message): LanguageModelV3Message => {
  switch (message.role) {
    case "system":
      return message
    case "user":
      return {
        ...message,
        content: message.content.map((part): Extract<LanguageModelV3Message, { role: "user" }>["content"][number] =>
          part.type === "file" ? fileOf(part) : part
        )
      }
    case "assistant":
      return {
        ...message,
        content: message.content.flatMap((part): Array<Extract<LanguageModelV3Message, { role: "assistant" }>["content"][number]> => {
          switch (part.type) {
            case "file":
              return [fileOf(part)]
            case "tool-result":
              return [{ ...part, output: outputOf(part.output) }]
            case "custom":
            case "reasoning-file":
              return []
            default:
              return [part]
          }
        })
      }
    case "tool":
      return {
        ...message,
        content: message.content.map((part) => part.type === "tool-result" ? { ...part, output: outputOf(part.output) } : part)
      }
  }
}

/** V4 call options as V3 ones. */
export const callOptions = (options: LanguageModelV4CallOptions): LanguageModelV3CallOptions => {
  const { reasoning: _reasoning, prompt, ...rest } = options
  return { ...(rest as Omit<LanguageModelV3CallOptions, "prompt">), prompt: prompt.map(messageOf) }
}

const fileData = (data: string | Uint8Array) => ({ type: "data" as const, data })

const contentOf = (content: LanguageModelV3Content): LanguageModelV4Content =>
  content.type === "file" ? { ...content, data: fileData(content.data) } : content

const streamPartOf = (part: LanguageModelV3StreamPart): LanguageModelV4StreamPart =>
  part.type === "file" ? { ...part, data: fileData(part.data) } : part

/** The calls of a V3 model, spoken to as a V4 one. */
export const fromV3 = (model: LanguageModelV3): Calls => ({
  doGenerate: async (options) => {
    const result = await model.doGenerate(callOptions(options))
    return { ...result, content: Array.isArray(result.content) ? result.content.map(contentOf) : result.content }
  },
  doStream: async (options) => {
    const result = await model.doStream(callOptions(options))
    return {
      ...result,
      stream: result.stream.pipeThrough(
        new TransformStream<LanguageModelV3StreamPart, LanguageModelV4StreamPart>({
          transform: (part, controller) => controller.enqueue(streamPartOf(part))
        })
      )
    }
  }
})
