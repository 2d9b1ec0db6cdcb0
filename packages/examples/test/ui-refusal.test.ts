/**
 * What the ui example's page shows of a refusal (`src/ui/refusal.ts`), fed the
 * error the AI SDK's own `DefaultChatTransport` throws for the endpoint's
 * answer: a losing tab's `Busy` is a readable sentence with a retry (not
 * `{"_tag":"Conflict",…}`), the same request sent again then runs; other
 * refusals are readable and not offered again.
 */
import { UiChat, UiHttp } from "@chat-ts/ai-sdk-ui"
import { Chat, ConversationStore } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Approver } from "@chat-ts/inbox"
import { assert, describe, it } from "@effect/vitest"
import { DefaultChatTransport, type UIMessage } from "ai"
import { Effect, Layer } from "effect"
import { readRefusal } from "../src/ui/refusal.js"

const message: UIMessage = { id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] }

describe("the page's refusals", () => {
  it.live("Busy reads as a sentence offering a retry; sent again, the message is answered", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.makeMemory
      const model = MockLanguageModel.make(() => MockLanguageModel.text("hi there"))
      const chat = yield* Chat.make({}).pipe(Effect.provide(model.layer))
      const services = UiChat.layer({ chat }).pipe(
        Layer.provideMerge(Layer.mergeAll(
          Layer.succeed(ConversationStore.ConversationStore, store),
          Layer.succeed(Approver.Approver, Approver.fromTrustedHeader("x-test-user"))
        ))
      )
      const web = UiHttp.toWebHandler(services)
      yield* Effect.addFinalizer(() => Effect.promise(web.dispose))
      const transport = new DefaultChatTransport<UIMessage>({
        api: "http://127.0.0.1/api/chat",
        headers: { "x-test-user": "alice" },
        fetch: (input, init) => web.handler(new Request(input, init))
      })
      const send = (chatId: string) =>
        Effect.promise(() =>
          transport.sendMessages({ chatId, messages: [message], trigger: "submit-message", messageId: undefined, abortSignal: AbortSignal.timeout(10_000) })
            .then(async (stream) => {
              const chunks: Array<unknown> = []
              for await (const chunk of stream) chunks.push(chunk)
              return { chunks, error: undefined }
            }, (error: Error) => ({ chunks: [], error }))
        )
      yield* Effect.asVoid(store.save("tab", [], { expectedVersion: 0 }))
      const lease = yield* store.acquire("tab", "the other tab", "30 seconds")
      const busy = yield* send("tab")
      assert.isDefined(busy.error)
      const refusal = readRefusal(busy.error!)
      assert.deepStrictEqual(refusal, {
        message: "another run holds this conversation now: send the same request again in a moment",
        tag: "Conflict",
        reason: "Busy",
        retryable: true,
        retryAfter: 1
      })
      assert.notInclude(refusal.message, "{")
      yield* store.release(lease)
      const again = yield* send("tab")
      assert.isUndefined(again.error)
      const text = again.chunks.flatMap((chunk) => (chunk as { type: string; delta?: string }).type === "text-delta" ? [(chunk as { delta: string }).delta] : []).join("")
      assert.strictEqual(text, "hi there")

      const forbidden = yield* Effect.promise(() =>
        new DefaultChatTransport<UIMessage>({ api: "http://127.0.0.1/api/chat", fetch: (input, init) => web.handler(new Request(input, init)) })
          .sendMessages({ chatId: "x", messages: [message], trigger: "submit-message", messageId: undefined, abortSignal: undefined })
          .then(() => undefined, (error: Error) => error)
      )
      assert.deepInclude(readRefusal(forbidden!), { tag: "Unauthorized", message: "no identity: sign in first", retryable: false })
    }).pipe(Effect.scoped))

  it("an error that is no refusal reads as its own text", () => {
    assert.deepStrictEqual(readRefusal(new Error("Failed to fetch")), { message: "Failed to fetch", retryable: false, retryAfter: 0 })
  })
})
