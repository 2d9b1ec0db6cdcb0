/**
 * The agent of the tests: tools that need approval (runs counted), a
 * scheduled reminder, a scripted model whose first answer is the calls written
 * in the user message, the memory store, and an approver (bob may not decide
 * `transfer`).
 */
import { Action, Chat, ChatError, ConversationStore, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { AgUi, AgUiHttp } from "@chat-ts/ag-ui"
import { Approver } from "@chat-ts/inbox"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Clock, Effect, Layer, Schema, Stream } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import { createServer } from "node:http"

export const SendEmail = Tool.make("send_email", {
  description: "Send an email.",
  parameters: { to: Schema.String.check(Schema.isPattern(/^[^@\s]+@[^@\s]+$/)), subject: Schema.String },
  success: Schema.Struct({ sent: Schema.Boolean })
})

export const Transfer = Tool.make("transfer", {
  description: "Move money between accounts.",
  parameters: { amount: Schema.Number.check(Schema.isInt(), Schema.isGreaterThan(0)), to: Schema.String },
  success: Schema.Struct({ moved: Schema.Number })
})

export const Remind = Tool.make("remind", {
  description: "Remind the user later.",
  parameters: { text: Schema.String },
  success: Schema.Struct({ reminded: Schema.Boolean })
})

/** A tool under four-eyes: the person who asked may not approve it. */
export const Payout = Tool.make("payout", {
  description: "Pay a supplier.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number }),
  decisionPolicy: { notRequester: true }
})

/** A tool needing two distinct people's yes. */
export const Deploy = Tool.make("deploy", {
  description: "Deploy to production.",
  parameters: { version: Schema.String },
  success: Schema.Struct({ deployed: Schema.String }),
  decisionPolicy: { quorum: 2 }
})

/** A tool only people with the `finance` role may decide. */
export const Refund = Tool.make("refund", {
  description: "Refund a customer.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ refunded: Schema.Number }),
  decisionPolicy: { approve: { roles: ["finance"] } }
})

/** The approval deadline of `transfer`, after its strategy decided. */
export const transferDeadline = 3_600_000

export const toolkit = Toolkit.make(SendEmail, Transfer, Remind, Payout, Deploy, Refund).pipe(
  Toolkit.withStrategy((call) =>
    call.name === "remind"
      ? Effect.succeed(Action.Defer({ after: 60_000 }))
      : call.name === "transfer"
      ? Effect.map(Clock.currentTimeMillis, (now) => Action.RequireApproval({ expiresAt: now + transferDeadline }))
      : Effect.succeed(Action.RequireApproval())
  )
)

/** Every run of a tool: its name and arguments. */
export type Runs = Array<{ readonly tool: string; readonly params: unknown }>

export const handlers = (runs: Runs) =>
  toolkit.toLayer({
    send_email: (params) => Effect.sync(() => (runs.push({ tool: "send_email", params }), { sent: true })),
    transfer: (params) => Effect.sync(() => (runs.push({ tool: "transfer", params }), { moved: params.amount })),
    remind: (params) => Effect.sync(() => (runs.push({ tool: "remind", params }), { reminded: true })),
    payout: (params) => Effect.sync(() => (runs.push({ tool: "payout", params }), { paid: params.amount })),
    deploy: (params) => Effect.sync(() => (runs.push({ tool: "deploy", params }), { deployed: params.version })),
    refund: (params) => Effect.sync(() => (runs.push({ tool: "refund", params }), { refunded: params.amount }))
  })

/** A call the model asks for. */
export interface Asked {
  readonly id: string
  readonly name: string
  readonly arguments: unknown
}

/** The user message that makes the model ask for these calls (with some text and reasoning first). */
export const asking = (calls: ReadonlyArray<Asked>) => `please do: ${JSON.stringify(calls)}`

/** A model answering `asking(calls)` with those calls, and anything after a tool result with "done." */
export const model = () =>
  MockLanguageModel.make((request) => {
    const last = request.messages[request.messages.length - 1]!
    const text = Messages.textOf(last)
    if (last.role === "user" && text === "fail") return Effect.fail(new ChatError.InvalidRequest({ message: "the model refused the request" }))
    if (last.role === "user" && text.startsWith("please do: ")) {
      return { text: "On it.", reasoning: "Calls needed.", toolCalls: JSON.parse(text.slice("please do: ".length)) }
    }
    return MockLanguageModel.text("All done.", { usage: { inputTokens: 7, outputTokens: 3 } })
  })

export const approver = Approver.make({
  identify: () => Effect.succeedNone,
  authorize: (identity, request) => Effect.succeed(!(identity.id === "bob" && request.tool === "transfer"))
})

export const alice = new Approver.Identity({ id: "alice" })
export const bob = new Approver.Identity({ id: "bob" })

/** What a test gets. */
export interface Env {
  readonly agent: AgUi.Service
  readonly store: ConversationStore.Service
  readonly runs: Runs
  readonly mock: MockLanguageModel.MockLanguageModel
}

/** The agent over a fresh memory store. */
export const make = (
  options: { readonly access?: AgUi.Options<never>["access"]; readonly mayRun?: AgUi.Options<never>["mayRun"]; readonly steering?: AgUi.SteeringRule } = {}
) =>
  Effect.gen(function*() {
    const runs: Runs = []
    const mock = model()
    const store = yield* ConversationStore.makeMemory
    const chat = yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(Layer.merge(mock.layer, handlers(runs))))
    const agent = yield* AgUi.make({
      chat,
      ...(options.access === undefined ? {} : { access: options.access }),
      ...(options.mayRun === undefined ? {} : { mayRun: options.mayRun }),
      ...(options.steering === undefined ? {} : { steering: options.steering })
    }).pipe(
      Effect.provideService(ConversationStore.ConversationStore, store),
      Effect.provideService(Approver.Approver, approver)
    )
    return { agent, store, runs, mock } satisfies Env
  })

let counter = 0

/** A `RunAgentInput` with a new user message. */
export const say = (threadId: string, text: string, messageId = `u${++counter}`) => ({
  threadId,
  runId: `run-${++counter}`,
  messages: [{ id: messageId, role: "user", content: text }]
})

/** A `RunAgentInput` answering interrupts. */
export const resume = (
  threadId: string,
  entries: ReadonlyArray<{ readonly interruptId: string; readonly status: "resolved" | "cancelled"; readonly payload?: unknown }>,
  runId = `run-${++counter}`
) => ({ threadId, runId, messages: [], resume: entries })

/** Runs `input` and collects its events. */
export const events = (env: Env, input: Parameters<AgUi.Service["run"]>[0], identity = alice) =>
  Effect.flatMap(env.agent.run(input, identity), (stream) => Effect.map(Stream.runCollect(stream), (chunk) => Array.from(chunk)))

/** The agent behind the HTTP endpoint on 127.0.0.1 (a free port), for the scope; `x-test-user` names the person. */
export const serve = Effect.gen(function*() {
  const runs: Runs = []
  const mock = model()
  const store = yield* ConversationStore.makeMemory
  const chat = yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(Layer.merge(mock.layer, handlers(runs))))
  const base = Layer.mergeAll(
    Layer.succeed(ConversationStore.ConversationStore, store),
    Layer.succeed(Approver.Approver, { ...approver, identify: Approver.fromTrustedHeader("x-test-user").identify })
  )
  const services = Layer.merge(AgUi.layer({ chat }).pipe(Layer.provide(base)), base)
  const server = HttpRouter.serve(AgUiHttp.layer({ path: "/agent", maxBodyBytes: 64 * 1024 }), {
    disableLogger: true,
    disableListenLog: true
  }).pipe(
    Layer.provide(services),
    Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }))
  )
  const context = yield* Layer.build(server)
  const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
  const url = address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}/agent`
  const web = yield* AgUiHttp.webHandler().pipe(Effect.provideContext(yield* Layer.build(services)))
  return { url, store, runs, mock, web }
})

/** A POST to the endpoint (bounded: it answers within 10 seconds or the test fails). */
export const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-test-user": "alice", ...headers },
      body,
      signal: AbortSignal.timeout(10_000)
    })
    return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() }
  })

/** The AG-UI event types (repeats folded) of a run that pauses on one call after reasoning and text. */
export const pausingRun = [
  "RUN_STARTED",
  "STEP_STARTED",
  "REASONING_START",
  "REASONING_MESSAGE_START",
  "REASONING_MESSAGE_CONTENT",
  "REASONING_MESSAGE_END",
  "REASONING_END",
  "TEXT_MESSAGE_START",
  "TEXT_MESSAGE_CONTENT",
  "TEXT_MESSAGE_END",
  "TOOL_CALL_START",
  "TOOL_CALL_ARGS",
  "TOOL_CALL_END",
  "STEP_FINISHED",
  "RUN_FINISHED"
]

/** The AG-UI event types (repeats folded) of a resumed run: the results, then the model's answer. */
export const resumedRun = [
  "RUN_STARTED",
  "TOOL_CALL_RESULT",
  "STEP_STARTED",
  "TEXT_MESSAGE_START",
  "TEXT_MESSAGE_CONTENT",
  "TEXT_MESSAGE_END",
  "STEP_FINISHED",
  "RUN_FINISHED"
]
