/**
 * The approvals inbox: the terminal demo's agent runs as a worker whose
 * turns pause into a conversation store; people decide the paused calls in
 * a web page (or through its HTTP API) served by @chat-ts/inbox, and the
 * turn resumes after the last decision.
 *
 *   npm run -w @chat-ts/examples inbox     # prints the URL to open
 *
 * Sign-in is a secret link printed on the terminal: it sets a session cookie
 * (HttpOnly, SameSite=Strict) that the `Approver` checks on every request.
 */
// #region imports
import { Action, Chat, ChatError, ConversationStore, Messages, Worker } from "@chat-ts/core"
import { Approver, Inbox, InboxHttp } from "@chat-ts/inbox"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Config, Console, type Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
// #endregion imports
import * as ScriptedModel from "./demo/scriptedModel.js"
import * as Sandbox from "./demo/sandbox.js"
import * as DemoTools from "./demo/tools.js"
import { isMain } from "./shared/main.js"

// #region approver
/** Whether `given` is the secret (compared in constant time). */
const isSecret = (secret: Redacted.Redacted<string>, given: string): boolean => {
  const expected = Buffer.from(Redacted.value(secret))
  const actual = Buffer.from(given)
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** One person, signed in by a secret link: the session cookie must hold the secret. */
export const sessionApprover = (secret: Redacted.Redacted<string>) =>
  Approver.make({
    identify: (request) =>
      Effect.succeed(
        isSecret(secret, request.cookies["inbox_session"] ?? "")
          ? Option.some(new Approver.Identity({ id: "you", name: "you (demo)" }))
          : Option.none()
      ),
    // The policy: a scheduled cleanup may be approved early or rejected; anything else too, in this demo.
    authorize: () => Effect.succeed(true)
  })

/** `/login?token=…` sets the session cookie and opens the inbox. */
export const login = (secret: Redacted.Redacted<string>) =>
  HttpRouter.add("GET", "/login", (request) => {
    const token = new URL(request.url, "http://localhost").searchParams.get("token") ?? ""
    if (!isSecret(secret, token)) {
      return Effect.succeed(HttpServerResponse.text("Wrong sign-in link.", { status: 401 }))
    }
    return HttpServerResponse.redirect("/", { status: 303 }).pipe(
      HttpServerResponse.setCookie("inbox_session", Redacted.value(secret), { httpOnly: true, sameSite: "strict", path: "/" })
    )
  })
// #endregion approver

/** What the worker asks the agent, one conversation each. */
export const requests: ReadonlyArray<string> = [
  "delete the old logs",
  "delete the temp file now and clean up the logs tomorrow"
]

// #region worker
/** Starts a conversation: the turn runs until it pauses, saving every state to the store. */
export const start = (chat: Chat.Service, id: string, text: string) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const first = yield* store.save(id, Messages.fromUser(text), { expectedVersion: 0 })
    return yield* chat.complete(first.messages, { checkpoint: ConversationStore.checkpoint(store, id, first.version) })
  })

/** The worker's loop: resumes conversations whose only waits are scheduled calls now due (under the lease). */
export const resumeDue = (chat: Chat.Service) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.ConversationStore
    const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const page = yield* store.listPending()
    for (const item of page.items) {
      const stored = yield* store.load(item.id)
      if (Option.isNone(stored)) continue
      const waiting = Messages.pendingTools(stored.value.messages)
      const due = waiting.every((call) =>
        call.status._tag === "Approved" || (call.status._tag === "Scheduled" && call.status.at <= now))
      if (!due) continue
      // Busy: someone else (the inbox, another worker) runs it right now; a retryable store error
      // (a lock held past the store's budget, a lost connection): the next round tries again.
      yield* Worker.resume(chat, item.id, (s) => Effect.succeed(s.messages)).pipe(
        Effect.catchIf((error) => Worker.isBusy(error) || ChatError.isRetryableStoreError(error), () => Effect.void)
      )
    }
  })
// #endregion worker

// #region serve
/** The inbox over `store`, served on `port` (0: any free port); gives the sign-in URL. */
export const serve = (options: {
  readonly chat: Chat.Service
  readonly store: ConversationStore.Service
  readonly port: number
  readonly secret: Redacted.Redacted<string>
}) =>
  Effect.gen(function*() {
    const services = Layer.mergeAll(
      Layer.succeed(ConversationStore.ConversationStore, options.store),
      Layer.succeed(Approver.Approver, sessionApprover(options.secret))
    )
    const routes = Layer.mergeAll(InboxHttp.layer(), login(options.secret)).pipe(
      Layer.provide(Inbox.layer({ chat: options.chat })),
      Layer.provide(services)
    )
    const server = HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: options.port, host: "127.0.0.1" }))
    )
    const context = yield* Layer.build(server)
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    const port = address._tag === "UnixPathAddress" ? options.port : address.port
    return `http://127.0.0.1:${port}/login?token=${Redacted.value(options.secret)}`
  })
// #endregion serve

/** The whole example: sandbox, agent, worker, inbox. Gives the sign-in URL; runs until the scope closes. */
export const program = (options: {
  readonly port: number
  readonly cleanupDelay?: Action.Delay
  readonly workerEvery?: Duration.Input
}) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.makeMemory
    const chat = yield* Chat.make({ tools: DemoTools.toolkit({ cleanupDelay: options.cleanupDelay ?? "1 minute" }) })
    const secret = Redacted.make(randomBytes(24).toString("base64url"))
    const url = yield* serve({ chat, store, port: options.port, secret })
    const withStore = Effect.provideService(ConversationStore.ConversationStore, store)
    for (const [index, text] of requests.entries()) yield* withStore(start(chat, `demo-${index + 1}`, text))
    yield* withStore(resumeDue(chat)).pipe(Effect.repeat(Schedule.spaced(options.workerEvery ?? "1 second")), Effect.forkScoped)
    return { url, store, chat }
  }).pipe(
    Effect.provide(DemoTools.handlers),
    Effect.provide(ScriptedModel.layer({ typingDelay: 0 }))
  )

if (isMain(import.meta.url)) {
  const { NodeRuntime, NodeServices } = await import("@effect/platform-node")
  Effect.gen(function*() {
    const port = yield* Config.Int("INBOX_PORT").pipe(Config.withDefault(0))
    const { url } = yield* program({ port })
    yield* Console.log(`[model: the built-in scripted demo model]\nThe approvals inbox is open. Sign in with this link (it holds your session secret):\n\n  ${url}\n\nPress Ctrl+C to stop.`)
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(Sandbox.layer(undefined)),
    Effect.provide(NodeServices.layer),
    NodeRuntime.runMain
  )
}
