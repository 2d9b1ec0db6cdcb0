import { UiChat, UiHttp } from "@chat-ts/ai-sdk-ui"
import { type Chat, ConversationStore } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Layer } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { createServer } from "node:http"

// The services: the conversations (any ConversationStore), who decides, and the chat that runs the turns.
const services = (chat: Chat.Service, approver: Approver.Service) =>
  UiChat.layer({ chat }).pipe(
    Layer.provideMerge(Layer.succeed(Approver.Approver, approver)),
    Layer.provide(ConversationStore.layerMemory) // or SqlConversationStore.layer() from @chat-ts/sql
  )

// useChat's endpoint (POST /api/chat) on an effect/http server…
export const ChatServer = (chat: Chat.Service, approver: Approver.Service, port: number) =>
  HttpRouter.serve(UiHttp.layer()).pipe(
    Layer.provide(services(chat, approver)),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" }))
  )

// …or as a (Request) => Promise<Response> function, built once per process (module level): it keeps the store
// and the running turns between requests. In a Next.js route file: `export const POST = routeHandler(chat, approver).handler`.
export const routeHandler = (chat: Chat.Service, approver: Approver.Service) => UiHttp.toWebHandler(services(chat, approver))
