/**
 * The provider conformance suite: one set of scenarios every `LanguageModel`
 * layer must pass, each run against the provider's real SDK talking to a
 * loopback `ReplayServer` that serves the provider's own recorded answers.
 *
 * A provider gives a `Harness`: how to build its layer against a server, its
 * fixtures (a reply per scenario and what it holds: the text, the calls, the
 * usage), and small checks of its own request format. The suite checks the
 * rest: what the layer made of each answer, what it sent (the user's text,
 * the tools, tool results, a rejection's reason, edited arguments — found in
 * the recorded request bodies whatever their shape), the pause / approve /
 * resume flow through `Chat`, streaming, and that every failure is the right
 * typed `ChatError`.
 *
 * `scenarios(harness)` lists them as data (a name and an Effect each);
 * `register(harness, { describe, it })` registers them with a test runner such
 * as `@effect/vitest`, so this module needs none.
 *
 * @since 0.1.0
 */
import * as assert from "node:assert/strict"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Action from "../turn/Action.js"
import * as Chat from "../chat/Chat.js"
import * as ChatError from "../data/ChatError.js"
import * as LanguageModel from "../model/LanguageModel.js"
import * as Messages from "../turn/Messages.js"
import * as Tool from "../tools/Tool.js"
import * as Toolkit from "../tools/Toolkit.js"
import type { Usage } from "../data/Usage.js"
import * as Wire from "./internal/wire.js"
import * as ReplayServer from "./ReplayServer.js"

// ---------------------------------------------------------------------------
// The harness a provider gives
// ---------------------------------------------------------------------------

/**
 * What the suite asks of the layer it builds for a scenario.
 *
 * @category models
 * @since 0.1.0
 */
export interface ModelSettings {
  /** `false`: no retries at all; `true`: the provider's default retry policy. */
  readonly retry: boolean
  /** The longest wait between two events of a stream (and for the first), past which the stream fails with a `NetworkError`. */
  readonly idleTimeout: Duration.Duration
}

/**
 * What a provider supports beyond the basics (which every provider must pass).
 *
 * @category models
 * @since 0.1.0
 */
export interface Capabilities {
  /** Streamed tool calls arrive as `ToolCallStart` then `ToolCallDelta` fragments (not only as whole parts). */
  readonly toolArgumentDeltas: boolean
  /** `options.responseFormat` is honoured (needs `fixtures.structured`). */
  readonly structuredOutput: boolean
  /** Reasoning comes back as Reasoning parts and is sent back in the tool loop (needs `fixtures.reasoning`). */
  readonly reasoningRoundTrip: boolean
}

/**
 * A call a fixture holds. `arguments` is the JSON object of its arguments.
 *
 * @category models
 * @since 0.1.0
 */
export interface ExpectedCall {
  readonly name: string
  readonly arguments: { readonly [key: string]: unknown }
  /** The call id, when the wire carries one (a layer that makes ids up leaves this out). */
  readonly id?: string
}

/**
 * A recorded text answer and what it holds.
 *
 * @category models
 * @since 0.1.0
 */
export interface TextAnswer {
  readonly reply: ReplayServer.Reply
  /** The whole text of the answer. */
  readonly text: string
  /** The usage it reports (the fields given are checked; give at least the input and output tokens). */
  readonly usage: Partial<Usage>
}

/**
 * A recorded answer asking for tool calls and what it holds.
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolCallsAnswer {
  readonly reply: ReplayServer.Reply
  /** The calls, in order. */
  readonly calls: ReadonlyArray<ExpectedCall>
  readonly usage?: Partial<Usage>
  /** The edited arguments a person gives the first call (default: its first string with " (edited)" appended). */
  readonly edit?: { readonly [key: string]: unknown }
}

/**
 * A recorded structured answer: the JSON value of its text.
 *
 * @category models
 * @since 0.1.0
 */
export interface StructuredAnswer {
  readonly reply: ReplayServer.Reply
  /** The response format asked for (its schema's property names must show up in the request). */
  readonly format: LanguageModel.ResponseFormat
  /** The JSON value the answer's text holds. */
  readonly value: unknown
}

/**
 * A recorded answer holding reasoning and one tool call, then a text answer to send the call's result to.
 *
 * @category models
 * @since 0.1.0
 */
export interface ReasoningAnswer {
  readonly reply: ReplayServer.Reply
  /** Whether `reply` answers a stream request (`model.stream`) rather than `generate`. */
  readonly streamed: boolean
  readonly call: ExpectedCall
  /** The answer after the call's result was sent (served to `generate`). */
  readonly then: ReplayServer.Reply
}

/**
 * The recorded traffic a provider serves to itself.
 *
 * @category models
 * @since 0.1.0
 */
export interface Fixtures {
  /** A text answer to `generate`. */
  readonly text: TextAnswer
  /** A text answer to `stream` (an SSE body of several events). */
  readonly streamText: TextAnswer
  /** One tool call, answering `generate`. */
  readonly toolCall: ToolCallsAnswer
  /** One tool call, answering `stream`. */
  readonly streamToolCall: ToolCallsAnswer
  /** Two (or more) calls in one answer to `generate`. */
  readonly parallelToolCalls: ToolCallsAnswer
  /** Two (or more) calls in one answer to `stream`. */
  readonly streamParallelToolCalls: ToolCallsAnswer
  /** Needed when `capabilities.structuredOutput`. */
  readonly structured?: StructuredAnswer
  /** Needed when `capabilities.reasoningRoundTrip`. */
  readonly reasoning?: ReasoningAnswer
  /** A 429 asking to wait (`retry-after`), and how long that is. */
  readonly rateLimit: { readonly reply: ReplayServer.Reply; readonly retryAfterMillis: number }
  /** A 5xx. */
  readonly serverError: { readonly reply: ReplayServer.Reply; readonly status: number }
  /** A 401. */
  readonly unauthorized: { readonly reply: ReplayServer.Reply }
  /** A stream body that breaks off (default: the first events of `streamText`, before its end). */
  readonly cutStream?: string
}

/**
 * The tool results the suite sends back, as `Messages.projectToolCall` shows them.
 *
 * @category models
 * @since 0.1.0
 */
export interface ToolResultsSent {
  /** A call approved with edited arguments, run, and its result. */
  readonly completed: Messages.ProjectedToolCall
  /** A call rejected by the user with a reason (its result is the rejection). */
  readonly rejected: Messages.ProjectedToolCall & { readonly reason: string }
}

/**
 * A provider's checks of its own request format; each throws (e.g. with `expect`) when the request is wrong.
 *
 * @category models
 * @since 0.1.0
 */
export interface WireChecks {
  /** The request of a text `generate` (endpoint, model, how the system prompt and the user's text are sent). */
  readonly text?: (request: ReplayServer.Recorded, sent: LanguageModel.Request) => void
  /** The request of a `stream` call (e.g. that it asked for a stream, and for usage). */
  readonly stream?: (request: ReplayServer.Recorded) => void
  /** The request carrying tool results back: the edited call and its result, the rejection and its reason. Required. */
  readonly toolResults: (request: ReplayServer.Recorded, sent: ToolResultsSent) => void
  /** The request asking for structured output. */
  readonly structured?: (request: ReplayServer.Recorded, format: LanguageModel.ResponseFormat) => void
  /** The request sending reasoning back after a tool call. */
  readonly reasoning?: (request: ReplayServer.Recorded, part: Messages.ReasoningPart) => void
  /** The request carrying three calls that did not run (rejected, expired, cancelled, in that order): e.g. each an error result of its own. */
  readonly unrunCalls?: (request: ReplayServer.Recorded) => void
}

/**
 * Everything the suite needs to run a provider.
 *
 * @category models
 * @since 0.1.0
 */
export interface Harness {
  /** The provider's name, for the test titles. */
  readonly name: string
  /** The base path of the replay server's `baseURL` (OpenAI's SDK wants `/v1`; default none). */
  readonly basePath?: string
  /** The layer of the model, talking to the replay server (its `url` or `baseURL`). */
  readonly layer: (server: ReplayServer.ReplayServer, settings: ModelSettings) => Layer.Layer<LanguageModel.LanguageModel>
  /** The API key the layer sends: it must show in no error. */
  readonly apiKey?: string
  readonly capabilities: Capabilities
  readonly fixtures: Fixtures
  readonly wire: WireChecks
}

// ---------------------------------------------------------------------------
// Scenarios as data
// ---------------------------------------------------------------------------

/**
 * One scenario: its group, its name and the Effect that runs it (it fails or
 * dies when the provider does not conform). Run it where a `TestClock` is in
 * place (`it.effect` of `@effect/vitest`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Scenario {
  readonly group: string
  readonly name: string
  readonly run: Effect.Effect<void, unknown, Scope.Scope>
}

/**
 * The idle timeout the suite gives every layer.
 *
 * @category constants
 * @since 0.1.0
 */
export const idleTimeout: Duration.Duration = Duration.seconds(30)

interface Env {
  readonly server: ReplayServer.ReplayServer
  readonly model: (settings?: Partial<ModelSettings>) => Effect.Effect<LanguageModel.Service, never, Scope.Scope>
  readonly layer: (settings?: Partial<ModelSettings>) => Layer.Layer<LanguageModel.LanguageModel>
}

const setup = (harness: Harness): Effect.Effect<Env, never, Scope.Scope> =>
  Effect.map(ReplayServer.make(harness.basePath === undefined ? {} : { basePath: harness.basePath }), (server) => {
    const layer = (settings: Partial<ModelSettings> = {}) =>
      harness.layer(server, { retry: settings.retry ?? false, idleTimeout: settings.idleTimeout ?? idleTimeout })
    return {
      server,
      layer,
      model: (settings) => Effect.map(Layer.build(layer(settings)), Context.get(LanguageModel.LanguageModel))
    }
  })

const system = "You are a conformance test. Answer briefly."
const question = "What is the capital of France? (conformance question)"
const ask = (tools: ReadonlyArray<LanguageModel.ToolDeclaration> = [], options: LanguageModel.Options = {}): LanguageModel.Request => ({
  messages: [Messages.system(system), Messages.user(question)],
  tools,
  options
})

const declarationOf = (call: ExpectedCall): LanguageModel.ToolDeclaration => {
  const tool = toolOf(call)
  return tool.declaration
}

const toolOf = (call: ExpectedCall): Tool.Any =>
  Tool.make(call.name, {
    description: `The conformance suite's ${call.name} tool.`,
    parameters: Schema.Struct(Wire.fieldsOf(call.arguments)),
    success: Schema.Unknown
  }) as unknown as Tool.Any

/** Who cancelled the third of `unrunCalls`: the audit record, which the model must not read. */
const unrunAuditor = "ops-erin-conformance"

/** A conversation whose three calls ended without running: rejected with a reason, expired, cancelled by an operator. */
const unrunCalls: Messages.Messages = [
  Messages.system(system),
  Messages.user("Pay, email and delete. (conformance)"),
  Messages.assistant([
    { ...Messages.toolCall({ id: "call_rejected", name: "pay", arguments: "{}" }), status: { _tag: "Rejected", by: "user", reason: "too much" } },
    { ...Messages.toolCall({ id: "call_expired", name: "email", arguments: "{}" }), status: { _tag: "Expired", expiresAt: 1_000 } },
    {
      ...Messages.toolCall({ id: "call_cancelled", name: "remove", arguments: "{}" }),
      status: { _tag: "Cancelled", by: "operator", reason: "duplicate", cancellation: { by: unrunAuditor, at: 5 } }
    }
  ])
]

const unrunTools = (): ReadonlyArray<LanguageModel.ToolDeclaration> =>
  ["pay", "email", "remove"].map((name) => declarationOf({ name, arguments: {} }))

const uniqueCalls = (calls: ReadonlyArray<ExpectedCall>): ReadonlyArray<ExpectedCall> =>
  calls.filter((call, i) => calls.findIndex((other) => other.name === call.name) === i)

const declarations = (answer: ToolCallsAnswer) => uniqueCalls(answer.calls).map(declarationOf)

const bodyOf = (server: ReplayServer.ReplayServer, index: number): unknown => {
  const request = server.requests[index]
  assert.ok(request !== undefined, `the provider sent ${server.requests.length} request(s); expected request #${index + 1}`)
  return request.body
}

const checkUsage = (usage: Usage, expected: Partial<Usage> | undefined, what: string) => {
  if (expected === undefined) return
  for (const [key, value] of Object.entries(expected)) {
    assert.equal(usage[key as keyof Usage], value, `${what}: usage.${key}`)
  }
}

const checkCalls = (parts: ReadonlyArray<Messages.Part>, expected: ReadonlyArray<ExpectedCall>, what: string) => {
  const calls = parts.filter((part): part is Messages.ToolCallPart => part._tag === "ToolCall")
  assert.deepEqual(calls.map((call) => call.name), expected.map((call) => call.name), `${what}: the calls' names, in order`)
  for (const [i, call] of calls.entries()) {
    const want = expected[i]!
    assert.ok(call.id.length > 0, `${what}: call ${i} has an id`)
    if (want.id !== undefined) assert.equal(call.id, want.id, `${what}: call ${i}'s id`)
    assert.deepEqual(JSON.parse(call.arguments), want.arguments, `${what}: call ${i}'s arguments`)
    assert.equal(call.status._tag, "Proposed", `${what}: a new call is Proposed`)
  }
  assert.equal(new Set(calls.map((call) => call.id)).size, calls.length, `${what}: every call has its own id`)
}

const textOf = (parts: ReadonlyArray<Messages.Part>): string =>
  parts.flatMap((part) => (part._tag === "Text" ? [part.text] : [])).join("")

const checkSentTools = (body: unknown, answer: ToolCallsAnswer) => {
  for (const declaration of declarations(answer)) {
    assert.ok(Wire.containsText(body, declaration.name), `the tool ${declaration.name} is declared on the wire`)
    assert.ok(Wire.containsText(body, declaration.description), `the description of ${declaration.name} is sent`)
    const props = Object.keys((declaration.parameters as { readonly properties?: object }).properties ?? {})
    assert.ok(Wire.containsSchemaWith(body, props), `the parameters of ${declaration.name} (${props.join(", ")}) are sent as a JSON Schema`)
  }
}

const checkSentQuestion = (body: unknown) => {
  assert.ok(Wire.containsText(body, system), "the system prompt is sent")
  assert.ok(Wire.containsText(body, question), "the user's text is sent")
}

const noKey = (harness: Harness, error: unknown) => {
  const key = harness.apiKey
  if (key === undefined) return
  for (const text of [error instanceof Error ? error.message : "", String(error), JSON.stringify(error)]) {
    assert.ok(!text.includes(key), `the API key shows in an error: ${text}`)
  }
}

const expectModelError = (
  harness: Harness,
  error: unknown,
  tag: ChatError.ModelError["_tag"],
  what: string
): ChatError.ModelError => {
  assert.ok(
    error !== null && typeof error === "object" && "_tag" in error && error._tag === tag,
    `${what}: expected a ${tag}, got ${error instanceof Error ? `${String((error as { _tag?: unknown })._tag)}: ${error.message}` : JSON.stringify(error)}`
  )
  noKey(harness, error)
  return error as ChatError.ModelError
}

const failure = <A, E, R>(self: Effect.Effect<A, E, R>, what: string): Effect.Effect<E, never, R> =>
  Effect.flatMap(Effect.result(self), (result) =>
    Result.isFailure(result) ? Effect.succeed(result.failure) : Effect.die(new Error(`${what}: expected a failure, got a success`)))

const replyBody = (reply: ReplayServer.Reply): string => reply.body

const sseHeaders = (reply: ReplayServer.Reply): Readonly<Record<string, string>> => reply._tag === "Body" ? reply.headers : {}

// ---------------------------------------------------------------------------
// Tools for the Chat scenarios: derived from the fixture's calls
// ---------------------------------------------------------------------------

interface Ran {
  readonly name: string
  readonly params: unknown
}

const resultOf = (name: string) => ({ conformance: `the result of ${name}`, ok: true })

const toolkitOf = (answer: ToolCallsAnswer, approval: boolean, ran: Array<Ran>) => {
  const tools = uniqueCalls(answer.calls).map(toolOf)
  const base = Toolkit.make(...tools) as unknown as Toolkit.Toolkit<Record<string, Tool.Any>>
  const kit = approval ? base.withStrategy(() => Action.RequireApproval()) : base
  const handlers = Object.fromEntries(tools.map((tool) => [
    tool.name,
    (params: unknown) => Effect.sync(() => {
      ran.push({ name: tool.name, params })
      return resultOf(tool.name)
    })
  ]))
  return { kit, handlers: kit.toLayer(handlers as never) as Layer.Layer<Tool.Handler<string>> }
}

/** How a turn ended and its messages. */
interface Ended {
  readonly ended: "Paused" | "Complete"
  readonly messages: Messages.Messages
}

/** Runs a turn with `complete`. */
const completedTurn = (chat: Chat.Service, messages: Messages.Messages) =>
  Effect.map(chat.complete(messages), (result): Ended => ({ ended: result.outcome._tag, messages: result.messages }))

/** Runs a turn with `stream`: how it ended and its messages, from its last event. */
const streamedTurn = (chat: Chat.Service, messages: Messages.Messages) =>
  Effect.flatMap(Stream.runCollect(chat.stream(messages)), (events) => {
    const list = Array.from(events)
    const last = list[list.length - 1]
    if (last?._tag === "Paused") return Effect.succeed<Ended>({ ended: "Paused", messages: last.messages })
    if (last?._tag === "Completed") return Effect.succeed<Ended>({ ended: "Complete", messages: last.messages })
    return Effect.die(new Error(`a streamed turn ended with ${last?._tag ?? "no event"}`))
  })

// ---------------------------------------------------------------------------
// The scenarios
// ---------------------------------------------------------------------------

/**
 * The scenarios a harness runs (those its capabilities do not cover are left out).
 *
 * @category scenarios
 * @since 0.1.0
 */
export const scenarios = (harness: Harness): ReadonlyArray<Scenario> => {
  const f = harness.fixtures
  const out: Array<Scenario> = []
  const add = (group: string, name: string, run: (env: Env) => Effect.Effect<void, unknown, Scope.Scope>) =>
    out.push({ group, name, run: Wire.watchingSleeps(Effect.flatMap(setup(harness), run)) })

  // -- generate --------------------------------------------------------------
  add("generate", "text: one text part, finish stop, usage; the system prompt and the user's text are sent", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.text.reply)
      const model = yield* env.model()
      const sent = ask()
      const response = yield* model.generate(sent)
      assert.equal(textOf(response.parts), f.text.text, "the answer's text")
      assert.ok(response.parts.every((part) => part._tag !== "ToolCall"), "no tool call in a text answer")
      assert.equal(response.finishReason, "stop")
      checkUsage(response.usage, f.text.usage, "text")
      assert.equal(env.server.requests.length, 1)
      checkSentQuestion(bodyOf(env.server, 0))
      harness.wire.text?.(env.server.requests[0]!, sent)
    }))

  add("generate", "one tool call: the tools are declared on the wire; the call comes back with id, name and arguments", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.toolCall.reply)
      const model = yield* env.model()
      const response = yield* model.generate(ask(declarations(f.toolCall)))
      checkCalls(response.parts, f.toolCall.calls, "one tool call")
      assert.equal(response.finishReason, "tool-calls")
      checkUsage(response.usage, f.toolCall.usage, "one tool call")
      checkSentTools(bodyOf(env.server, 0), f.toolCall)
    }))

  add("generate", "parallel calls: every call, in order, each with its own id", (env) =>
    Effect.gen(function*() {
      assert.ok(f.parallelToolCalls.calls.length >= 2, "the parallel fixture holds two calls or more")
      env.server.enqueue(f.parallelToolCalls.reply)
      const model = yield* env.model()
      const response = yield* model.generate(ask(declarations(f.parallelToolCalls)))
      checkCalls(response.parts, f.parallelToolCalls.calls, "parallel calls")
      assert.equal(response.finishReason, "tool-calls")
      checkSentTools(bodyOf(env.server, 0), f.parallelToolCalls)
    }))

  // -- stream ----------------------------------------------------------------
  add("stream", "text: several deltas in order, then one Finish with usage, last", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.streamText.reply)
      const model = yield* env.model()
      const parts = Array.from(yield* Stream.runCollect(model.stream(ask())))
      const deltas = parts.filter((part) => part._tag === "TextDelta")
      assert.ok(deltas.length >= 2, `the text arrives in several deltas (got ${deltas.length})`)
      assert.equal(deltas.map((part) => part.text).join(""), f.streamText.text, "the deltas join into the text")
      const finishes = parts.filter((part) => part._tag === "Finish")
      assert.equal(finishes.length, 1, "one Finish")
      assert.equal(parts[parts.length - 1]!._tag, "Finish", "the Finish comes last")
      assert.equal(finishes[0]!.finishReason, "stop")
      checkUsage(finishes[0]!.usage, f.streamText.usage, "streamed text")
      checkSentQuestion(bodyOf(env.server, 0))
      harness.wire.stream?.(env.server.requests[0]!)
    }))

  const streamedCalls = (answer: ToolCallsAnswer, what: string) => (env: Env) =>
    Effect.gen(function*() {
      env.server.enqueue(answer.reply)
      const model = yield* env.model()
      const parts = Array.from(yield* Stream.runCollect(model.stream(ask(declarations(answer)))))
      if (harness.capabilities.toolArgumentDeltas) {
        for (const call of answer.calls) {
          const start = parts.findIndex((part) => part._tag === "ToolCallStart" && part.name === call.name)
          assert.ok(start >= 0, `${what}: a ToolCallStart for ${call.name}`)
          const id = (parts[start] as { readonly id: string }).id
          const fragments = parts.filter((part, i) => i > start && part._tag === "ToolCallDelta" && part.id === id)
          assert.ok(fragments.length >= 1, `${what}: argument deltas for ${call.name} after its start`)
        }
      }
      const finish = parts[parts.length - 1]
      assert.equal(finish?._tag, "Finish", `${what}: the Finish comes last`)
      const acc = new LanguageModel.Accumulator()
      for (const part of parts) acc.add(part)
      const response = acc.response()!
      checkCalls(response.parts, answer.calls, what)
      assert.equal(response.finishReason, "tool-calls")
      checkUsage(response.usage, answer.usage, what)
      harness.wire.stream?.(env.server.requests[0]!)
    })
  add("stream", "one tool call: its start, argument deltas, then Finish; collected into the call", streamedCalls(f.streamToolCall, "one streamed call"))
  add("stream", "parallel calls: every call started and completed, in order", streamedCalls(f.streamParallelToolCalls, "streamed parallel calls"))

  const chatDeltas = (answer: ToolCallsAnswer, what: string) => (env: Env) =>
    Effect.gen(function*() {
      env.server.enqueue(answer.reply)
      const { handlers, kit } = toolkitOf(answer, true, [])
      const chat = yield* Chat.make({ tools: kit, system }).pipe(Effect.provide(Layer.merge(env.layer(), handlers)))
      const events = Array.from(yield* Stream.runCollect(chat.stream(Messages.fromUser(question))))
      const last = events[events.length - 1]
      assert.equal(last?._tag, "Paused", `${what}: the turn pauses on the calls`)
      const calls = Messages.toolCallsOf(Messages.lastResponse((last as { readonly messages: Messages.Messages }).messages)!)
      assert.equal(calls.length, answer.calls.length, `${what}: every call`)
      for (const call of calls) {
        const own = events.flatMap((event, i) => event._tag === "ToolCallDelta" && event.id === call.id ? [{ event, i }] : [])
        assert.ok(own.some(({ event }) => event.argumentsDelta !== ""), `${what}: ToolCallDelta events with arguments for ${call.id}`)
        assert.ok(own.every(({ event }) => event.name === call.name), `${what}: the deltas of ${call.id} name ${call.name}`)
        assert.equal(own.map(({ event }) => event.argumentsDelta).join(""), call.arguments, `${what}: the deltas join into the arguments`)
        const toolCall = events.findIndex((event) => event._tag === "ToolCall" && event.call.id === call.id)
        assert.ok(toolCall > own[own.length - 1]!.i, `${what}: the deltas of ${call.id} come before its ToolCall event`)
      }
    })
  if (harness.capabilities.toolArgumentDeltas) {
    add("stream", "Chat.stream: ToolCallDelta events of one call, joining into its arguments, before its ToolCall", chatDeltas(f.streamToolCall, "one streamed call"))
    add("stream", "Chat.stream: ToolCallDelta events of parallel calls, each joining into its arguments", chatDeltas(f.streamParallelToolCalls, "streamed parallel calls"))
  }

  // -- the tool loop through Chat ---------------------------------------------
  add("tool loop", "Chat runs the call and sends its result back; the turn completes with the next answer", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.toolCall.reply, f.text.reply)
      const ran: Array<Ran> = []
      const { handlers, kit } = toolkitOf(f.toolCall, false, ran)
      const chat = yield* Chat.make({ tools: kit, system }).pipe(Effect.provide(Layer.merge(env.layer(), handlers)))
      const result = yield* chat.complete(Messages.fromUser(question))
      assert.equal(result.outcome._tag, "Complete", "the turn completes")
      assert.deepEqual(ran, f.toolCall.calls.map((call) => ({ name: call.name, params: call.arguments })), "the handler ran once with the call's arguments")
      assert.equal(Messages.textOf(Messages.lastResponse(result.messages)!), f.text.text, "the final answer")
      assert.equal(env.server.requests.length, 2)
      const body = bodyOf(env.server, 1)
      assert.ok(Wire.containsValue(body, resultOf(f.toolCall.calls[0]!.name)), "the call's result is sent back")
      assert.ok(Wire.containsValue(body, f.toolCall.calls[0]!.arguments), "the call itself is sent back with its arguments")
      checkSentQuestion(body)
    }))

  const hitl = (streamed: boolean) => (env: Env) =>
    Effect.gen(function*() {
      const calls = streamed ? f.streamParallelToolCalls : f.parallelToolCalls
      const final = streamed ? f.streamText : f.text
      env.server.enqueue(calls.reply, final.reply)
      const ran: Array<Ran> = []
      const { handlers, kit } = toolkitOf(calls, true, ran)
      const chat = yield* Chat.make({ tools: kit, system }).pipe(Effect.provide(Layer.merge(env.layer(), handlers)))
      const turn = (messages: Messages.Messages) => streamed ? streamedTurn(chat, messages) : completedTurn(chat, messages)

      const first = yield* turn(Messages.fromUser(question))
      assert.equal(first.ended, "Paused", "the turn pauses for approval")
      assert.equal(env.server.requests.length, 1)
      assert.deepEqual(ran, [], "nothing runs before a person decides")
      const pending = Messages.pendingTools(first.messages)
      assert.deepEqual(pending.map((call) => call.name), calls.calls.map((call) => call.name), "every call waits for a decision")

      const [toEdit, toReject, ...others] = pending
      const original = calls.calls[0]!.arguments
      const edit = calls.edit ?? Wire.edited(original)
      assert.ok(edit !== undefined, "the first call has a string or number argument to edit (else give `edit` in the fixture)")
      const reason = "Not today, conformance suite"
      let decided = yield* chat.approve(first.messages, toEdit!.id, edit)
      decided = yield* chat.reject(decided, toReject!.id, reason)
      for (const other of others) decided = yield* chat.approve(decided, other.id)

      const second = yield* turn(decided)
      assert.equal(second.ended, "Complete", "the resumed turn completes")
      assert.equal(Messages.textOf(Messages.lastResponse(second.messages)!), final.text, "the final answer")
      assert.deepEqual(
        ran,
        [{ name: toEdit!.name, params: edit }, ...others.map((call, i) => ({ name: call.name, params: calls.calls[i + 2]!.arguments }))],
        "the edited call ran with the edited arguments; the rejected one did not run"
      )
      assert.equal(env.server.requests.length, 2, "one request to resume")
      const body = bodyOf(env.server, 1)
      checkSentQuestion(body)
      assert.ok(Wire.containsValue(body, edit), "the edited arguments are sent")
      if (!calls.calls.slice(1).some((call) => Wire.containsValue(call.arguments, original))) {
        assert.ok(!Wire.containsValue(body, original), "the original arguments of the edited call are not sent")
      }
      assert.ok(Wire.containsValue(body, resultOf(toEdit!.name)), "the edited call's result is sent")
      assert.ok(Wire.containsText(body, reason), "the rejection's reason is sent")
      const completed = Messages.findTool(second.messages, toEdit!.id)!
      const rejected = Messages.findTool(second.messages, toReject!.id)!
      harness.wire.toolResults(env.server.requests[1]!, {
        completed: Messages.projectToolCall(completed),
        rejected: { ...Messages.projectToolCall(rejected), reason }
      })
    })
  add("tool loop", "pause → approve one call with edited arguments, reject another with a reason → resume → complete (Chat.complete)", hitl(false))
  add("tool loop", "the same flow streamed (Chat.stream)", hitl(true))
  add("tool loop", "calls that did not run (rejected, expired, cancelled) are sent as results the model can tell apart, without the audit record", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.text.reply)
      const model = yield* env.model()
      yield* model.generate({ messages: unrunCalls, tools: unrunTools(), options: {} })
      const body = bodyOf(env.server, 0)
      // What each result tells the model, however the wire carries it (as text, or as the value's strings).
      const texts = unrunCalls[2]!.parts.flatMap((part) =>
        part._tag === "ToolCall"
          ? Wire.nodes(Messages.projectToolCall(part).result!.value).filter((node): node is string => typeof node === "string")
          : []
      )
      assert.equal(new Set(texts).size, 3, "the three calls read differently")
      for (const text of texts) assert.ok(Wire.containsText(body, text), `sent: ${text}`)
      assert.ok(!Wire.containsText(body, unrunAuditor), "who cancelled a call (the audit record) is not sent to the model")
      harness.wire.unrunCalls?.(env.server.requests[0]!)
    }))

  // -- capabilities -------------------------------------------------------------
  const structured = f.structured
  if (harness.capabilities.structuredOutput && structured !== undefined) {
    add("capabilities", "structured output: the schema goes on the wire; the JSON answer comes back as text", (env) =>
      Effect.gen(function*() {
        env.server.enqueue(structured.reply)
        const model = yield* env.model()
        const response = yield* model.generate(ask([], { responseFormat: structured.format }))
        assert.deepEqual(JSON.parse(textOf(response.parts)), structured.value, "the answer's text is the JSON value")
        const body = bodyOf(env.server, 0)
        const props = Object.keys((structured.format.schema as { readonly properties?: object }).properties ?? {})
        assert.ok(Wire.containsSchemaWith(body, props), `the response format's schema (${props.join(", ")}) is sent`)
        harness.wire.structured?.(env.server.requests[0]!, structured.format)
      }))
  } else if (harness.capabilities.structuredOutput) {
    add("capabilities", "structured output", () => Effect.die(new Error("capabilities.structuredOutput needs fixtures.structured")))
  }

  const reasoning = f.reasoning
  if (harness.capabilities.reasoningRoundTrip && reasoning !== undefined) {
    add("capabilities", "reasoning round-trip: reasoning comes back as a Reasoning part and is sent back with the call's result", (env) =>
      Effect.gen(function*() {
        env.server.enqueue(reasoning.reply, reasoning.then)
        const model = yield* env.model()
        const tools = [declarationOf(reasoning.call)]
        const response = reasoning.streamed ? yield* LanguageModel.collect(model.stream(ask(tools))) : yield* model.generate(ask(tools))
        const thought = response.parts.find((part): part is Messages.ReasoningPart => part._tag === "Reasoning")
        assert.ok(thought !== undefined, "a Reasoning part")
        checkCalls(response.parts, [reasoning.call], "reasoning with a call")
        const call = response.parts.find((part): part is Messages.ToolCallPart => part._tag === "ToolCall")!
        const messages: Messages.Messages = [
          Messages.user(question),
          {
            role: "assistant",
            parts: response.parts.map((part) =>
              part._tag === "ToolCall" ? { ...part, status: { _tag: "Completed", result: resultOf(call.name) } } : part
            ),
            usage: response.usage,
            finishReason: response.finishReason,
            ...(response.providerMetadata === undefined ? {} : { providerMetadata: response.providerMetadata })
          }
        ]
        yield* model.generate({ messages: [Messages.system(system), ...messages], tools, options: {} })
        const body = bodyOf(env.server, 1)
        if (thought.signature !== undefined) {
          assert.ok(Wire.containsText(body, thought.signature), "the reasoning's signature is sent back unchanged")
        } else {
          assert.ok(Wire.containsText(body, thought.text), "the reasoning is sent back")
        }
        assert.ok(Wire.containsValue(body, resultOf(call.name)), "the call's result is sent")
        harness.wire.reasoning?.(env.server.requests[1]!, thought)
      }))
  } else if (harness.capabilities.reasoningRoundTrip) {
    add("capabilities", "reasoning round-trip", () => Effect.die(new Error("capabilities.reasoningRoundTrip needs fixtures.reasoning")))
  }

  // -- errors -----------------------------------------------------------------
  add("errors", "429 with retry-after: RateLimited with retryAfterMillis, retryable; without retries sent once", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.rateLimit.reply, f.rateLimit.reply)
      const model = yield* env.model()
      const error = expectModelError(harness, yield* failure(model.generate(ask()), "429"), "RateLimited", "429")
      assert.equal((error as ChatError.RateLimited).retryAfterMillis, f.rateLimit.retryAfterMillis, "retryAfterMillis")
      assert.ok(ChatError.isRetryable(error), "a rate limit is retryable")
      const streamed = yield* failure(Stream.runDrain(model.stream(ask())), "429 on a stream")
      expectModelError(harness, streamed, "RateLimited", "429 on a stream")
      assert.equal(env.server.requests.length, 2)
    }))

  add("errors", "429 with retry-after: the default retry policy waits at least that long (TestClock), then succeeds", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.rateLimit.reply, f.text.reply)
      const model = yield* env.model({ retry: true })
      const fiber = yield* Effect.forkChild(model.generate(ask()))
      yield* env.server.waitForRequests(1)
      yield* Wire.untilSomeoneSleeps("the retry")
      yield* TestClock.adjust(Duration.millis(f.rateLimit.retryAfterMillis - 1))
      yield* Wire.realSleep(30)
      assert.equal(env.server.requests.length, 1, "not sent again before retry-after")
      assert.equal(fiber.pollUnsafe(), undefined, "the call still waits")
      yield* TestClock.adjust("5 minutes")
      const response = yield* Fiber.join(fiber)
      assert.equal(textOf(response.parts), f.text.text)
      assert.equal(env.server.requests.length, 2)
    }))

  add("errors", "5xx: ServerError with the status, retryable (generate and stream)", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.serverError.reply, f.serverError.reply)
      const model = yield* env.model()
      const error = expectModelError(harness, yield* failure(model.generate(ask()), "5xx"), "ServerError", "5xx")
      assert.equal((error as ChatError.ServerError).status, f.serverError.status)
      assert.ok(ChatError.isRetryable(error))
      expectModelError(harness, yield* failure(Stream.runDrain(model.stream(ask())), "5xx on a stream"), "ServerError", "5xx on a stream")
      assert.equal(env.server.requests.length, 2)
    }))

  add("errors", "401: AuthenticationError, never retried (default policy), the API key in no error", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(f.unauthorized.reply, f.unauthorized.reply)
      const model = yield* env.model({ retry: true })
      const error = expectModelError(harness, yield* failure(model.generate(ask()), "401"), "AuthenticationError", "401")
      assert.equal((error as ChatError.AuthenticationError).status, 401)
      assert.ok(!ChatError.isRetryable(error))
      expectModelError(harness, yield* failure(Stream.runDrain(model.stream(ask())), "401 on a stream"), "AuthenticationError", "401 on a stream")
      assert.equal(env.server.requests.length, 2, "sent once each")
    }))

  add("errors", "malformed body: an HTML page or JSON of another shape with status 200 is a MalformedResponse, not retried", (env) =>
    Effect.gen(function*() {
      const html = ReplayServer.body(200, { "content-type": "text/html; charset=utf-8" }, "<!DOCTYPE html><html><body>Back soon.</body></html>")
      env.server.enqueue(html, ReplayServer.json({ unexpected: true }), html)
      const model = yield* env.model({ retry: true })
      expectModelError(harness, yield* failure(model.generate(ask()), "HTML"), "MalformedResponse", "an HTML page")
      expectModelError(harness, yield* failure(model.generate(ask()), "JSON of another shape"), "MalformedResponse", "JSON of another shape")
      expectModelError(harness, yield* failure(LanguageModel.collect(model.stream(ask())), "HTML to a stream"), "MalformedResponse", "an HTML page answering a stream")
      assert.equal(env.server.requests.length, 3, "sent once each")
    }))

  add("errors", "malformed stream: an event whose data is not JSON is a MalformedResponse", (env) =>
    Effect.gen(function*() {
      env.server.enqueue(ReplayServer.sse(Wire.corruptFirstEvent(replyBody(f.streamText.reply)), { headers: sseHeaders(f.streamText.reply) }))
      const model = yield* env.model({ retry: true })
      expectModelError(harness, yield* failure(LanguageModel.collect(model.stream(ask())), "a broken event"), "MalformedResponse", "an event that is not JSON")
      assert.equal(env.server.requests.length, 1, "sent once")
    }))

  add("errors", "a stream cut mid-way is a NetworkError; one that ends before its finish too", (env) =>
    Effect.gen(function*() {
      const full = replyBody(f.streamText.reply)
      const partial = f.cutStream ?? ReplayServer.firstEvents(full, Math.max(1, Math.min(3, ReplayServer.eventCount(full) - 1)))
      env.server.enqueue(ReplayServer.cut(partial, { headers: sseHeaders(f.streamText.reply) }), ReplayServer.sse(partial, { headers: sseHeaders(f.streamText.reply) }))
      const model = yield* env.model()
      expectModelError(harness, yield* failure(Stream.runDrain(model.stream(ask())), "a cut stream"), "NetworkError", "a cut stream")
      expectModelError(harness, yield* failure(LanguageModel.collect(model.stream(ask())), "a stream ending early"), "NetworkError", "a stream that ends before its finish")
    }))

  add("errors", "a stream that stalls after its first events fails with a NetworkError after idleTimeout and closes the connection", (env) =>
    Effect.gen(function*() {
      const full = replyBody(f.streamText.reply)
      env.server.enqueue(ReplayServer.hang({ body: ReplayServer.firstEvents(full, 2), headers: sseHeaders(f.streamText.reply) }))
      const model = yield* env.model()
      const fiber = yield* Effect.forkChild(Stream.runDrain(model.stream(ask())))
      yield* env.server.waitForRequests(1)
      yield* Wire.untilSomeoneSleeps("the idle timer")
      yield* TestClock.adjust(Duration.sum(idleTimeout, Duration.millis(1)))
      const error = yield* failure(Fiber.join(fiber), "a stalled stream")
      expectModelError(harness, error, "NetworkError", "a stalled stream")
      yield* env.server.waitForClientCloses(1)
      assert.equal(env.server.requests.length, 1)
    }))

  return out
}

// ---------------------------------------------------------------------------
// Registering with a test runner
// ---------------------------------------------------------------------------

/**
 * The parts of a test runner `register` uses: `describe` and `it.effect` (e.g. from `@effect/vitest`: scoped, with a `TestClock`).
 *
 * @category models
 * @since 0.1.0
 */
export interface Runner {
  readonly describe: (name: string, body: () => void) => void
  readonly it: {
    readonly effect: (
      name: string,
      self: () => Effect.Effect<void, unknown, Scope.Scope>,
      timeout?: number
    ) => void
  }
}

/**
 * The time limit `register` gives each scenario, in real milliseconds (a real SDK over real HTTP on a busy machine).
 *
 * @category constants
 * @since 0.1.0
 */
export const timeoutMillis = 30_000

/**
 * Registers every scenario of the harness as a test, grouped under `<name> conformance`.
 *
 * @category utils
 * @since 0.1.0
 */
export const register = (harness: Harness, runner: Runner): void => {
  const all = scenarios(harness)
  runner.describe(`${harness.name} conformance`, () => {
    for (const group of [...new Set(all.map((scenario) => scenario.group))]) {
      runner.describe(group, () => {
        for (const scenario of all.filter((s) => s.group === group)) runner.it.effect(scenario.name, () => scenario.run, timeoutMillis)
      })
    }
  })
}
