import { type Chat, ConversationStore } from "@chat-ts/core"
import { Approver, Inbox, InboxHttp } from "@chat-ts/inbox"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Layer } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { createServer } from "node:http"

// The inbox for `chat`'s conversations: the API, /openapi.json, the events and the page on one server.
export const InboxServer = (chat: Chat.Service, approver: Approver.Service, port: number) =>
  HttpRouter.serve(InboxHttp.layer()).pipe(
    Layer.provide(Inbox.layer({ chat })),
    Layer.provide(Layer.succeed(Approver.Approver, approver)),
    Layer.provide(ConversationStore.layerMemory), // or SqlConversationStore.layer() from @chat-ts/sql
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" }))
  )
