/**
 * Tools: a name, a description, Effect Schemas for the parameters and the
 * results, and typed metadata that only the tool's strategy reads.
 *
 * The JSON Schema the model sees is derived from the parameters Schema. The
 * handler (given through `Toolkit.toLayer`) receives decoded parameters and
 * never sees the metadata.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as ChatError from "../data/ChatError.js"
import * as JsonSchema from "../internal/jsonSchema.js"
import type { FilePart, InputRequest, Policy as DecisionPolicy } from "../internal/schema.js"
import * as StrictSchema from "../internal/strictSchema.js"
import type * as LanguageModel from "../model/LanguageModel.js"

/**
 * Identifies tools.
 *
 * @category symbols
 * @since 0.1.0
 */
export const TypeId: unique symbol = Symbol.for("@chat-ts/core/Tool")

/**
 * Identifies tools.
 *
 * @category symbols
 * @since 0.1.0
 */
export type TypeId = typeof TypeId

/**
 * A tool: name, description, parameter and result schemas, metadata.
 *
 * @category models
 * @since 0.1.0
 */
export interface Tool<
  Name extends string,
  Params extends Schema.Constraint,
  Success extends Schema.Constraint,
  Failure extends Schema.Constraint,
  Metadata
> {
  readonly [TypeId]: TypeId
  readonly name: Name
  readonly description: string
  readonly parameters: Params
  readonly success: Success
  readonly failure: Failure
  /** Read by the tool's strategy only; never given to the handler. */
  readonly metadata: Metadata
  /** What the model sees of this tool. */
  readonly declaration: LanguageModel.ToolDeclaration
  /** `true`: strict mode or an `InvalidToolSchema` error; `false`: never strict; absent: strict when the parameters allow it. */
  readonly strict?: boolean | undefined
  /**
   * Whether running a call twice is harmless (the handler passes an idempotency key, e.g. the call id
   * and `attempt`, to what it calls). Only then is a call whose worker died mid-run run again.
   */
  readonly idempotent: boolean
  /** How many times an idempotent call may be started in all (default 3); never more than once otherwise. */
  readonly maxAttempts: number
  /** Takes the files (images…) out of an encoded result, for the model to see them as files (see `ResultFiles`). */
  readonly splitFiles?: ((encoded: unknown) => ResultFiles) | undefined
  /** Takes the files (images…) out of an encoded typed failure, as `splitFiles` does of a result. */
  readonly splitFailureFiles?: ((encoded: unknown) => ResultFiles) | undefined
  /** Who may decide its calls that wait for a person, unless the strategy gives a policy (see `DecisionPolicy`). */
  readonly decisionPolicy?: DecisionPolicy | undefined
  /**
   * The most characters of the text the model reads of one call's result (or failure): a longer one
   * is cut, with a marker (see `ToolResult`). Absent: its toolkit's cap, else `ToolResult.defaultMaxChars`.
   */
  readonly maxResultChars?: number | undefined
  /**
   * The most bytes of files (as stored: base64 data, a URL) one call's result (or failure) carries: the
   * files past it are not stored or sent, each replaced by a note (see `ToolResult`). Absent: its
   * toolkit's, else `ToolResult.defaultMaxFileBytes`.
   */
  readonly maxResultFileBytes?: number | undefined
}

/**
 * An encoded result split in two: the JSON the conversation stores and the
 * model reads as text, where each file is only mentioned (say `{ "type":
 * "image", "file": 0 }`), and the files themselves, which the providers that
 * take files in tool results send as files (images as images) and the others
 * replace by a short placeholder text.
 *
 * @category models
 * @since 0.3.0
 */
export interface ResultFiles {
  readonly result: unknown
  readonly files: ReadonlyArray<FilePart>
}

/**
 * Any tool.
 *
 * @category models
 * @since 0.1.0
 */
export interface Any extends Tool<string, Schema.Constraint, Schema.Constraint, Schema.Constraint, unknown> {}

/**
 * The parameters schema built from `parameters` (a Schema, or the fields of a Struct).
 *
 * @category models
 * @since 0.1.0
 */
export type ParametersSchema<P> = P extends Schema.Constraint ? P
  : P extends Schema.Struct.Fields ? Schema.Struct<P>
  : never

/**
 * The decoded parameters of a tool.
 *
 * @category models
 * @since 0.1.0
 */
export type Params<T extends Any> = T["parameters"]["Type"]

/**
 * The success value of a tool.
 *
 * @category models
 * @since 0.1.0
 */
export type Success<T extends Any> = T["success"]["Type"]

/**
 * The typed failure of a tool.
 *
 * @category models
 * @since 0.1.0
 */
export type Failure<T extends Any> = T["failure"]["Type"]

/**
 * The metadata of a tool.
 *
 * @category models
 * @since 0.1.0
 */
export type Metadata<T extends Any> = T["metadata"]

/**
 * What the model sees of a tool, and how the model's arguments come back.
 *
 * @category models
 * @since 0.1.0
 */
export interface Wire {
  readonly declaration: LanguageModel.ToolDeclaration
  /** Why the parameters are sent without strict mode although the tool did not turn it off (empty otherwise). */
  readonly notStrict: ReadonlyArray<string>
  /** Maps the model's parsed arguments back to the parameters' encoded form (`null` → absent where an optional property was sent nullable). */
  readonly fromWire: (json: unknown) => unknown
}

/**
 * The names providers accept for tools (and response formats): 1 to 64 letters, digits, `_` or `-`.
 *
 * @category utils
 * @since 0.1.0
 */
export const namePattern: RegExp = /^[a-zA-Z0-9_-]{1,64}$/

const identity = (json: unknown): unknown => json

/**
 * Whether a value is a cap on results' text: a whole number ≥ 0, or `Infinity` for none (see `ToolResult`).
 *
 * @category guards
 * @since 0.3.0
 */
export const isMaxChars = (value: unknown): value is number =>
  typeof value === "number" && value >= 0 && (Number.isInteger(value) || value === Number.POSITIVE_INFINITY)

const jsonSchemaOf = (schema: Schema.Constraint): Result.Result<JsonSchema.JsonSchema, string> => {
  try {
    return Result.succeed(JsonSchema.make(schema.ast))
  } catch (error) {
    return Result.fail(`its parameters cannot be written as JSON Schema (${(error as Error).message.split("\n")[0]})`)
  }
}

const isObjectRoot = (json: JsonSchema.JsonSchema): boolean =>
  json.type === "object" && json.anyOf === undefined && json.$ref === undefined

const toWire = (tool: Any): Result.Result<Wire, ChatError.InvalidToolSchema> => {
  const invalid = (detail: string) => new ChatError.InvalidToolSchema({ tool: tool.name, detail })
  if (!namePattern.test(tool.name)) return Result.fail(invalid("its name must be 1 to 64 letters, digits, '_' or '-'"))
  if (tool.maxResultChars !== undefined && !isMaxChars(tool.maxResultChars)) {
    return Result.fail(invalid(`its maxResultChars must be a whole number >= 0 or Infinity, not ${String(tool.maxResultChars)}`))
  }
  if (tool.maxResultFileBytes !== undefined && !isMaxChars(tool.maxResultFileBytes)) {
    return Result.fail(invalid(`its maxResultFileBytes must be a whole number >= 0 or Infinity, not ${String(tool.maxResultFileBytes)}`))
  }
  return Result.mapError(jsonSchemaOf(tool.parameters), invalid).pipe(
    Result.filterOrFail(isObjectRoot, () => invalid("its parameters must be an object at the top (a Struct), not a union or another type")),
    Result.flatMap((json) => {
      const loose = (notStrict: ReadonlyArray<string>): Wire => ({
        declaration: { name: tool.name, description: tool.description, parameters: json, strict: false },
        notStrict,
        fromWire: identity
      })
      if (tool.strict === false) return Result.succeed(loose([]))
      const strict = StrictSchema.make(json)
      if (strict.reasons.length === 0) {
        return Result.succeed({
          declaration: { name: tool.name, description: tool.description, parameters: strict.schema, strict: true },
          notStrict: [],
          fromWire: strict.fromWire
        })
      }
      return tool.strict === true
        ? Result.fail(invalid(`it asks for strict mode, which its parameters cannot have: ${strict.reasons.join("; ")}`))
        : Result.succeed(loose(strict.reasons))
    })
  )
}

const wires = new WeakMap<Any, Result.Result<Wire, ChatError.InvalidToolSchema>>()

/**
 * How a tool reaches the model: its parameters brought into strict mode
 * when they can be (optional properties sent required and nullable), sent
 * non-strict otherwise (with the reasons) or when the tool says `strict:
 * false`; an `InvalidToolSchema` when no provider could take them.
 *
 * @category utils
 * @since 0.1.0
 */
export const wire = (tool: Any): Result.Result<Wire, ChatError.InvalidToolSchema> => {
  let known = wires.get(tool)
  if (known === undefined) {
    known = toWire(tool)
    wires.set(tool, known)
  }
  return known
}

/**
 * The model's parsed arguments in the parameters' encoded form, ready to decode (see `Wire.fromWire`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromWire = (tool: Any, json: unknown): unknown => {
  // A plain check, not `Result.match`: this runs twice a step, and the combinator cost more than the rest of it.
  const known = wire(tool)
  return Result.isSuccess(known) ? known.success.fromWire(json) : json
}

/**
 * Whether a JSON Schema is accepted as it is in strict mode (OpenAI's
 * Structured Outputs subset): an object at the top, every object closed with
 * all its properties required, only supported keywords, within the limits.
 *
 * @category guards
 * @since 0.1.0
 */
export const isStrictCompatible = (schema: unknown): boolean => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return false
  const strict = StrictSchema.make(schema as JsonSchema.JsonSchema)
  return strict.reasons.length === 0 && !strict.changed
}

/**
 * Makes a tool. `parameters` is a Schema or the fields of a Struct; `success` defaults to `Schema.Void`.
 *
 * @example
 * ```ts
 * import { Tool } from "@chat-ts/core"
 * import { Schema } from "effect"
 *
 * const GetWeather = Tool.make("get_weather", {
 *   description: "The temperature in a city, in degrees Celsius.",
 *   parameters: { city: Schema.String }, // the fields of a Struct, or any Schema
 *   success: Schema.Number // defaults to Schema.Void
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <
  const Name extends string,
  const P extends Schema.Struct.Fields | Schema.Constraint,
  Success extends Schema.Constraint = typeof Schema.Void,
  Failure extends Schema.Constraint = typeof Schema.Never,
  Metadata = undefined
>(
  name: Name,
  options: {
    readonly description: string
    readonly parameters: P
    readonly success?: Success
    readonly failure?: Failure
    readonly metadata?: Metadata
    /** `false`: never strict mode; `true`: strict mode or `InvalidToolSchema` at `Chat.make`; default: strict when possible. */
    readonly strict?: boolean
    /** Running a call twice is harmless: after a crash mid-run, run it again (see `Tool.idempotent`). */
    readonly idempotent?: boolean
    /** For an idempotent tool, how many times a call may be started in all (default 3). */
    readonly maxAttempts?: number
    /** Takes the files (images…) out of each encoded result, for the model to see them as files (see `ResultFiles`). */
    readonly splitFiles?: (encoded: Success["Encoded"]) => ResultFiles
    /** Takes the files (images…) out of each encoded typed failure, as `splitFiles` does of a result. */
    readonly splitFailureFiles?: (encoded: Failure["Encoded"]) => ResultFiles
    /** Who may decide its calls that wait for a person (see `DecisionPolicy`); a strategy's own policy wins. */
    readonly decisionPolicy?: DecisionPolicy
    /**
     * The most characters of the text the model reads of one call's result (or failure), a whole number
     * (`Infinity`: no cap); a longer one is cut with a marker (see `ToolResult`). Default: its toolkit's
     * cap, else `ToolResult.defaultMaxChars` (50,000).
     */
    readonly maxResultChars?: number
    /**
     * The most bytes of files (`splitFiles`' files, as stored: base64 data, a URL) one call's result (or
     * failure) carries, a whole number (`Infinity`: no cap); the files past it are each replaced by a
     * note the model reads (see `ToolResult`). Default: its toolkit's, else `ToolResult.defaultMaxFileBytes` (5 MiB).
     */
    readonly maxResultFileBytes?: number
  }
): Tool<Name, ParametersSchema<P>, Success, Failure, Metadata> => {
  const parameters = (Schema.isSchema(options.parameters)
    ? options.parameters
    : Schema.Struct(options.parameters as Schema.Struct.Fields)) as ParametersSchema<P>
  const tool: Tool<Name, ParametersSchema<P>, Success, Failure, Metadata> = {
    [TypeId]: TypeId,
    name,
    description: options.description,
    parameters,
    success: (options.success ?? Schema.Void) as Success,
    failure: (options.failure ?? Schema.Never) as Failure,
    metadata: options.metadata as Metadata,
    ...(options.strict === undefined ? {} : { strict: options.strict }),
    idempotent: options.idempotent === true,
    maxAttempts: options.idempotent === true ? Math.max(1, Math.floor(options.maxAttempts ?? 3)) : 1,
    ...(options.splitFiles === undefined ? {} : { splitFiles: options.splitFiles as (encoded: unknown) => ResultFiles }),
    ...(options.splitFailureFiles === undefined
      ? {}
      : { splitFailureFiles: options.splitFailureFiles as (encoded: unknown) => ResultFiles }),
    ...(options.decisionPolicy === undefined ? {} : { decisionPolicy: options.decisionPolicy }),
    ...(options.maxResultChars === undefined ? {} : { maxResultChars: options.maxResultChars }),
    ...(options.maxResultFileBytes === undefined ? {} : { maxResultFileBytes: options.maxResultFileBytes }),
    get declaration() {
      return Result.match(wire(tool), {
        onFailure: (): LanguageModel.ToolDeclaration => ({
          name,
          description: options.description,
          parameters: JsonSchema.make(parameters.ast),
          strict: false
        }),
        onSuccess: (w) => w.declaration
      })
    }
  }
  return tool
}

/**
 * The service behind a tool's handler: a function of decoded parameters.
 *
 * @category models
 * @since 0.1.0
 */
export interface HandlerService {
  readonly handle: (params: unknown, call: CallInfo) => Effect.Effect<unknown, unknown>
  /**
   * The handler itself, not suspended (it may throw): for a caller that runs its Effect once, at
   * once. Absent: only `handle` is used.
   */
  readonly call?: ((params: unknown, call: CallInfo) => Effect.Effect<unknown, unknown>) | undefined
}

/**
 * What a handler learns about the call besides its parameters.
 *
 * @category models
 * @since 0.1.0
 */
export interface CallInfo {
  readonly id: string
  readonly name: string
  /** Which run of this call this is: 1, or more when an idempotent call runs again after a crash. */
  readonly attempt: number
  /**
   * Records on the running call that it waits on a request for a person's input (an MCP server's
   * elicitation), and that the request was settled: `Chat` puts it in the state (checkpointed) and
   * streams it (`ChatEvent.InputRequested` / `InputSettled`). Absent where a shell records none.
   */
  readonly inputs?: InputRecorder | undefined
}

/**
 * How a handler records the requests for a person's input its call waits on (see `CallInfo.inputs`).
 *
 * @category models
 * @since 0.3.0
 */
export interface InputRecorder {
  /** The call waits on `request` (ignored unless it is a valid `Messages.InputRequest` and the call is running). */
  readonly requested: (request: InputRequest) => Effect.Effect<void>
  /** The call no longer waits on request `requestId`. */
  readonly settled: (requestId: string) => Effect.Effect<void>
}

/**
 * The service key of the handler of the tool named `Name`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Handler<Name extends string> {
  readonly _: unique symbol
  readonly name: Name
}

const handlerTags = new Map<string, Context.Service<unknown, HandlerService>>()

/**
 * The Context key of the handler of the tool named `name`.
 *
 * @category utils
 * @since 0.1.0
 */
export const handlerTag = <Name extends string>(name: Name): Context.Service<Handler<Name>, HandlerService> => {
  let tag = handlerTags.get(name)
  if (tag === undefined) {
    tag = Context.Service<unknown, HandlerService>(`@chat-ts/core/Tool/Handler/${name}`)
    handlerTags.set(name, tag)
  }
  return tag as unknown as Context.Service<Handler<Name>, HandlerService>
}
