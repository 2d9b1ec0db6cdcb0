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
import * as Schema from "effect/Schema"
import * as JsonSchema from "./internal/jsonSchema.js"
import type * as LanguageModel from "./LanguageModel.js"

/** Identifies tools. */
export const TypeId: unique symbol = Symbol.for("@chat-ts/core/Tool")

/** Identifies tools. */
export type TypeId = typeof TypeId

/** A tool: name, description, parameter and result schemas, metadata. */
export interface Tool<
  Name extends string,
  Params extends Schema.Schema.Any,
  Success extends Schema.Schema.All,
  Failure extends Schema.Schema.All,
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
  /**
   * Whether running a call twice is harmless (the handler passes an idempotency key, e.g. the call id
   * and `attempt`, to what it calls). Only then is a call whose worker died mid-run run again.
   */
  readonly idempotent: boolean
  /** How many times an idempotent call may be started in all (default 3); never more than once otherwise. */
  readonly maxAttempts: number
}

/** Any tool. */
export interface Any extends Tool<string, Schema.Schema.Any, Schema.Schema.All, Schema.Schema.All, unknown> {}

/** The parameters schema built from `parameters` (a Schema, or the fields of a Struct). */
export type ParametersSchema<P> = P extends Schema.Schema.Any ? P
  : P extends Schema.Struct.Fields ? Schema.Struct<P>
  : never

/** The decoded parameters of a tool. */
export type Params<T extends Any> = Schema.Schema.Type<T["parameters"]>

/** The success value of a tool. */
export type Success<T extends Any> = Schema.Schema.Type<T["success"]>

/** The typed failure of a tool. */
export type Failure<T extends Any> = Schema.Schema.Type<T["failure"]>

/** The metadata of a tool. */
export type Metadata<T extends Any> = T["metadata"]

/** The declaration of a tool: an object JSON Schema, and whether it fits OpenAI-style strict mode. */
const declare = (name: string, description: string, parameters: Schema.Schema.Any): LanguageModel.ToolDeclaration => {
  const json = JsonSchema.make(parameters.ast)
  return { name, description, parameters: json, strict: isStrictCompatible(json) }
}

/**
 * Whether every object in a JSON Schema lists all of its properties as
 * required and allows no others (what strict structured output demands).
 */
export const isStrictCompatible = (schema: unknown): boolean => {
  if (Array.isArray(schema)) return schema.every(isStrictCompatible)
  if (typeof schema !== "object" || schema === null) return true
  const record = schema as { readonly [key: string]: unknown }
  if (record.type === "object" || "properties" in record) {
    const properties = (record.properties ?? {}) as { readonly [key: string]: unknown }
    const required = new Set((record.required ?? []) as ReadonlyArray<string>)
    if (record.additionalProperties !== false) return false
    if (Object.keys(properties).some((key) => !required.has(key))) return false
  }
  return Object.values(record).every(isStrictCompatible)
}

/** Makes a tool. `parameters` is a Schema or the fields of a Struct; `success` defaults to `Schema.Void`. */
export const make = <
  const Name extends string,
  const P extends Schema.Struct.Fields | Schema.Schema.Any,
  Success extends Schema.Schema.All = typeof Schema.Void,
  Failure extends Schema.Schema.All = typeof Schema.Never,
  Metadata = undefined
>(
  name: Name,
  options: {
    readonly description: string
    readonly parameters: P
    readonly success?: Success
    readonly failure?: Failure
    readonly metadata?: Metadata
    /** Running a call twice is harmless: after a crash mid-run, run it again (see `Tool.idempotent`). */
    readonly idempotent?: boolean
    /** For an idempotent tool, how many times a call may be started in all (default 3). */
    readonly maxAttempts?: number
  }
): Tool<Name, ParametersSchema<P>, Success, Failure, Metadata> => {
  const parameters = (Schema.isSchema(options.parameters)
    ? options.parameters
    : Schema.Struct(options.parameters as Schema.Struct.Fields)) as ParametersSchema<P>
  let declaration: LanguageModel.ToolDeclaration | undefined
  return {
    [TypeId]: TypeId,
    name,
    description: options.description,
    parameters,
    success: (options.success ?? Schema.Void) as Success,
    failure: (options.failure ?? Schema.Never) as Failure,
    metadata: options.metadata as Metadata,
    idempotent: options.idempotent === true,
    maxAttempts: options.idempotent === true ? Math.max(1, Math.floor(options.maxAttempts ?? 3)) : 1,
    get declaration() {
      return declaration ??= declare(name, options.description, parameters)
    }
  }
}

/** The service behind a tool's handler: a function of decoded parameters. */
export interface HandlerService {
  readonly handle: (params: unknown, call: CallInfo) => Effect.Effect<unknown, unknown>
}

/** What a handler learns about the call besides its parameters. */
export interface CallInfo {
  readonly id: string
  readonly name: string
  /** Which run of this call this is: 1, or more when an idempotent call runs again after a crash. */
  readonly attempt: number
}

/** The service key of the handler of the tool named `Name`. */
export interface Handler<Name extends string> {
  readonly _: unique symbol
  readonly name: Name
}

const handlerTags = new Map<string, Context.Tag<unknown, HandlerService>>()

/** The Context tag of the handler of the tool named `name`. */
export const handlerTag = <Name extends string>(name: Name): Context.Tag<Handler<Name>, HandlerService> => {
  let tag = handlerTags.get(name)
  if (tag === undefined) {
    tag = Context.GenericTag<unknown, HandlerService>(`@chat-ts/core/Tool/Handler/${name}`)
    handlerTags.set(name, tag)
  }
  return tag as unknown as Context.Tag<Handler<Name>, HandlerService>
}
