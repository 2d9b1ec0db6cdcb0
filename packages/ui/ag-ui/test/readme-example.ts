// #region imports
import { HttpAgent } from "@ag-ui/client"
import { AgUi, AgUiHttp, type AgUiProtocol } from "@chat-ts/ag-ui"
import { type Chat, ConversationStore } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Layer } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { createServer } from "node:http"
// #endregion imports

// #region serve
// `chat`'s turns as AG-UI events at POST /agent; the thread id is the conversation id in the store.
export const AgentServer = (chat: Chat.Service, approver: Approver.Service, port: number) =>
  HttpRouter.serve(AgUiHttp.layer({ path: "/agent" })).pipe(
    Layer.provide(AgUi.layer({ chat })),
    Layer.provide(Layer.succeed(Approver.Approver, approver)), // who may decide (the inbox's Approver)
    Layer.provide(ConversationStore.layerMemory), // or SqlConversationStore.layer() from @chat-ts/sql
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" }))
  )
// #endregion serve

// #region web
// …or as a (Request) => Promise<Response> function for Next.js, Bun, Deno: built once per process (module level),
// it keeps the store and the runs between requests. In a Next.js route file: `export const POST = agent.handler`.
export const webAgent = (chat: Chat.Service, approver: Approver.Service) =>
  AgUiHttp.toWebHandler(
    AgUi.layer({ chat }).pipe(
      Layer.provideMerge(Layer.succeed(Approver.Approver, approver)),
      Layer.provide(ConversationStore.layerMemory)
    )
  )
// #endregion web

// #region client
// A client: say something, then answer every interrupt (approve, or approve with edited arguments).
export const converse = async (url: string, text: string, edit: (details: AgUiProtocol.InterruptDetails) => unknown) => {
  const agent = new HttpAgent({ url, threadId: "conversation-1" })
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text })
  await agent.runAgent()
  while (agent.pendingInterrupts.length > 0) {
    const resume = agent.pendingInterrupts.map((interrupt) => {
      const details = (interrupt.metadata as AgUiProtocol.InterruptMetadata)["chat-ts"]
      const editedArgs = edit(details)
      const answer: AgUiProtocol.Answer = editedArgs === undefined ? { approved: true } : { approved: true, editedArgs }
      return { interruptId: interrupt.id, status: "resolved" as const, payload: answer }
    })
    await agent.runAgent({ resume })
  }
  return agent.messages
}
// #endregion client
