/**
 * AI SDK tools as a chat-ts `Toolkit`: the `tool({ description, inputSchema,
 * execute, needsApproval })` values of an AI SDK program (`ai` 7) keep
 * their code, and their approvals move onto chat-ts's durable pauses.
 *
 * - The model sees the JSON Schema the AI SDK would send (`asSchema(inputSchema).jsonSchema`,
 *   without `$schema`, which no chat-ts declaration carries), strict only when the tool says `strict: true`.
 * - Every call's arguments, and every edit a person makes to them, are checked against the input
 *   schema before anything is decided or run: with the Standard Schema's own `validate` (zod 4,
 *   arktype, any Standard Schema that gives a JSON Schema) and then the JSON Schema the model was
 *   given (so a key it closes out is refused, not dropped unseen), or for a `jsonSchema(...)` with
 *   that JSON Schema (and its own `validate` too when that answers at once). A call that does not
 *   match fails for the model to retry; an edit that does not match is core's `InvalidEditedArguments`.
 * - `needsApproval` becomes the toolkit's strategy, failing closed: `false` (or none) runs the
 *   call, anything else waits for a person, and so does a function that throws, rejects, answers
 *   something other than a boolean or does not answer within `needsApprovalTimeout` (30 seconds).
 * - `execute` is the handler: it gets the validated input (the schema's output, as in the AI SDK)
 *   and `{ toolCallId, messages: [], abortSignal, context }`; interrupting the call aborts the
 *   signal. What it returns (the last value of an async iterable) is recorded as JSON; what it
 *   throws is the call's failure `{ error }`, which the model reads, as the AI SDK sends it.
 * - A tool without `execute`, a provider-executed or provider-defined tool, or a schema that gives
 *   no JSON Schema is refused when the toolkit is made (`AiSdkToolError`).
 *
 * @since 0.2.0
 */
import * as Action from "@chat-ts/core/Action"
import * as Tool from "@chat-ts/core/Tool"
import * as Toolkit from "@chat-ts/core/Toolkit"
import { asSchema } from "@ai-sdk/provider-utils"
import { Ajv } from "ajv"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * An AI SDK tool as this module reads it: what `tool(...)` of `ai` 7 makes. Typed structurally
 * (only what is read here), so a tool of another `ai` version of the same shape fits too.
 */
export interface AiTool {
  readonly type?: string | undefined
  readonly description?: string | ((options: never) => string) | undefined
  readonly inputSchema?: unknown
  readonly strict?: boolean | undefined
  readonly execute?: ((input: never, options: never) => unknown) | undefined
  readonly needsApproval?: boolean | ((input: never, options: never) => unknown) | undefined
}

/** AI SDK tools by name (an AI SDK `ToolSet`). */
export type AiTools = { readonly [name: string]: AiTool }

/** The arguments of a call as core checks them: a JSON object matching the tool's input schema. */
export type Params = { readonly [key: string]: unknown }

/** What the model reads when a call fails: the message of what `execute` threw (as the AI SDK sends it). */
export const Failure = Schema.Struct({ error: Schema.String })

/** What the model reads when a call fails. */
export type Failure = typeof Failure.Type

/** How a tool's calls are decided, read from its `needsApproval`. */
export type Approval = "never" | "always" | "function"

/** What a strategy learns about an AI SDK tool. */
export interface Metadata {
  /** `never`: no `needsApproval` or `false`; `always`: `true` (or a value that is neither); `function`: decided per call. */
  readonly approval: Approval
  /** The AI SDK tool as it was given. */
  readonly aiTool: AiTool
}

/** One AI SDK tool as a chat-ts tool: JSON object arguments, a JSON result, a `{ error }` failure. */
export interface AiSdkTool<Name extends string>
  extends Tool.Tool<Name, Schema.Codec<Params>, typeof Schema.Json, typeof Failure, Metadata>
{}

/** The chat-ts tools of AI SDK tools, by name. */
export type ToolsOf<T extends AiTools> = { readonly [K in keyof T & string]: AiSdkTool<K> }

/** AI SDK tools as a chat-ts toolkit (its strategy is their `needsApproval`) and the layer of their handlers (their `execute`). */
export interface AiSdkToolkit<Tools extends Record<string, Tool.Any>> extends Toolkit.Toolkit<Tools> {
  /** The handlers of every tool: each one's `execute`. Provide it where the chat runs. */
  readonly handlers: Layer.Layer<Toolkit.HandlersOf<Tools>>
}

/** Options of `make`. */
export interface Options {
  /**
   * The AI SDK tool context given to every `execute`, `needsApproval` and description function
   * (`options.context`), as `streamText`'s `toolsContext` does. Default `{}`.
   */
  readonly context?: unknown
  /**
   * How long a `needsApproval` function may take to answer (default `defaultNeedsApprovalTimeout`,
   * 30 seconds); one that has not answered by then makes the call wait for a person.
   */
  readonly needsApprovalTimeout?: Duration.Input
}

/** How long a `needsApproval` function may take by default: 30 seconds, then the call waits for a person. */
export const defaultNeedsApprovalTimeout: Duration.Duration = Duration.seconds(30)

/** Why a tool cannot be made a chat-ts tool. */
export const Reason = Schema.Literals(["MissingExecute", "ProviderTool", "InvalidSchema", "InvalidTool", "InvalidOptions"])

/** Why a tool cannot be made a chat-ts tool. */
export type Reason = typeof Reason.Type

/**
 * An AI SDK tool that cannot become a chat-ts tool: `MissingExecute` (no `execute`: chat-ts runs
 * every call it approves, so a tool must say how), `ProviderTool` (the provider runs it, or defines
 * it), `InvalidSchema` (no input schema that gives a JSON Schema), `InvalidTool` (not a tool);
 * `InvalidOptions` when `make`'s options are not valid (`tool` is then empty).
 */
export class AiSdkToolError extends Schema.TaggedError<AiSdkToolError>("@chat-ts/ai-sdk-provider/AiSdkToolError")(
  "AiSdkToolError",
  { tool: Schema.String, reason: Reason, detail: Schema.String }
) {
  override get message() {
    return this.reason === "InvalidOptions"
      ? `AiSdkToolkit.make: ${this.detail}`
      : `AI SDK tool '${this.tool}' cannot be a chat-ts tool: ${this.detail}`
  }
}

/** An AI SDK `Schema` (what `asSchema` gives). */
interface AiSchema {
  readonly jsonSchema: unknown
  readonly validate?: ((value: unknown) => unknown) | undefined
}

/** A Standard Schema's result, as far as this module reads it. */
interface StandardResult {
  readonly value?: unknown
  readonly issues?: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<unknown> }> | undefined
}

const isObject = (input: unknown): input is Params => typeof input === "object" && input !== null && !Array.isArray(input)

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  (typeof value === "object" || typeof value === "function") && value !== null &&
  typeof (value as { then?: unknown }).then === "function"

const messageOf = (error: unknown): string => {
  if (error instanceof Error) return error.message
  if (typeof error === "string") return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    return "The tool failed with a value that cannot be written as text."
  }
}

const firstLine = (error: unknown): string => messageOf(error).split("\n")[0] ?? ""

/** A Standard Schema's issues as one line each (`path: message`). */
const issuesText = (issues: NonNullable<StandardResult["issues"]>): string =>
  issues.map((issue) => {
    const path = (issue.path ?? []).map((key) =>
      typeof key === "object" && key !== null && "key" in key ? String((key as { key: unknown }).key) : String(key)
    )
    return path.length === 0 ? issue.message : `${path.join(".")}: ${issue.message}`
  }).join("; ") || "the arguments do not match the tool's input schema"

/**
 * A check of a JSON Schema (draft-07, the AI SDK's; `format`s are not checked): `undefined` when
 * the input matches, else why not. A schema the validator cannot compile fails every input
 * (`unusable: "fail"`) or passes every input (`"pass"`, where another check stands in for it).
 * One validator per tool, so that two tools' schemas with the same `$id` cannot meet.
 */
const jsonSchemaCheck = (
  jsonSchema: Record<string, unknown>,
  unusable: "fail" | "pass"
): (input: unknown) => string | undefined => {
  try {
    const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false })
    const validate = ajv.compile(jsonSchema)
    return (input) =>
      validate(input)
        ? undefined
        : (ajv.errorsText(validate.errors, { dataVar: "arguments" }) || "the arguments do not match the tool's JSON Schema")
  } catch (error) {
    const reason = `the tool's JSON Schema cannot be used to check its arguments (${firstLine(error)})`
    return unusable === "fail" ? () => reason : () => undefined
  }
}

/** Why the AI SDK's `validate` refused a value: the schema's issues when its error carries them, else its message on one line. */
const validationText = (error: unknown): string => {
  const cause = typeof error === "object" && error !== null ? (error as { readonly cause?: unknown }).cause : undefined
  const issues = Array.isArray(cause)
    ? cause
    : typeof cause === "object" && cause !== null && Array.isArray((cause as { readonly issues?: unknown }).issues)
    ? (cause as { readonly issues: Array<unknown> }).issues
    : undefined
  if (issues !== undefined && issues.every((issue) => typeof (issue as { message?: unknown })?.message === "string")) {
    return issuesText(issues as NonNullable<StandardResult["issues"]>)
  }
  return messageOf(error ?? "invalid").replace(/\s+/g, " ").trim()
}

/**
 * A synchronous check of the arguments before a decision and of every edit: `undefined` when they
 * match. A Standard Schema checks first (its messages are the clearest); then the JSON Schema the
 * model was given, so that what the schema would silently drop (a key the JSON Schema closes out,
 * `additionalProperties: false`) is refused rather than stored, shown to a person and to the model
 * and never given to `execute`. A Standard Schema whose JSON Schema the validator cannot compile is
 * checked by the Standard Schema alone; a `jsonSchema(...)` that cannot be compiled refuses every call.
 */
const checkOf = (
  inputSchema: unknown,
  schema: AiSchema,
  declared: Record<string, unknown>
): (input: unknown) => string | undefined => {
  const standard = typeof inputSchema === "object" && inputSchema !== null && "~standard" in inputSchema
    ? (inputSchema as { readonly "~standard": { readonly validate: (value: unknown) => unknown } })["~standard"]
    : undefined
  let byJsonSchema: ((input: unknown) => string | undefined) | undefined
  const jsonCheck = (input: unknown) => (byJsonSchema ??= jsonSchemaCheck(declared, standard === undefined ? "fail" : "pass"))(input)
  if (standard !== undefined) {
    return (input) => {
      let result: unknown
      try {
        result = standard.validate(input)
      } catch (error) {
        return `the tool's input schema failed checking the arguments (${firstLine(error)})`
      }
      // A schema that checks asynchronously (an async refinement) is checked by its JSON Schema
      // here; its own check runs in full before `execute` (see `validated`).
      if (isPromiseLike(result)) return jsonCheck(input)
      const issues = (result as StandardResult).issues
      return issues === undefined ? jsonCheck(input) : issuesText(issues)
    }
  }
  return (input) => {
    const problem = jsonCheck(input)
    if (problem !== undefined || schema.validate === undefined) return problem
    let result: unknown
    try {
      result = schema.validate(input)
    } catch (error) {
      return `the tool's validate function threw (${firstLine(error)})`
    }
    if (isPromiseLike(result)) return undefined
    const checked = result as { readonly success?: unknown; readonly error?: unknown }
    return checked.success === true ? undefined : validationText(checked.error)
  }
}

/** The input the AI SDK would give `execute`: the schema's own (possibly asynchronous) validation, its output value. */
const validated = async (schema: AiSchema, input: unknown): Promise<unknown> => {
  if (schema.validate === undefined) return input
  const result = (await schema.validate(input)) as { readonly success?: unknown; readonly value?: unknown; readonly error?: unknown }
  if (result.success === true) return result.value
  throw new Error(`The arguments do not match the tool's input schema: ${validationText(result.error)}`)
}

/** What `execute` gave: its value, or the last value of an async iterable (the AI SDK's preliminary results). */
const settled = async (output: unknown): Promise<unknown> => {
  if (typeof output === "object" && output !== null && Symbol.asyncIterator in output) {
    let last: unknown = undefined
    for await (const value of output as AsyncIterable<unknown>) last = value
    return last
  }
  return await output
}

/** A result as the JSON the model reads (the AI SDK sends results as JSON too); `undefined` is `null`. */
const toJson = (value: unknown): Schema.Json => {
  const text = JSON.stringify(value)
  return text === undefined ? null : JSON.parse(text) as Schema.Json
}

/** The approval of a tool, read from its `needsApproval`. */
const approvalOf = (tool: AiTool): Approval =>
  tool.needsApproval === undefined || tool.needsApproval === false
    ? "never"
    : typeof tool.needsApproval === "function"
    ? "function"
    : "always"

/** The JSON Schema an AI SDK schema gives, without `$schema`. */
const declaredOf = (name: string, schema: AiSchema): Effect.Effect<Record<string, unknown>, AiSdkToolError> =>
  Effect.tryPromise({
    try: async () => await schema.jsonSchema,
    catch: (error) =>
      new AiSdkToolError({ tool: name, reason: "InvalidSchema", detail: `its input schema gives no JSON Schema (${firstLine(error)})` })
  }).pipe(
    Effect.flatMap((json) => {
      if (!isObject(json)) {
        return Effect.fail(new AiSdkToolError({ tool: name, reason: "InvalidSchema", detail: "its input schema's JSON Schema is not an object" }))
      }
      const { $schema: _ignored, ...rest } = JSON.parse(JSON.stringify(json)) as Record<string, unknown>
      return Effect.succeed(rest)
    })
  )

interface Built {
  readonly tool: AiSdkTool<string>
  readonly schema: AiSchema
  readonly source: AiTool
}

const buildOne = (name: string, source: unknown, context: unknown): Effect.Effect<Built, AiSdkToolError> =>
  Effect.gen(function*() {
    const refuse = (reason: Reason, detail: string) => Effect.fail(new AiSdkToolError({ tool: name, reason, detail }))
    if (!isObject(source)) return yield* refuse("InvalidTool", "it is not an AI SDK tool (an object made by `tool(...)`)")
    const tool = source as AiTool
    if (tool.type === "provider" || tool.type === "provider-defined" || tool.type === "provider-executed") {
      return yield* refuse("ProviderTool", "it is a provider tool (its provider defines or runs it); chat-ts runs only function tools")
    }
    if (typeof tool.execute !== "function") {
      return yield* refuse(
        "MissingExecute",
        "it has no `execute`; chat-ts runs every call it lets through, so give the tool an `execute` (a call that only a person answers is a tool whose execute waits for it)"
      )
    }
    const schema = yield* Effect.try({
      try: () => asSchema(tool.inputSchema as Parameters<typeof asSchema>[0]) as AiSchema,
      catch: (error) => new AiSdkToolError({ tool: name, reason: "InvalidSchema", detail: `its input schema cannot be read (${firstLine(error)})` })
    })
    const declared = yield* declaredOf(name, schema)
    const check = checkOf(tool.inputSchema, schema, declared)
    const description = typeof tool.description === "function"
      ? yield* Effect.try({
        try: () => String((tool.description as unknown as (options: { readonly context: unknown }) => string)({ context })),
        catch: (error) => new AiSdkToolError({ tool: name, reason: "InvalidTool", detail: `its description function threw (${firstLine(error)})` })
      })
      : tool.description ?? ""
    // chat-ts reads a declaration's `jsonSchema` annotation as its whole JSON Schema: the AI SDK's, as it is.
    const parameters: Schema.Codec<Params> = Schema.declare(isObject, { expected: "a JSON object", jsonSchema: declared }).check(
      Schema.makeFilter((input: Params) => check(input))
    )
    const made: AiSdkTool<string> = Tool.make(name, {
      description,
      parameters,
      success: Schema.Json,
      failure: Failure,
      metadata: { approval: approvalOf(tool), aiTool: tool },
      // As the AI SDK: strict mode only when the tool asks for it.
      strict: tool.strict === true
    })
    return { tool: made, schema, source: tool }
  })

/** The decision for one call from its tool's `needsApproval`, failing closed (see the module's doc). */
const decide = (built: Built, call: { readonly id: string; readonly params: unknown }, context: unknown, timeout: Duration.Duration) => {
  const approval = built.tool.metadata.approval
  if (approval === "never") return Action.Execute()
  if (approval === "always") return Action.RequireApproval()
  const needsApproval = built.source.needsApproval as (input: unknown, options: unknown) => unknown
  return Effect.tryPromise({
    try: async () => await needsApproval(await validated(built.schema, call.params), { toolCallId: call.id, messages: [], context }),
    catch: (error) => error
  }).pipe(
    Effect.flatMap((answer) =>
      answer === false
        ? Effect.succeed(Action.Execute())
        : answer === true
        ? Effect.succeed(Action.RequireApproval())
        : Effect.as(
          Effect.logWarning(`needsApproval of AI SDK tool '${built.tool.name}' (call ${call.id}) answered ${String(answer)}, not a boolean; the call now requires approval.`),
          Action.RequireApproval()
        )
    ),
    Effect.catch((error) =>
      Effect.as(
        Effect.logWarning(`needsApproval of AI SDK tool '${built.tool.name}' (call ${call.id}) failed (${firstLine(error)}); the call now requires approval.`),
        Action.RequireApproval()
      )
    ),
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.as(
          Effect.logWarning(
            `needsApproval of AI SDK tool '${built.tool.name}' (call ${call.id}) did not answer within ${Duration.format(timeout)}; the call now requires approval.`
          ),
          Action.RequireApproval()
        )
    })
  )
}

/** The handler of one tool: its `execute`, given the validated input and the abort signal. */
const handlerOf = (built: Built, context: unknown) => (params: Params, call: Tool.CallInfo): Effect.Effect<Schema.Json, Failure> =>
  Effect.tryPromise({
    try: async (signal) => {
      const execute = built.source.execute as (input: unknown, options: unknown) => unknown
      const input = await validated(built.schema, params)
      const output = await settled(execute(input, { toolCallId: call.id, messages: [], abortSignal: signal, context }))
      try {
        return toJson(output)
      } catch (error) {
        throw new Error(`The tool ran, but its result cannot be written as JSON (${firstLine(error)}).`)
      }
    },
    catch: (error): Failure => ({ error: messageOf(error) })
  })

/** The `needsApprovalTimeout` option as a duration: finite and not negative, else `InvalidOptions`. */
const timeoutOf = (input: Duration.Input | undefined): Effect.Effect<Duration.Duration, AiSdkToolError> => {
  if (input === undefined) return Effect.succeed(defaultNeedsApprovalTimeout)
  let decoded: Duration.Duration | undefined
  try {
    decoded = Option.getOrUndefined(Duration.fromInput(input))
  } catch {
    decoded = undefined
  }
  return decoded !== undefined && Duration.isFinite(decoded) && !Duration.isNegative(decoded)
    ? Effect.succeed(decoded)
    : Effect.fail(
      new AiSdkToolError({
        tool: "",
        reason: "InvalidOptions",
        detail: `needsApprovalTimeout must be a finite, non-negative duration, not ${String(input)}`
      })
    )
}

/**
 * Makes a chat-ts toolkit of AI SDK tools: its strategy decides each call from the tool's
 * `needsApproval`, its `handlers` layer runs each call's `execute`. Fails with `AiSdkToolError`
 * for a tool that cannot be one (no `execute`, a provider tool, a schema without a JSON Schema)
 * or a `needsApprovalTimeout` that is no duration.
 */
export const make = <const T extends AiTools>(tools: T, options?: Options): Effect.Effect<AiSdkToolkit<ToolsOf<T>>, AiSdkToolError> =>
  Effect.gen(function*() {
    const context = options?.context ?? {}
    const timeout = yield* timeoutOf(options?.needsApprovalTimeout)
    const built: Array<Built> = []
    for (const [name, source] of Object.entries(tools)) {
      // A tool whose fields throw when read (a getter, a proxy) is refused, not a defect.
      built.push(yield* buildOne(name, source, context).pipe(
        Effect.catchDefect((defect) =>
          Effect.fail(new AiSdkToolError({ tool: name, reason: "InvalidTool", detail: `reading it threw (${firstLine(defect)})` }))
        )
      ))
    }
    const byName = new Map(built.map((entry) => [entry.tool.name, entry]))
    const kit = Toolkit.make(...built.map((entry) => entry.tool)).pipe(
      Toolkit.withStrategy((call) => {
        const entry = byName.get(call.name)
        return entry === undefined ? Action.RequireApproval() : decide(entry, call, context, timeout)
      })
    ) as unknown as Toolkit.Toolkit<ToolsOf<T>>
    const handlers = kit.toLayer(
      Object.fromEntries(built.map((entry) => [entry.tool.name, handlerOf(entry, context)])) as unknown as Toolkit.HandlersFrom<ToolsOf<T>>
    ) as unknown as Layer.Layer<Toolkit.HandlersOf<ToolsOf<T>>>
    return { ...kit, handlers }
  })
