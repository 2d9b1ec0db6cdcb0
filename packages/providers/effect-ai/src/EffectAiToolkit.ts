/**
 * An `effect/ai` `Toolkit` (its tools and their handlers) used as it is in a
 * chat-ts `Chat`.
 *
 * `fromToolkit` makes the chat-ts toolkit of an `effect/ai` toolkit: each
 * tool keeps its name, description, parameters Schema (or raw JSON Schema,
 * for a dynamic tool), success and failure Schemas and strict mode; its
 * `needsApproval` becomes the toolkit's strategy, **failing closed**: `true`
 * asks a person (`RequireApproval`), `false` or none runs the call
 * (`Execute`), and a `needsApproval` function that fails, dies, throws or
 * answers anything but a boolean asks a person too (Effect's own loop reads
 * such a failure as "no approval needed"). chat-ts strategies see the call,
 * not the conversation: the function's `messages` is empty.
 *
 * `layer` serves the calls with the handlers of the `effect/ai` toolkit
 * (`aiToolkit.toLayer({...})` in context): the handler's final result is
 * the call's result, its failure (a typed failure of the tool, or an
 * `AiError` such as a result that does not fit the success Schema) the
 * call's failure. chat-ts decides, records and resumes the calls (approval,
 * edits checked against the tool's Schema, schedules).
 *
 * @since 0.2.0
 */
import * as Action from "@chat-ts/core/Action"
import * as Tool from "@chat-ts/core/Tool"
import * as Toolkit from "@chat-ts/core/Toolkit"
import * as AiError from "effect/ai/AiError"
import * as AiTool from "effect/ai/Tool"
import type * as AiToolkit from "effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/** What a strategy learns about a tool from an `effect/ai` toolkit: the `effect/ai` tool itself (its annotations…). */
export interface Metadata {
  readonly tool: AiTool.Any
}

/** The chat-ts tool of an `effect/ai` tool. */
export type ChatTool<T extends AiTool.Any> = Tool.Tool<
  T["name"],
  T["parametersSchema"],
  T["successSchema"],
  T["failureSchema"],
  Metadata
>

/** The chat-ts tools of an `effect/ai` toolkit's tools, by name. */
export type ChatTools<Tools extends Record<string, AiTool.Any>> = {
  readonly [Name in keyof Tools as Tools[Name]["name"]]: ChatTool<Tools[Name]>
}

/** What the handlers of an `effect/ai` toolkit need: the handlers themselves, and the services their tools depend on. */
export type HandlersContext<Tools extends Record<string, AiTool.Any>> =
  | AiTool.HandlersFor<Tools>
  | AiTool.HandlerServices<Tools[keyof Tools]>

const isObject = (input: unknown): input is { readonly [key: string]: unknown } =>
  typeof input === "object" && input !== null && !Array.isArray(input)

/**
 * The parameters of a dynamic tool declared with a raw JSON Schema: any JSON
 * object (effect/ai does not check them either), declared to the model as
 * that JSON Schema (chat-ts reads a declaration's `jsonSchema` annotation as
 * its whole JSON Schema).
 */
const jsonSchemaParameters = (jsonSchema: { readonly [key: string]: unknown }) =>
  Schema.declare(isObject, { expected: "a JSON object", jsonSchema })

/** The raw JSON Schema of a dynamic tool, when it was declared with one. */
const rawJsonSchema = (tool: AiTool.Any): { readonly [key: string]: unknown } | undefined => {
  const jsonSchema: unknown = "jsonSchema" in tool ? tool.jsonSchema : undefined
  return isObject(jsonSchema) ? jsonSchema : undefined
}

/** The chat-ts tool of one `effect/ai` tool. */
export const fromTool = <T extends AiTool.Any>(tool: T): ChatTool<T> => {
  const jsonSchema = rawJsonSchema(tool)
  const strict = jsonSchema === undefined ? AiTool.getStrictMode(tool) : false
  return Tool.make(tool.name, {
    description: tool.description ?? tool.name,
    parameters: (jsonSchema === undefined ? tool.parametersSchema : jsonSchemaParameters(jsonSchema)) as T["parametersSchema"],
    success: tool.successSchema as T["successSchema"],
    failure: tool.failureSchema as T["failureSchema"],
    metadata: { tool },
    ...(strict === undefined ? {} : { strict })
  }) as ChatTool<T>
}

/**
 * Whether a call needs a person, by the tool's `needsApproval`, failing
 * closed: a function that fails, dies, throws or answers anything but a
 * boolean means it does (with a warning in the log).
 */
export const needsApproval = (tool: AiTool.Any, params: unknown, toolCallId: string): Effect.Effect<boolean> => {
  const rule: unknown = tool.needsApproval
  if (rule === undefined || rule === false) return Effect.succeed(false)
  if (rule === true) return Effect.succeed(true)
  const warn = (why: string) =>
    Effect.as(Effect.logWarning(`The needsApproval of tool '${tool.name}' (call ${toolCallId}) ${why}; the call requires approval.`), true)
  if (typeof rule !== "function") return warn(`is ${typeof rule}, neither a boolean nor a function`)
  return Effect.suspend(() => {
    const answer: unknown = rule(params, { toolCallId, messages: [] })
    return Effect.isEffect(answer) ? answer as Effect.Effect<unknown, unknown> : Effect.succeed(answer)
  }).pipe(
    Effect.exit,
    Effect.flatMap((exit) =>
      Exit.isFailure(exit)
        ? warn("failed")
        : typeof exit.value === "boolean"
        ? Effect.succeed(exit.value)
        : warn(`answered ${typeof exit.value}, not a boolean`)
    )
  )
}

/** The strategy of an `effect/ai` toolkit: `needsApproval`, failing closed. */
export const strategy: Toolkit.Strategy<Record<string, Tool.Tool<string, Schema.Constraint, Schema.Constraint, Schema.Constraint, Metadata>>> = (
  call,
  metadata
) => Effect.map(needsApproval(metadata.tool, call.params, call.id), (needed) => needed ? Action.RequireApproval() : Action.Execute())

/** The chat-ts toolkit of an `effect/ai` toolkit, its strategy the tools' `needsApproval` (failing closed). */
export const fromToolkit = <Tools extends Record<string, AiTool.Any>>(
  toolkit: AiToolkit.Toolkit<Tools>
): Toolkit.Toolkit<ChatTools<Tools>> => {
  const tools: ReadonlyArray<Tool.Any> = Object.values(toolkit.tools).map((tool) => fromTool(tool))
  const kit = Toolkit.make(...tools) as unknown as Toolkit.Toolkit<ChatTools<Tools>>
  return Toolkit.withStrategy(kit, strategy as unknown as Toolkit.Strategy<ChatTools<Tools>>)
}

/** The message of a failure that is not one of the tool's own: an `AiError`'s, or the value as text. */
const failureOf = (error: unknown): unknown => AiError.isAiError(error) ? error.message : error

/** Runs one call with the `effect/ai` handler: its final (not preliminary) result, or its failure. */
const run = (
  handler: AiToolkit.WithHandler<Record<string, AiTool.Any>>,
  tool: AiTool.Any,
  params: unknown,
  call: Tool.CallInfo
): Effect.Effect<unknown, unknown> =>
  Schema.encodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown, unknown>)(params).pipe(
    // chat-ts decoded the arguments with this very Schema: encoding them back cannot fail for a Schema that round-trips.
    Effect.orDie,
    Effect.flatMap((encoded) => handler.handle(tool.name, encoded, call.id)),
    Effect.flatMap((results) => Stream.runLast(Stream.filter(results, (result) => !result.preliminary))),
    Effect.flatMap(Option.match({
      onNone: () => Effect.die(new Error(`The effect/ai handler of tool '${tool.name}' ended without a result.`)),
      onSome: (result) => result.isFailure ? Effect.fail(failureOf(result.result)) : Effect.succeed(result.result)
    })),
    Effect.mapError(failureOf)
  ) as Effect.Effect<unknown, unknown>

/**
 * The handlers of `fromToolkit(toolkit)`'s tools, served by the `effect/ai`
 * handlers in context (`toolkit.toLayer({...})`).
 */
export const layer = <Tools extends Record<string, AiTool.Any>>(
  toolkit: AiToolkit.Toolkit<Tools>
): Layer.Layer<Toolkit.HandlersOf<ChatTools<Tools>>, never, HandlersContext<Tools>> =>
  Layer.effectContext(Effect.gen(function*() {
    const handler = (yield* toolkit) as unknown as AiToolkit.WithHandler<Record<string, AiTool.Any>>
    const context = yield* Effect.context<HandlersContext<Tools>>()
    let out = Context.empty() as Context.Context<unknown>
    for (const tool of Object.values(toolkit.tools)) {
      const service: Tool.HandlerService = {
        handle: (params, call) => Effect.provide(run(handler, tool, params, call), context as Context.Context<unknown>)
      }
      out = Context.add(out, Tool.handlerTag(tool.name), service)
    }
    return out as Context.Context<Toolkit.HandlersOf<ChatTools<Tools>>>
  }))
