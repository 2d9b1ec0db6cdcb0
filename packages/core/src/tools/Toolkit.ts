/**
 * Toolkits: groups of tools, their handlers (as a Layer, so handlers can use
 * any service of the program) and an optional strategy that decides, for each
 * call, whether it runs now, waits for a person, runs later or is refused.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import * as Scope from "effect/Scope"
import type * as Action from "../turn/Action.js"
import type { Grant } from "../internal/schema.js"
import * as Tool from "./Tool.js"

/**
 * Identifies toolkits.
 *
 * @category symbols
 * @since 0.1.0
 */
export const TypeId: unique symbol = Symbol.for("@chat-ts/core/Toolkit")

/**
 * Identifies toolkits.
 *
 * @category symbols
 * @since 0.1.0
 */
export type TypeId = typeof TypeId

/**
 * The tools of a list, keyed by name.
 *
 * @category models
 * @since 0.1.0
 */
export type ToolsByName<Tools extends ReadonlyArray<Tool.Any>> = { readonly [T in Tools[number] as T["name"]]: T }

/**
 * A call as a strategy sees it: id, tool name, decoded parameters, the raw
 * arguments and its tool's metadata. A union over the tools: checking
 * `call.name` narrows `params` and `metadata` to that tool's types.
 *
 * @category models
 * @since 0.1.0
 */
export type Call<Tools extends Record<string, Tool.Any>> = {
  readonly [Name in keyof Tools]: {
    readonly id: string
    readonly name: Name
    readonly params: Tool.Params<Tools[Name]>
    readonly arguments: string
    /** The metadata of this call's tool (the same as the strategy's second argument, typed per tool). */
    readonly metadata: Tool.Metadata<Tools[Name]>
    /** The live grants that cover this call (see `Grant`; given by every chat-ts shell, absent in hand-made calls). */
    readonly grants?: ReadonlyArray<Grant>
  }
}[keyof Tools]

/**
 * A strategy: decides each call from the call and its tool's metadata; may use services (`R`).
 *
 * @category models
 * @since 0.1.0
 */
export type Strategy<Tools extends Record<string, Tool.Any>, R = never> = (
  call: Call<Tools>,
  metadata: Tool.Metadata<Tools[keyof Tools]>
) => Action.Action | Effect.Effect<Action.Action, never, R>

/**
 * The handler functions of a toolkit's tools, keyed by tool name.
 *
 * @category models
 * @since 0.1.0
 */
export type HandlersFrom<Tools extends Record<string, Tool.Any>> = {
  readonly [Name in keyof Tools]: (
    params: Tool.Params<Tools[Name]>,
    call: Tool.CallInfo
  ) => Effect.Effect<Tool.Success<Tools[Name]>, Tool.Failure<Tools[Name]>, unknown>
}

/**
 * The services the handlers need.
 *
 * @category models
 * @since 0.1.0
 */
export type HandlersContext<H> = {
  [K in keyof H]: H[K] extends (...args: ReadonlyArray<never>) => Effect.Effect<unknown, unknown, infer R> ? R : never
}[keyof H]

/**
 * The handler services a toolkit's tools need at run time.
 *
 * @category models
 * @since 0.1.0
 */
export type HandlersOf<Tools extends Record<string, Tool.Any>> = {
  [Name in keyof Tools]: Tool.Handler<Name & string>
}[keyof Tools]

/**
 * A toolkit: tools by name, an optional strategy (its services `R`), and a way to give handlers.
 *
 * @category models
 * @since 0.1.0
 */
export interface Toolkit<Tools extends Record<string, Tool.Any>, R = never> extends Pipeable {
  readonly [TypeId]: TypeId
  readonly tools: Tools
  /** The tools in the order they were given. */
  readonly list: ReadonlyArray<Tool.Any>
  /** Decides each call; without one, every call runs. */
  readonly strategy: Strategy<Tools, R> | undefined
  /** A layer providing the handlers; they may use any service `RX`, captured when the layer is built. */
  readonly toLayer: <H extends HandlersFrom<Tools>, EX = never, RX = never>(
    handlers: H | Effect.Effect<H, EX, RX>
  ) => Layer.Layer<HandlersOf<Tools>, EX, Exclude<RX, Scope.Scope> | HandlersContext<H>>
  /** This toolkit with a strategy deciding every call (same as `Toolkit.withStrategy`). */
  readonly withStrategy: <R2 = never>(strategy: Strategy<Tools, R2>) => Toolkit<Tools, R2>
  /** The caps on results its toolkits gave its tools, by tool name (`withMaxResultChars`; a tool's own `maxResultChars` wins). */
  readonly resultLimits?: ReadonlyMap<string, number> | undefined
  /** The caps on results' files its toolkits gave its tools, in bytes, by tool name (`withMaxResultFileBytes`; a tool's own wins). */
  readonly resultFileLimits?: ReadonlyMap<string, number> | undefined
}

/**
 * Any toolkit.
 *
 * @category models
 * @since 0.1.0
 */
export interface Any {
  readonly [TypeId]: TypeId
  readonly tools: Record<string, Tool.Any>
  readonly list: ReadonlyArray<Tool.Any>
  readonly strategy: ((call: never, metadata: never) => Action.Action | Effect.Effect<Action.Action, never, unknown>) | undefined
  /** The caps on results its toolkits gave its tools, by tool name (see `withMaxResultChars`). */
  readonly resultLimits?: ReadonlyMap<string, number> | undefined
  /** The caps on results' files its toolkits gave its tools, in bytes, by tool name (see `withMaxResultFileBytes`). */
  readonly resultFileLimits?: ReadonlyMap<string, number> | undefined
}

/**
 * The services the strategy of a toolkit needs.
 *
 * @category models
 * @since 0.1.0
 */
export type StrategyContext<T> = T extends Toolkit<infer _Tools, infer R> ? R : never

/**
 * The handler services of a toolkit.
 *
 * @category models
 * @since 0.1.0
 */
export type HandlersOfToolkit<T> = T extends Toolkit<infer Tools, infer _R> ? HandlersOf<Tools> : never

const makeToolkit = <Tools extends Record<string, Tool.Any>, R>(
  list: ReadonlyArray<Tool.Any>,
  strategy: Strategy<Tools, R> | undefined,
  resultLimits?: ReadonlyMap<string, number>,
  resultFileLimits?: ReadonlyMap<string, number>
): Toolkit<Tools, R> => {
  const tools = Object.fromEntries(list.map((tool) => [tool.name, tool])) as unknown as Tools
  return {
    [TypeId]: TypeId,
    tools,
    list,
    strategy,
    ...(resultLimits === undefined || resultLimits.size === 0 ? {} : { resultLimits }),
    ...(resultFileLimits === undefined || resultFileLimits.size === 0 ? {} : { resultFileLimits }),
    pipe() {
      return pipeArguments(this, arguments)
    },
    withStrategy: <R2>(next: Strategy<Tools, R2>) => makeToolkit<Tools, R2>(list, next, resultLimits, resultFileLimits),
    toLayer: <H extends HandlersFrom<Tools>, EX = never, RX = never>(handlers: H | Effect.Effect<H, EX, RX>) =>
      Layer.effectContext(
        Effect.gen(function*() {
          const resolved: H = Effect.isEffect(handlers) ? yield* handlers : handlers
          const context = yield* Effect.context<HandlersContext<H>>()
          // The layer machinery's own memo map and scope are always there; any other service is the handlers'.
          const needsContext = Context.omit(Layer.CurrentMemoMap, Scope.Scope)(context).mapUnsafe.size > 0
          let out = Context.empty() as Context.Context<unknown>
          for (const tool of list) {
            const handler = resolved[tool.name as keyof H] as unknown as (
              params: unknown,
              call: Tool.CallInfo
            ) => Effect.Effect<unknown, unknown, HandlersContext<H>>
            out = Context.add(out, Tool.handlerTag(tool.name), {
              // Suspended: a handler that throws instead of returning an Effect dies in its own call.
              // Handlers that need no services (nothing but the layer machinery was in context when the layer was built) run
              // as they are: providing an empty context costs a step's worth of interpreter work each call.
              handle: needsContext
                ? (params, call) => Effect.suspend(() => Effect.provide(handler(params, call), context))
                : (params, call) => Effect.suspend(() => handler(params, call) as Effect.Effect<unknown, unknown>),
              // Unsuspended, for the turn's single untraced call (it runs the Effect once, at once, and catches a throw).
              ...(needsContext ? {} : { call: handler as (params: unknown, call: Tool.CallInfo) => Effect.Effect<unknown, unknown> })
            })
          }
          return out as Context.Context<HandlersOf<Tools>>
        })
      ) as Layer.Layer<HandlersOf<Tools>, EX, Exclude<RX, Scope.Scope> | HandlersContext<H>>
  }
}

/**
 * Makes a toolkit of the given tools (no strategy: every call runs).
 *
 * @example
 * ```ts
 * import { Tool, Toolkit } from "@chat-ts/core"
 * import { Effect, Schema } from "effect"
 *
 * const GetWeather = Tool.make("get_weather", {
 *   description: "The temperature in a city, in degrees Celsius.",
 *   parameters: { city: Schema.String },
 *   success: Schema.Number
 * })
 *
 * // No strategy: every call runs (see `Toolkit.withStrategy`).
 * const WeatherTools = Toolkit.make(GetWeather)
 *
 * // The handlers, as the layer `Chat.make` needs.
 * const WeatherToolsLive = WeatherTools.toLayer({
 *   get_weather: ({ city }) => Effect.succeed(city === "Oslo" ? 4 : 21)
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <const Tools extends ReadonlyArray<Tool.Any>>(...tools: Tools): Toolkit<ToolsByName<Tools>> =>
  makeToolkit<ToolsByName<Tools>, never>(tools, undefined)

/**
 * Pairs a toolkit with a strategy that decides every call of its tools.
 *
 * @category combinators
 * @since 0.1.0
 */
export const withStrategy: {
  <Tools extends Record<string, Tool.Any>, R2 = never>(
    strategy: Strategy<Tools, R2>
  ): <R>(self: Toolkit<Tools, R>) => Toolkit<Tools, R2>
  <Tools extends Record<string, Tool.Any>, R, R2 = never>(self: Toolkit<Tools, R>, strategy: Strategy<Tools, R2>): Toolkit<Tools, R2>
} = dual(
  2,
  <Tools extends Record<string, Tool.Any>, R, R2>(self: Toolkit<Tools, R>, strategy: Strategy<Tools, R2>): Toolkit<Tools, R2> =>
    makeToolkit<Tools, R2>(self.list, strategy, self.resultLimits, self.resultFileLimits)
)

/**
 * Caps the results of every tool of the toolkit that has no `maxResultChars` of its own: at most
 * `maxChars` characters of the text the model reads of one call's result, a whole number (`Infinity`:
 * no cap); a longer one is cut with a marker (see `ToolResult`). A cap that is not one is refused at
 * `Chat.make` (`InvalidToolSchema`), like a tool's own.
 *
 * @category combinators
 * @since 0.3.0
 */
export const withMaxResultChars: {
  (maxChars: number): <Tools extends Record<string, Tool.Any>, R>(self: Toolkit<Tools, R>) => Toolkit<Tools, R>
  <Tools extends Record<string, Tool.Any>, R>(self: Toolkit<Tools, R>, maxChars: number): Toolkit<Tools, R>
} = dual(
  2,
  <Tools extends Record<string, Tool.Any>, R>(self: Toolkit<Tools, R>, maxChars: number): Toolkit<Tools, R> =>
    makeToolkit<Tools, R>(self.list, self.strategy, new Map(self.list.map((tool) => [tool.name, maxChars])), self.resultFileLimits)
)

/**
 * Caps the files of every tool of the toolkit that has no `maxResultFileBytes` of its own: at most
 * `maxBytes` bytes of files (as stored: base64 data, a URL) in one call's result, a whole number
 * (`Infinity`: no cap); the files past it are each replaced by a note the model reads (see
 * `ToolResult`). A cap that is not one is refused at `Chat.make` (`InvalidToolSchema`), like a tool's own.
 *
 * @category combinators
 * @since 0.3.0
 */
export const withMaxResultFileBytes: {
  (maxBytes: number): <Tools extends Record<string, Tool.Any>, R>(self: Toolkit<Tools, R>) => Toolkit<Tools, R>
  <Tools extends Record<string, Tool.Any>, R>(self: Toolkit<Tools, R>, maxBytes: number): Toolkit<Tools, R>
} = dual(
  2,
  <Tools extends Record<string, Tool.Any>, R>(self: Toolkit<Tools, R>, maxBytes: number): Toolkit<Tools, R> =>
    makeToolkit<Tools, R>(self.list, self.strategy, self.resultLimits, new Map(self.list.map((tool) => [tool.name, maxBytes])))
)

/**
 * Merges toolkits that share no strategy into one (no strategy: every call runs); each keeps its caps on results and their files.
 *
 * @category utils
 * @since 0.1.0
 */
export const merge = <const Kits extends ReadonlyArray<Toolkit<Record<string, Tool.Any>, never>>>(
  ...toolkits: Kits
): Toolkit<Kits[number]["tools"]> =>
  makeToolkit(
    toolkits.flatMap((kit) => kit.list),
    undefined,
    // Each toolkit's caps stay with its own tools.
    new Map(toolkits.flatMap((kit) => [...(kit.resultLimits ?? [])])),
    new Map(toolkits.flatMap((kit) => [...(kit.resultFileLimits ?? [])]))
  )
