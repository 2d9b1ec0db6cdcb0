/**
 * The provider contract: what a chat model must offer to run a turn.
 *
 * A provider implements `generate` (one whole response) and `stream` (the
 * same response as parts arriving over time). Both take a `Request` holding
 * the conversation (projected to the wire by the provider through
 * `Messages.projectToolCall`), the tool declarations and the options, and both
 * fail only with the typed `ChatError.ModelError`s.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ChatError from "../data/ChatError.js"
import type * as Messages from "../turn/Messages.js"
import type { FinishReason, Part, ReasoningPart } from "../turn/Messages.js"
import type { Usage } from "../data/Usage.js"
import * as UsageModule from "../data/Usage.js"

/**
 * A JSON Schema object, as providers send it.
 *
 * @category models
 * @since 0.1.0
 */
export type JsonSchema = { readonly [key: string]: unknown }

/**
 * A tool as the model sees it: name, description and JSON Schema of its parameters.
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolDeclaration {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  /** Whether the schema fits strict mode (every property required, no extra properties). */
  readonly strict: boolean
}

/**
 * How the model may use tools.
 *
 * @category models
 * @since 0.1.0
 */
export type ToolChoice = "auto" | "none" | "required" | { readonly tool: string }

/**
 * Ask for a JSON answer matching a schema (structured output).
 *
 * @category models
 * @since 0.1.0
 */
export interface ResponseFormat {
  readonly type: "json"
  readonly name: string
  readonly schema: JsonSchema
  readonly description?: string
  readonly strict: boolean
}

/**
 * Options of one model call.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly temperature?: number
  readonly maxTokens?: number
  readonly topP?: number
  readonly toolChoice?: ToolChoice
  readonly parallelToolCalls?: boolean
  readonly responseFormat?: ResponseFormat
  readonly stop?: ReadonlyArray<string>
  readonly seed?: number
  readonly reasoningEffort?: "minimal" | "low" | "medium" | "high"
  /** Provider-specific fields merged last into the request body (e.g. `service_tier`, `metadata`). */
  readonly providerOptions?: { readonly [key: string]: unknown }
}

/**
 * One model call: the conversation, the tools and the options.
 *
 * @category models
 * @since 0.1.0
 */
export interface Request {
  /** The conversation, system messages included. */
  readonly messages: Messages.Messages
  readonly tools: ReadonlyArray<ToolDeclaration>
  readonly options: Options
}

/**
 * One whole model response. Tool calls are built with `Messages.toolCall`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Response {
  readonly parts: ReadonlyArray<Part>
  readonly usage: Usage
  readonly finishReason: FinishReason
  readonly providerMetadata?: { readonly [key: string]: unknown }
}

/**
 * A piece of a streamed response.
 *
 * @category models
 * @since 0.1.0
 */
export type StreamPart =
  | {
    readonly _tag: "TextDelta"
    readonly text: string
    /** Starts a new text part even if the previous part is text too (a second message item). */
    readonly start?: boolean
  }
  | {
    readonly _tag: "ReasoningDelta"
    readonly text: string
    /** Starts a new reasoning part even if the previous part is reasoning too. */
    readonly start?: boolean
    readonly signature?: string
    readonly providerMetadata?: { readonly [key: string]: unknown }
  }
  | { readonly _tag: "ToolCallStart"; readonly id: string; readonly name: string }
  | { readonly _tag: "ToolCallDelta"; readonly id: string; readonly argumentsDelta: string }
  | { readonly _tag: "Part"; readonly part: Part }
  | {
    readonly _tag: "Finish"
    readonly usage: Usage
    readonly finishReason: FinishReason
    readonly providerMetadata?: { readonly [key: string]: unknown }
  }

/**
 * The provider contract.
 *
 * @category models
 * @since 0.1.0
 */
export interface Service {
  readonly generate: (request: Request) => Effect.Effect<Response, ChatError.ModelError>
  readonly stream: (request: Request) => Stream.Stream<StreamPart, ChatError.ModelError>
}

/**
 * The chat model in use.
 *
 * @category services
 * @since 0.1.0
 */
export class LanguageModel extends Context.Service<LanguageModel, Service>()("@chat-ts/core/LanguageModel") {}

/**
 * Builds a model from `generate` and/or `stream`; the missing one is derived from the other.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  impl:
    | { readonly generate: Service["generate"]; readonly stream?: Service["stream"] }
    | { readonly generate?: Service["generate"]; readonly stream: Service["stream"] }
): Service => {
  const generate = impl.generate ?? ((request: Request) => collect(impl.stream!(request)))
  const stream = impl.stream ?? ((request: Request) => Stream.flatMap(Stream.fromEffect(generate(request)), toStreamParts))
  return { generate, stream }
}

/**
 * A layer providing the given model.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (service: Service): Layer.Layer<LanguageModel> => Layer.succeed(LanguageModel, service)

/**
 * Wraps the model in use: `f` receives the model and returns a new one (for
 * logging, a system prompt, caching, routing…). Provide the result below the
 * original model's layer.
 *
 * @category utils
 * @since 0.1.0
 */
export const middleware = <E = never, R = never>(
  f: (model: Service) => Service | Effect.Effect<Service, E, R>
): Layer.Layer<LanguageModel, E, R | LanguageModel> =>
  Layer.effect(
    LanguageModel,
    Effect.flatMap(LanguageModel, (model) => {
      const next = f(model)
      return Effect.isEffect(next) ? next : Effect.succeed(next)
    })
  )

/**
 * Maps every request before it reaches the model (for example to add a system prompt).
 *
 * @category utils
 * @since 0.1.0
 */
export const mapRequest = (f: (request: Request) => Request): Layer.Layer<LanguageModel, never, LanguageModel> =>
  middleware((model) => ({
    generate: (request) => model.generate(f(request)),
    stream: (request) => model.stream(f(request))
  }))

/**
 * The stream parts of a whole response (whole parts, then the finish).
 *
 * @category conversions
 * @since 0.1.0
 */
export const toStreamParts = (response: Response): Stream.Stream<StreamPart> =>
  Stream.fromIterable<StreamPart>([
    ...response.parts.map((part): StreamPart => ({ _tag: "Part", part })),
    {
      _tag: "Finish",
      usage: response.usage,
      finishReason: response.finishReason,
      ...(response.providerMetadata === undefined ? {} : { providerMetadata: response.providerMetadata })
    }
  ])

/** A tool call being streamed. */
interface PendingCall {
  readonly id: string
  readonly index: number
  name: string
  started: boolean
  readonly args: Array<string>
}

/**
 * Gathers streamed parts into a whole response: text deltas join into text
 * parts, tool call fragments (possibly interleaved) into tool calls, in the
 * order they started. A call that starts with the id of a call already
 * started is a new call (as `generate` would return it; the chat then makes
 * its id unique), and later fragments with that id belong to the newest one.
 *
 * @category utils
 * @since 0.1.0
 */
export class Accumulator {
  private readonly parts: Array<Part> = []
  private readonly calls: Array<PendingCall> = []
  /** The newest call of each id: where its fragments go. */
  private readonly latest = new Map<string, PendingCall>()
  private finished: Extract<StreamPart, { _tag: "Finish" }> | undefined

  private open(id: string, name: string, started: boolean): PendingCall {
    const call: PendingCall = { id, index: this.parts.length, name, started, args: [] }
    this.calls.push(call)
    this.latest.set(id, call)
    this.parts.push({ _tag: "ToolCall", id, name, arguments: "", status: { _tag: "Proposed" } })
    return call
  }

  /** Adds one part. */
  add(part: StreamPart): void {
    switch (part._tag) {
      case "TextDelta": {
        const last = this.parts[this.parts.length - 1]
        if (last !== undefined && last._tag === "Text" && part.start !== true) {
          this.parts[this.parts.length - 1] = { _tag: "Text", text: last.text + part.text }
        } else this.parts.push({ _tag: "Text", text: part.text })
        return
      }
      case "ReasoningDelta": {
        const last = this.parts[this.parts.length - 1]
        const base: ReasoningPart = last !== undefined && last._tag === "Reasoning" && part.start !== true
          ? last
          : { _tag: "Reasoning", text: "" }
        const next: ReasoningPart = {
          ...base,
          text: base.text + part.text,
          ...(part.signature === undefined ? {} : { signature: part.signature }),
          ...(part.providerMetadata === undefined
            ? {}
            : { providerMetadata: { ...base.providerMetadata, ...part.providerMetadata } })
        }
        if (base === last) this.parts[this.parts.length - 1] = next
        else this.parts.push(next)
        return
      }
      case "ToolCallStart": {
        const known = this.latest.get(part.id)
        if (known !== undefined && !known.started) {
          // Fragments came before their start: the start names that call.
          known.started = true
          if (known.name === "") known.name = part.name
          return
        }
        this.open(part.id, part.name, true)
        return
      }
      case "ToolCallDelta": {
        const call = this.latest.get(part.id) ?? this.open(part.id, "", false)
        call.args.push(part.argumentsDelta)
        return
      }
      case "Part":
        this.parts.push(part.part)
        return
      case "Finish":
        this.finished = part
        return
    }
  }

  /** Whether the `Finish` part arrived. */
  get isFinished(): boolean {
    return this.finished !== undefined
  }

  /** The whole response, or `undefined` when the stream has not finished. */
  response(): Response | undefined {
    const finished = this.finished
    if (finished === undefined) return undefined
    const parts = this.parts.slice()
    for (const call of this.calls) {
      parts[call.index] = {
        _tag: "ToolCall",
        id: call.id,
        name: call.name,
        arguments: call.args.join(""),
        status: { _tag: "Proposed" }
      }
    }
    return {
      parts,
      usage: finished.usage,
      finishReason: finished.finishReason,
      ...(finished.providerMetadata === undefined ? {} : { providerMetadata: finished.providerMetadata })
    }
  }
}

/**
 * Gathers a stream into a whole response; a stream that ends before its `Finish` part is a `NetworkError`.
 *
 * @category utils
 * @since 0.1.0
 */
export const collect = <E, R>(
  stream: Stream.Stream<StreamPart, E, R>
): Effect.Effect<Response, E | ChatError.NetworkError, R> =>
  Effect.suspend(() => {
    const acc = new Accumulator()
    return Stream.runForEach(stream, (part) => Effect.sync(() => acc.add(part))).pipe(Effect.flatMap(() => finish(acc)))
  })

/**
 * The response gathered by `acc` at the end of its stream; a stream that ended before its `Finish` part is a `NetworkError`.
 *
 * @category utils
 * @since 0.1.0
 */
export const finish = (acc: Accumulator): Effect.Effect<Response, ChatError.NetworkError> => {
  const response = acc.response()
  return response === undefined
    ? Effect.fail(new ChatError.NetworkError({ message: "The model's stream ended before the response was complete." }))
    : Effect.succeed(response)
}

/**
 * An empty usage, for providers that do not report any.
 *
 * @category utils
 * @since 0.1.0
 */
export const noUsage: Usage = UsageModule.empty
