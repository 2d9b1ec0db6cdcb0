/**
 * A scripted `LanguageModel` for tests: it answers with the responses of a
 * script (or a function of the request), records every request it received,
 * and streams its responses in small chunks so streaming is tested too.
 * Asking it for more responses than the script holds is a test failure that
 * names the request.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type * as ChatError from "../data/ChatError.js"
import * as LanguageModel from "../model/LanguageModel.js"
import * as Messages from "../turn/Messages.js"
import type { FinishReason, Part } from "../turn/Messages.js"
import type { Usage } from "../data/Usage.js"

/**
 * A tool call in a scripted response; `arguments` is a JSON value or raw JSON text.
 *
 * @category models
 * @since 0.1.0
 */
export interface ScriptedToolCall {
  readonly id?: string
  readonly name: string
  readonly arguments?: unknown
}

/**
 * One scripted response.
 *
 * @category models
 * @since 0.1.0
 */
export interface ScriptedResponse {
  readonly text?: string
  readonly reasoning?: string
  readonly toolCalls?: ReadonlyArray<ScriptedToolCall>
  readonly parts?: ReadonlyArray<Part>
  readonly usage?: Usage
  readonly finishReason?: FinishReason
  /** Fail with this error instead of answering. */
  readonly error?: ChatError.ModelError
  /** When streaming, break off after this many chunks (the stream ends without finishing). */
  readonly cutAfterChunks?: number
}

/**
 * A script: a list of responses, or a function of the request (and its index) giving one.
 *
 * @category models
 * @since 0.1.0
 */
export type Script =
  | ReadonlyArray<ScriptedResponse>
  | ((
    request: LanguageModel.Request,
    index: number
  ) => ScriptedResponse | Effect.Effect<ScriptedResponse, ChatError.ModelError>)

/**
 * A scripted model with the requests it received.
 *
 * @category models
 * @since 0.1.0
 */
export interface MockLanguageModel extends LanguageModel.Service {
  /** Every request received, in order. */
  readonly requests: ReadonlyArray<LanguageModel.Request>
  /** A layer providing this model as the `LanguageModel`. */
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  /** How many responses the script still holds (`Infinity` for a function). */
  readonly remaining: number
}

/**
 * A response answering with text.
 *
 * @category utils
 * @since 0.1.0
 */
export const text = (value: string, extra: Omit<ScriptedResponse, "text"> = {}): ScriptedResponse => ({
  text: value,
  ...extra
})

/**
 * A response asking for tool calls.
 *
 * @category utils
 * @since 0.1.0
 */
export const toolCalls = (
  calls: ReadonlyArray<ScriptedToolCall>,
  extra: Omit<ScriptedResponse, "toolCalls"> = {}
): ScriptedResponse => ({ toolCalls: calls, ...extra })

/**
 * A response failing with a model error.
 *
 * @category utils
 * @since 0.1.0
 */
export const fail = (error: ChatError.ModelError): ScriptedResponse => ({ error })

const defaultUsage: Usage = { inputTokens: 10, outputTokens: 5 }

const toResponse = (scripted: ScriptedResponse, index: number): LanguageModel.Response => {
  const parts: Array<Part> = []
  if (scripted.reasoning !== undefined) parts.push({ _tag: "Reasoning", text: scripted.reasoning })
  if (scripted.text !== undefined) parts.push({ _tag: "Text", text: scripted.text })
  if (scripted.parts !== undefined) parts.push(...scripted.parts)
  for (const [n, call] of (scripted.toolCalls ?? []).entries()) {
    parts.push(Messages.toolCall({
      id: call.id ?? `call_${index + 1}_${n + 1}`,
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {})
    }))
  }
  return {
    parts,
    usage: scripted.usage ?? defaultUsage,
    finishReason: scripted.finishReason ?? ((scripted.toolCalls?.length ?? 0) > 0 ? "tool-calls" : "stop")
  }
}

const chunk = (value: string, size: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = 0; i < value.length; i += size) out.push(value.slice(i, i + size))
  return out.length === 0 ? [""] : out
}

/**
 * The streamed form of a response: text and reasoning in chunks of 4 characters, arguments in fragments of 5.
 *
 * @category conversions
 * @since 0.1.0
 */
export const toStreamParts = (response: LanguageModel.Response): ReadonlyArray<LanguageModel.StreamPart> => {
  const out: Array<LanguageModel.StreamPart> = []
  for (const part of response.parts) {
    switch (part._tag) {
      case "Text":
        for (const piece of chunk(part.text, 4)) out.push({ _tag: "TextDelta", text: piece })
        break
      case "Reasoning":
        chunk(part.text, 4).forEach((piece, i) => out.push({ _tag: "ReasoningDelta", text: piece, start: i === 0 }))
        break
      case "ToolCall":
        out.push({ _tag: "ToolCallStart", id: part.id, name: part.name })
        for (const piece of chunk(part.arguments, 5)) out.push({ _tag: "ToolCallDelta", id: part.id, argumentsDelta: piece })
        break
      default:
        out.push({ _tag: "Part", part })
    }
  }
  out.push({ _tag: "Finish", usage: response.usage, finishReason: response.finishReason })
  return out
}

/**
 * Makes a scripted model.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (script: Script): MockLanguageModel => {
  const requests: Array<LanguageModel.Request> = []
  const next = (request: LanguageModel.Request): Effect.Effect<ScriptedResponse, ChatError.ModelError> =>
    Effect.suspend(() => {
      const index = requests.length
      requests.push(request)
      if (typeof script === "function") {
        const scripted = script(request, index)
        return Effect.isEffect(scripted) ? scripted : Effect.succeed(scripted)
      }
      const scripted = script[index]
      if (scripted === undefined) {
        return Effect.die(
          new Error(
            `MockLanguageModel: the script has ${script.length} response(s) but the model was called ${index + 1} times. ` +
              `Last message of that request: ${JSON.stringify(request.messages[request.messages.length - 1])}`
          )
        )
      }
      return scripted.error === undefined ? Effect.succeed(scripted) : Effect.fail(scripted.error)
    })
  const service: LanguageModel.Service = {
    generate: (request) => Effect.map(next(request), (scripted) => toResponse(scripted, requests.length - 1)),
    stream: (request) =>
      Stream.unwrap(Effect.map(next(request), (scripted) => {
        const parts = toStreamParts(toResponse(scripted, requests.length - 1))
        return Stream.fromIterable(scripted.cutAfterChunks === undefined ? parts : parts.slice(0, scripted.cutAfterChunks))
      }))
  }
  return {
    ...service,
    requests,
    layer: LanguageModel.layer(service),
    get remaining() {
      return typeof script === "function" ? Infinity : Math.max(0, script.length - requests.length)
    }
  }
}
