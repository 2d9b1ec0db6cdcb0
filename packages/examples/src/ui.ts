/**
 * The demo's agent behind the AI SDK's `useChat` and AG-UI: a React page
 * (bundled when the server starts) talks to @chat-ts/ai-sdk-ui's endpoint
 * (`/api/chat`); an AG-UI client (`HttpAgent`, CopilotKit…) talks to
 * @chat-ts/ag-ui's (`/api/agent`), on the same store and the same sign-in.
 * Calls that need approval are decided in the page or answered as AG-UI
 * interrupts, and the stored conversation is the truth. The scripted demo model answers unless a key is configured (as for
 * the demo).
 *
 *   npm run -w @chat-ts/examples ui     # prints the URL to open
 *
 * Sign-in is a secret link printed on the terminal: it sets a session cookie
 * (HttpOnly, SameSite=Strict) that the `Approver` checks on every request.
 */
import { AgUi, AgUiHttp } from "@chat-ts/ag-ui"
import { Chat, ConversationStore } from "@chat-ts/core"
import { Config, Console, Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as ScriptedModel from "./demo/scriptedModel.js"
import * as Sandbox from "./demo/sandbox.js"
import * as DemoTools from "./demo/tools.js"
import { login, sessionApprover } from "./inbox.js"
import * as Models from "./shared/Models.js"
import { isMain } from "./shared/main.js"
import * as UiServer from "./ui/server.js"

/** Where the AG-UI endpoint listens, beside the page and `useChat`'s `/api/chat`. */
export const agentPath = "/api/agent"

/** The whole example: the demo's agent (model `choice`), the page and both endpoints. Gives the sign-in URL. */
export const program = (options: { readonly port: number; readonly choice: Models.Choice }) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore.makeMemory
    const chat = yield* Chat.make({ tools: DemoTools.toolkit({ cleanupDelay: "1 minute" }), maxSteps: 8 }).pipe(
      Effect.provide(Layer.merge(Models.languageModel(options.choice, ScriptedModel.layer({ typingDelay: 0 })), DemoTools.handlers))
    )
    const secret = Redacted.make(randomBytes(24).toString("base64url"))
    const agUi = AgUiHttp.layer({ path: agentPath }).pipe(Layer.provide(AgUi.layer({ chat })))
    const url = yield* UiServer.serve({ chat, store, approver: sessionApprover(secret), port: options.port, routes: [Layer.merge(login(secret), agUi)] })
    return { url: `${url}/login?token=${Redacted.value(secret)}`, agent: `${url}${agentPath}`, store }
  })

if (isMain(import.meta.url)) {
  const { NodeRuntime, NodeServices } = await import("@effect/platform-node")
  Effect.gen(function*() {
    const port = yield* Config.Int("UI_PORT").pipe(Config.withDefault(0))
    const choice = yield* Models.choose()
    const { agent, url } = yield* program({ port, choice })
    yield* Console.log(
      `[model: ${Models.label(choice, "the built-in scripted demo model")}]\n` +
        `The chat page is open. Sign in with this link (it holds your session secret):\n\n  ${url}\n\n` +
        `AG-UI clients (HttpAgent, CopilotKit…) post to ${agent} with the session cookie.\n` +
        `Try: ${ScriptedModel.suggestions.slice(0, 2).map((s) => `"${s}"`).join(", ")}. Press Ctrl+C to stop.`
    )
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(Sandbox.layer(undefined)),
    Effect.provide(NodeServices.layer),
    NodeRuntime.runMain
  )
}
