/**
 * docs/ui.md's `Approver` (src/snippets/ui-approver.ts) behind
 * `UiHttp.toWebHandler`: `identify` is given the incoming request (its
 * cookies), a request without the session is a 401, the person is recorded
 * as the sender, and `authorize` refuses a refund to someone without the
 * `finance` role (403, nothing run), and lets a finance person approve it.
 */
import { UiChat, UiHttp, UiRequest } from "@chat-ts/ai-sdk-ui"
import { Action, Chat, ConversationStore, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Approver } from "@chat-ts/inbox"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import { approver } from "../src/snippets/ui-approver.js"

const Refund = Tool.make("refund", { description: "Refund.", parameters: { amount: Schema.Number }, success: Schema.Struct({ refunded: Schema.Number }) })
const toolkit = Toolkit.make(Refund).pipe(Toolkit.withStrategy(() => Effect.succeed(Action.RequireApproval())))

const sessions = (token: string) =>
  Effect.succeed(token === "s-ann" ? Option.some({ user: "ann", roles: [] }) : token === "s-fin" ? Option.some({ user: "fin", roles: ["finance"] }) : Option.none())

describe("the docs' Approver behind a web handler", () => {
  it.live("identifies by the session cookie, records the sender, and authorizes by role", () =>
    Effect.gen(function*() {
      const runs: Array<unknown> = []
      const store = yield* ConversationStore.makeMemory
      const model = MockLanguageModel.make((request) =>
        request.messages.at(-1)?.role === "user"
          ? MockLanguageModel.toolCalls([{ id: "r1", name: "refund", arguments: { amount: 5 } }])
          : MockLanguageModel.text("done")
      )
      const chat = yield* Chat.make({ tools: toolkit }).pipe(
        Effect.provide(Layer.merge(model.layer, toolkit.toLayer({ refund: (params) => Effect.sync(() => (runs.push(params), { refunded: params.amount })) })))
      )
      const web = UiHttp.toWebHandler(UiChat.layer({ chat }).pipe(Layer.provideMerge(Layer.mergeAll(
        Layer.succeed(ConversationStore.ConversationStore, store),
        Layer.succeed(Approver.Approver, approver(sessions))
      ))))
      yield* Effect.addFinalizer(() => Effect.promise(web.dispose))
      const post = (cookie: string | undefined, last: unknown) =>
        Effect.promise(() =>
          web.handler(new Request("http://127.0.0.1/api/chat", {
            method: "POST",
            headers: { "content-type": "application/json", ...(cookie === undefined ? {} : { cookie }) },
            body: JSON.stringify({ id: "c", trigger: "submit-message", messages: [last] })
          })).then(async (response) => ({ status: response.status, text: await response.text() }))
        )
      const ask = { id: "m1", role: "user", parts: [{ type: "text", text: "refund me" }] }
      assert.strictEqual((yield* post(undefined, ask)).status, 401)
      assert.strictEqual((yield* post("session=s-nobody", ask)).status, 401)
      assert.strictEqual((yield* post("theme=dark; session=s-ann", ask)).status, 200)
      const stored = Option.getOrThrow(yield* store.load("c"))
      assert.strictEqual(stored.messages[0]!.sender?.id, "ann")
      const approve = {
        id: "a1",
        role: "assistant",
        parts: [{ type: "tool-refund", toolCallId: "r1", state: "approval-responded", input: { amount: 5 }, approval: { id: UiRequest.approvalId("c", "r1"), approved: true } }]
      }
      const ann = yield* post("session=s-ann", approve)
      assert.strictEqual(ann.status, 403)
      assert.deepStrictEqual(runs, [])
      assert.strictEqual(Messages.findTool(Option.getOrThrow(yield* store.load("c")).messages, "r1")!.status._tag, "AwaitingApproval")
      assert.strictEqual((yield* post("session=s-fin", approve)).status, 200)
      assert.deepStrictEqual(runs, [{ amount: 5 }])
    }).pipe(Effect.scoped))
})
