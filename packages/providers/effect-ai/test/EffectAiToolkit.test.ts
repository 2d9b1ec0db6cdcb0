/**
 * An `effect/ai` `Toolkit` (tools and handlers, as a team on Effect writes
 * them) in a chat-ts `Chat`, the model a scripted `effect/ai` model
 * (`LanguageModel.make`) through the bridge: `needsApproval` decides each
 * call, failing closed; the handlers run the approved calls; edits are
 * checked against the tool's Schema; what the model is sent.
 */
import { Chat, ChatOutcome, Messages, PauseReason } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as AiLanguageModel from "effect/ai/LanguageModel"
import type * as Prompt from "effect/ai/Prompt"
import type * as AiResponse from "effect/ai/Response"
import * as AiTool from "effect/ai/Tool"
import * as AiToolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { EffectAi, EffectAiToolkit } from "../src/index.js"
import * as Scripted from "./support/scripted.js"

const GetWeather = AiTool.make("get_weather", {
  description: "The weather in a city.",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ celsius: Schema.Number })
})
const SendEmail = AiTool.make("send_email", {
  description: "Send an email.",
  parameters: Schema.Struct({ to: Schema.String.check(Schema.isPattern(/^[^@\s]+@[^@\s]+$/)), subject: Schema.String }),
  success: Schema.Struct({ sent: Schema.Boolean }),
  needsApproval: true
})
const Transfer = AiTool.make("transfer", {
  description: "Move money.",
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.Struct({ moved: Schema.Number }),
  failure: Schema.Struct({ reason: Schema.String }),
  needsApproval: (params) => params.amount > 100
})
const Quiet = AiTool.make("quiet", { description: "Never asks.", parameters: Schema.Struct({}), needsApproval: false })

/** Every run of a handler: its tool and parameters. */
type Runs = Array<{ readonly tool: string; readonly params: unknown }>

const kit = AiToolkit.make(GetWeather, SendEmail, Transfer, Quiet)
const handlers = (runs: Runs) =>
  kit.toLayer({
    get_weather: (params) => Effect.sync(() => (runs.push({ tool: "get_weather", params }), { celsius: 21 })),
    send_email: (params) => Effect.sync(() => (runs.push({ tool: "send_email", params }), { sent: true })),
    transfer: (params) =>
      Effect.suspend(() => {
        runs.push({ tool: "transfer", params })
        return params.amount > 1000 ? Effect.fail({ reason: "over the limit" }) : Effect.succeed({ moved: params.amount })
      }),
    quiet: () => Effect.sync(() => void runs.push({ tool: "quiet", params: {} }))
  })

type Call = { readonly id: string; readonly name: string; readonly params: unknown }

/** A model that asks for `calls` first, then answers with the tool results it was sent. */
const modelAsking = (calls: ReadonlyArray<Call>) =>
  Scripted.make((options, index): Scripted.Reply => {
    if (index === 0) return [...calls.map((call): AiResponse.PartEncoded => ({ type: "tool-call", ...call })), Scripted.finish("tool-calls")]
    const results = options.prompt.content.flatMap((message) =>
      message.role === "tool" ? message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result") : []
    )
    return [{ type: "text", text: `results: ${JSON.stringify(results.map((part) => [part.id, part.isFailure, part.result]))}` }, Scripted.finish("stop")]
  })

/** A chat over the effect/ai toolkit and a scripted effect/ai model. */
const chatWith = <Tools extends Record<string, AiTool.Any>>(
  toolkit: AiToolkit.Toolkit<Tools>,
  model: Scripted.Scripted,
  aiHandlers: Layer.Layer<EffectAiToolkit.HandlersContext<Tools>>
) =>
  Chat.make({ tools: EffectAiToolkit.fromToolkit(toolkit) }).pipe(
    Effect.provide(Layer.mergeAll(
      EffectAi.layer().pipe(Layer.provide(model.layer)),
      EffectAiToolkit.layer(toolkit).pipe(Layer.provide(aiHandlers))
    ))
  )

const statusOf = (messages: Messages.Messages, id: string) => Messages.findTool(messages, id)?.status

const pausedOn = (result: { readonly outcome: ChatOutcome.ChatOutcome<unknown> }): ReadonlyArray<string> =>
  ChatOutcome.isPaused(result.outcome) ? PauseReason.toolIds(result.outcome.reason) : []

describe("EffectAiToolkit: needsApproval as chat-ts strategies", () => {
  it.effect("true asks a person, false or none runs, a function decides per call", () =>
    Effect.gen(function*() {
      const runs: Runs = []
      const model = modelAsking([
        { id: "w", name: "get_weather", params: { city: "Paris" } },
        { id: "e", name: "send_email", params: { to: "ann@example.com", subject: "hi" } },
        { id: "small", name: "transfer", params: { amount: 50 } },
        { id: "big", name: "transfer", params: { amount: 500 } },
        { id: "q", name: "quiet", params: {} }
      ])
      const chat = yield* chatWith(kit, model, handlers(runs))
      const first = yield* chat.complete(Messages.fromUser("Go."))
      expect(pausedOn(first)).toEqual(["e", "big"])
      expect(statusOf(first.messages, "w")).toMatchObject({ _tag: "Completed", result: { celsius: 21 } })
      expect(statusOf(first.messages, "small")).toMatchObject({ _tag: "Completed", result: { moved: 50 } })
      expect(statusOf(first.messages, "q")?._tag).toBe("Completed")
      expect(runs.map((run) => run.tool)).toEqual(["get_weather", "transfer", "quiet"])

      const approved = yield* chat.approve(first.messages, "e")
      const rejected = yield* chat.reject(approved, "big", "too much")
      const done = yield* chat.resume(rejected)
      expect(ChatOutcome.isComplete(done.outcome)).toBe(true)
      expect(runs.map((run) => run.tool)).toEqual(["get_weather", "transfer", "quiet", "send_email"])
      // The model was sent every result and the rejection, as tool results.
      const sent = model.calls[1]!.prompt.content.flatMap((message) => message.role === "tool" ? message.content : [])
      expect(sent.map((part) => part.type === "tool-result" ? [part.id, part.isFailure] : part.type)).toEqual([
        ["w", false],
        ["e", false],
        ["small", false],
        ["big", true],
        ["q", false]
      ])
    }))

  it.effect("a needsApproval that fails, dies, throws or answers no boolean asks a person (Effect's own loop would run the call)", () =>
    Effect.gen(function*() {
      const make = (name: string, needsApproval: AiTool.NeedsApprovalFunction<Schema.Struct<{}>>) =>
        AiTool.make(name, { description: `The ${name} tool.`, parameters: Schema.Struct({}), success: Schema.String, needsApproval })
      const Fails = make("fails", () => Effect.fail("the policy service is down") as unknown as Effect.Effect<boolean>)
      const Dies = make("dies", () => Effect.die(new Error("boom")))
      const Throws = make("throws", () => {
        throw new Error("thrown")
      })
      const NotBoolean = make("not_boolean", () => "yes" as unknown as boolean)
      const risky = AiToolkit.make(Fails, Dies, Throws, NotBoolean)
      const runs: Runs = []
      const riskyHandlers = risky.toLayer({
        fails: () => Effect.sync(() => (runs.push({ tool: "fails", params: {} }), "ran")),
        dies: () => Effect.sync(() => (runs.push({ tool: "dies", params: {} }), "ran")),
        throws: () => Effect.sync(() => (runs.push({ tool: "throws", params: {} }), "ran")),
        not_boolean: () => Effect.sync(() => (runs.push({ tool: "not_boolean", params: {} }), "ran"))
      })
      const calls = ["fails", "dies", "throws", "not_boolean"].map((name) => ({ id: name, name, params: {} }))

      const chat = yield* chatWith(risky, modelAsking(calls), riskyHandlers)
      const first = yield* chat.complete(Messages.fromUser("Go."))
      expect(pausedOn(first)).toEqual(["fails", "dies", "throws", "not_boolean"])
      expect(runs).toEqual([])

      // The same toolkit in Effect's own loop: a failing needsApproval reads as "no approval needed", and the call runs.
      const own = yield* Effect.gen(function*() {
        const model = yield* AiLanguageModel.LanguageModel
        return yield* model.generateText({ prompt: "Go.", toolkit: risky })
      }).pipe(Effect.provide(Layer.merge(modelAsking([calls[0]!]).layer, riskyHandlers)))
      expect(own.toolResults.map((part) => part.name)).toEqual(["fails"])
      expect(runs.map((run) => run.tool)).toEqual(["fails"])
    }))

  it.effect("the strategy alone: needsApproval per call, with the tool's parameters", () =>
    Effect.gen(function*() {
      const decide = (tool: AiTool.Any, params: unknown) => EffectAiToolkit.needsApproval(tool, params, "c1")
      expect(yield* decide(GetWeather, { city: "Paris" })).toBe(false)
      expect(yield* decide(Quiet, {})).toBe(false)
      expect(yield* decide(SendEmail, { to: "a@b.c", subject: "x" })).toBe(true)
      expect(yield* decide(Transfer, { amount: 100 })).toBe(false)
      expect(yield* decide(Transfer, { amount: 101 })).toBe(true)
      const effectful = GetWeather.setNeedsApproval((params) => Effect.succeed(params.city === "Mordor"))
      expect(yield* decide(effectful, { city: "Mordor" })).toBe(true)
      expect(yield* decide(effectful, { city: "Paris" })).toBe(false)
      const odd = GetWeather.setNeedsApproval("always" as unknown as boolean)
      expect(yield* decide(odd, { city: "Paris" })).toBe(true)
    }))
})

describe("EffectAiToolkit: handlers and edits", () => {
  it.effect("a handler's failure is the call's failure, in both failure modes; only the final result counts", () =>
    Effect.gen(function*() {
      const Progress = AiTool.make("progress", {
        description: "Reports progress, then a result.",
        parameters: Schema.Struct({ steps: Schema.Number }),
        success: Schema.Struct({ done: Schema.Number })
      })
      const Returns = AiTool.make("returns", {
        description: "Fails into its result.",
        parameters: Schema.Struct({}),
        failure: Schema.Struct({ why: Schema.String }),
        failureMode: "return"
      })
      const Invalid = AiTool.make("invalid", {
        description: "Returns what its success Schema refuses.",
        parameters: Schema.Struct({}),
        success: Schema.Struct({ n: Schema.Number })
      })
      const toolkit = AiToolkit.make(Progress, Returns, Invalid)
      const layer = toolkit.toLayer({
        progress: ({ steps }, context) =>
          Effect.gen(function*() {
            for (let step = 1; step < steps; step++) yield* context.preliminary({ done: step })
            return { done: steps }
          }),
        returns: () => Effect.fail({ why: "no reason" }),
        invalid: () => Effect.succeed({ n: "one" } as unknown as { n: number })
      })
      const model = modelAsking([
        { id: "p", name: "progress", params: { steps: 3 } },
        { id: "r", name: "returns", params: {} },
        { id: "i", name: "invalid", params: {} }
      ])
      const chat = yield* chatWith(toolkit, model, layer)
      const result = yield* chat.complete(Messages.fromUser("Go."))
      expect(ChatOutcome.isComplete(result.outcome)).toBe(true)
      expect(statusOf(result.messages, "p")).toMatchObject({ _tag: "Completed", result: { done: 3 } })
      expect(statusOf(result.messages, "r")).toMatchObject({ _tag: "Failed", error: { why: "no reason" } })
      expect(statusOf(result.messages, "i")).toMatchObject({ _tag: "Failed", error: expect.stringContaining("invalid") })
    }))

  it.effect("a typed failure of a tool in the error mode reaches the model as the call's error", () =>
    Effect.gen(function*() {
      const runs: Runs = []
      const chat = yield* chatWith(kit, modelAsking([{ id: "x", name: "transfer", params: { amount: 5000 } }]), handlers(runs))
      const first = yield* chat.complete(Messages.fromUser("Go."))
      const done = yield* chat.resume(yield* chat.approve(first.messages, "x"))
      expect(statusOf(done.messages, "x")).toMatchObject({ _tag: "Failed", error: { reason: "over the limit" } })
      expect(runs).toEqual([{ tool: "transfer", params: { amount: 5000 } }])
    }))

  it.effect("an edit is checked against the tool's Schema; the call runs once, with the edited arguments", () =>
    Effect.gen(function*() {
      const runs: Runs = []
      const model = modelAsking([{ id: "e", name: "send_email", params: { to: "ann@example.com", subject: "hi" } }])
      const chat = yield* chatWith(kit, model, handlers(runs))
      const first = yield* chat.complete(Messages.fromUser("Go."))
      const refused = yield* Effect.result(chat.approve(first.messages, "e", { to: "not an address", subject: "hi" }))
      expect(Result.isFailure(refused) && refused.failure._tag).toBe("InvalidEditedArguments")
      const edited = yield* chat.approve(first.messages, "e", { to: "bob@example.com", subject: "hello" })
      const done = yield* chat.resume(edited)
      expect(ChatOutcome.isComplete(done.outcome)).toBe(true)
      expect(runs).toEqual([{ tool: "send_email", params: { to: "bob@example.com", subject: "hello" } }])
      expect(statusOf(done.messages, "e")).toMatchObject({ _tag: "Completed", result: { sent: true } })
      // A second resume never runs it again.
      yield* chat.resume(done.messages)
      expect(runs).toHaveLength(1)
    }))

  it.effect("streams the same turn, paused on the call that needs approval", () =>
    Effect.gen(function*() {
      const runs: Runs = []
      const model = modelAsking([
        { id: "w", name: "get_weather", params: { city: "Oslo" } },
        { id: "e", name: "send_email", params: { to: "ann@example.com", subject: "hi" } }
      ])
      const chat = yield* chatWith(kit, model, handlers(runs))
      const events = yield* Stream.runCollect(chat.stream(Messages.fromUser("Go.")))
      expect(events.at(-1)?._tag).toBe("Paused")
      expect(runs.map((run) => run.tool)).toEqual(["get_weather"])
      expect(model.calls[0]!.mode).toBe("stream")
    }))
})

describe("EffectAiToolkit: declarations", () => {
  it.effect("a tool's Schema becomes the declared JSON Schema; a dynamic tool's raw JSON Schema is sent as it is, not strict", () =>
    Effect.gen(function*() {
      const parameters = {
        type: "object",
        properties: { query: { type: "string", minLength: 1 }, limit: { type: "integer" } },
        required: ["query"]
      }
      const Search = AiTool.dynamic("search", { description: "Search the web.", parameters })
      const toolkit = AiToolkit.make(GetWeather, Search)
      const tools = EffectAiToolkit.fromToolkit(toolkit)
      const weather = tools.tools["get_weather"]!
      expect(weather.declaration.name).toBe("get_weather")
      expect(weather.declaration.description).toBe("The weather in a city.")
      expect(weather.declaration.parameters).toMatchObject({ type: "object", properties: { city: { type: "string" } }, required: ["city"] })
      expect(weather.metadata.tool).toBe(GetWeather)
      expect(tools.tools["search"]!.declaration).toEqual({ name: "search", description: "Search the web.", parameters, strict: false })

      // Through the bridge, the model gets the same JSON Schemas.
      const model = Scripted.make(() => [{ type: "text", text: "ok" }, Scripted.finish("stop")])
      const chat = yield* chatWith(toolkit, model, toolkit.toLayer({ get_weather: () => Effect.succeed({ celsius: 1 }), search: () => Effect.succeed("r") }))
      yield* chat.complete(Messages.fromUser("Hi"))
      const sent = model.calls[0]!.tools.map((tool) => [tool.name, AiTool.getJsonSchema(tool)])
      expect(sent).toEqual(chat.tools.map((tool) => [tool.name, tool.parameters]))
      expect(AiTool.getJsonSchema(model.calls[0]!.tools.find((tool) => tool.name === "search")!)).toEqual(parameters)
    }))

  it.effect("a strict annotation is kept", () =>
    Effect.sync(() => {
      const loose = GetWeather.annotate(AiTool.Strict, false)
      expect(EffectAiToolkit.fromTool(loose).declaration.strict).toBe(false)
      expect(EffectAiToolkit.fromTool(GetWeather).strict).toBeUndefined()
    }))
})
