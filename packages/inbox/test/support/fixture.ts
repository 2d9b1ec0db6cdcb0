/**
 * A real inbox for tests: three tools that need approval (runs counted), a
 * scripted model whose first answer is the tool calls written in the user
 * message, the memory store (grants count: `Grant.grantedOr`), an approver trusting `x-test-user` (bob may not
 * decide `transfer`), and the HTTP server on 127.0.0.1, port 0.
 */
import { Action, Chat, ConversationStore, Grant, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Approver, Inbox, InboxHttp } from "@chat-ts/inbox"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Clock, type Duration, Effect, Layer, Option, Schema } from "effect"
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
  parameters: { amount: Schema.Number.check(Schema.isInt(), Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(1000)), to: Schema.String },
  success: Schema.Struct({ moved: Schema.Number })
})

export const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files for good.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number })
})

/** Two people of finance must approve a wire, and not the person who asked for it. */
export const WireFunds = Tool.make("wire_funds", {
  description: "Wire money abroad.",
  parameters: { amount: Schema.Number, to: Schema.String },
  success: Schema.Struct({ wired: Schema.Number }),
  decisionPolicy: { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 }
})

export const toolkit = Toolkit.make(SendEmail, Transfer, DeleteFiles, WireFunds).pipe(
  // A live grant made before a call was proposed settles it; everything else waits for a person.
  Toolkit.withStrategy(Grant.grantedOr((call) =>
    call.name === "transfer"
      ? Effect.map(Clock.currentTimeMillis, (now) => Action.RequireApproval({ expiresAt: now + 3_600_000 }))
      : Effect.succeed(Action.RequireApproval())
  ))
)

/** Every run of a tool: its name and arguments. */
export type Runs = Array<{ readonly tool: string; readonly params: unknown }>

/** The handlers, recording runs. */
export const handlers = (runs: Runs) =>
  toolkit.toLayer({
    send_email: (params) => Effect.sync(() => (runs.push({ tool: "send_email", params }), { sent: true })),
    transfer: (params) => Effect.sync(() => (runs.push({ tool: "transfer", params }), { moved: params.amount })),
    delete_files: (params) => Effect.sync(() => (runs.push({ tool: "delete_files", params }), { deleted: params.paths.length })),
    wire_funds: (params) => Effect.sync(() => (runs.push({ tool: "wire_funds", params }), { wired: params.amount }))
  })

/** The user message that makes the model ask for these calls. */
export const asking = (calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: unknown }>) =>
  `please do: ${JSON.stringify(calls)}`

/** The calls the model asks for after a user message (by its text); `asking(calls)` needs no entry. */
export type Prompts = Map<string, ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: unknown }>>

/** A model answering a user message with its calls (see `Prompts`, `asking`), and anything else with "done". */
export const model = (prompts: Prompts) =>
  MockLanguageModel.make((request) => {
    const last = request.messages[request.messages.length - 1]!
    const text = Messages.textOf(last)
    if (last.role !== "user") return MockLanguageModel.text("done")
    const calls = prompts.get(text) ?? (text.startsWith("please do: ") ? JSON.parse(text.slice("please do: ".length)) : undefined)
    return calls === undefined ? MockLanguageModel.text("done") : MockLanguageModel.toolCalls(calls)
  })

/** The roles of the test users: everyone but dave works in finance. */
const rolesOf: Record<string, ReadonlyArray<string>> = { alice: ["finance"], bob: ["finance"], carol: ["finance"] }

/** The approver of the tests: `x-test-user` names the person (with their roles); bob may not decide `transfer`. */
export const approver = Approver.make({
  identify: (request) => {
    const base = Approver.fromTrustedHeader("x-test-user")
    return Effect.map(base.identify(request), Option.map((identity) =>
      Object.hasOwn(rolesOf, identity.id) ? new Approver.Identity({ id: identity.id, roles: rolesOf[identity.id]! }) : identity))
  },
  authorize: (identity, request) => Effect.succeed(!(identity.id === "bob" && request.tool === "transfer"))
})

/** What a test gets. */
export interface Env {
  readonly url: string
  readonly store: ConversationStore.Service
  readonly chat: Chat.Service
  readonly runs: Runs
  /**
   * Starts a conversation whose model asks for `calls`; it pauses into the store. With several
   * senders, each but the last first sends "I need this too.", delivered with the prompt (the last
   * one's): all of them asked for the calls.
   */
  readonly seed: (
    id: string,
    calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: unknown }>,
    prompt?: string,
    sender?: string | ReadonlyArray<string>
  ) => Effect.Effect<ConversationStore.Stored, unknown>
}

/** Builds the inbox and its server for the scope. */
export const make = (
  options: {
    readonly store?: ConversationStore.Service
    readonly pollInterval?: Duration.Input
    /** The chat's toolkit instead of `toolkit` (the same tools, another strategy). */
    readonly tools?: Toolkit.Toolkit<typeof toolkit.tools>
  } = {}
) =>
  Effect.gen(function*() {
    const runs: Runs = []
    const prompts: Prompts = new Map()
    const store = options.store ?? (yield* ConversationStore.makeMemory)
    const chat = yield* Chat.make({ tools: options.tools ?? toolkit }).pipe(
      Effect.provide(Layer.merge(model(prompts).layer, handlers(runs)))
    )
    const base = Layer.mergeAll(
      Layer.succeed(ConversationStore.ConversationStore, store),
      Layer.succeed(Approver.Approver, approver)
    )
    const inbox = Inbox.layer({ chat, ...(options.pollInterval === undefined ? {} : { pollInterval: options.pollInterval }) }).pipe(Layer.provide(base))
    const server = HttpRouter.serve(InboxHttp.layer(), { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provide(Layer.merge(inbox, base)),
      Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }))
    )
    const context = yield* Layer.build(server)
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    const url = address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}`
    const seed: Env["seed"] = (id, calls, prompt, sender) =>
      Effect.gen(function*() {
        if (prompt !== undefined) prompts.set(prompt, calls)
        const senders = sender === undefined ? [] : typeof sender === "string" ? [sender] : sender
        const last = senders[senders.length - 1]
        const user = [
          ...senders.slice(0, -1).map((id) => Messages.user("I need this too.", { sender: { id } })),
          Messages.user(prompt ?? asking(calls), last === undefined ? {} : { sender: { id: last } })
        ]
        const first = yield* store.save(id, user, { expectedVersion: 0 })
        yield* chat.complete(first.messages, { checkpoint: ConversationStore.checkpoint(store, id, first.version) })
        const stored = yield* store.load(id)
        return stored._tag === "Some" ? stored.value : yield* Effect.die(new Error(`${id} was not stored`))
      })
    return { url, store, chat, runs, seed } satisfies Env
  })

/** A fetch as an effect (bounded: the server answers or the test fails after 10 seconds). */
export const request = (
  url: string,
  init: { readonly method?: string; readonly user?: string; readonly headers?: Record<string, string>; readonly body?: unknown } = {}
) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: init.method ?? "GET",
      headers: {
        ...(init.user === undefined ? {} : { "x-test-user": init.user }),
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        ...init.headers
      },
      ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(10_000)
    })
    const text = await response.text()
    let json: any = undefined
    try {
      json = JSON.parse(text)
    } catch {
      // not JSON (a page)
    }
    return { status: response.status, headers: response.headers, text, json }
  })

/** The CSRF token of `user`, from `/api/session`. */
export const csrfOf = (url: string, user: string) =>
  Effect.map(request(`${url}/api/session`, { user }), (response) => response.json.csrfToken as string)
