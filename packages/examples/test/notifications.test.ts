/** The notifications snippet (docs/human-in-the-loop.md#notifications) runs end to end on a receiver on 127.0.0.1. */
import { ConversationStore, Messages, Outbox, OutboxDispatcher } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as http from "node:http"
import type * as net from "node:net"
import * as Notifications from "../src/snippets/notifications.js"

const secret = "an-approvals-webhook-secret-32-chars-long"

describe("notifications snippet", () => {
  it.live("a saved pause reaches the receiver, verified; sent again it is a duplicate; a forged one is refused", () =>
    Effect.gen(function*() {
      const seen = new Set<string>()
      const answers: Array<string> = []
      const bodies: Array<{ headers: http.IncomingHttpHeaders; body: string }> = []
      const server = http.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk) => (body += chunk))
        request.on("end", () => {
          bodies.push({ headers: request.headers, body })
          Effect.runPromise(Effect.result(Notifications.receive(seen, { headers: request.headers, body }).pipe(Effect.provide(config)))).then(
            (result) => {
              answers.push(result._tag === "Success" ? result.success : result.failure._tag)
              response.writeHead(result._tag === "Success" ? 200 : 401).end()
            }
          )
        })
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve())))
      const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hooks`
      const config = ConfigProvider.layer(ConfigProvider.fromEnvRecord({ APPROVALS_WEBHOOK_URL: url, APPROVALS_WEBHOOK_SECRET: secret }))
      yield* Effect.gen(function*() {
        const store = yield* ConversationStore.ConversationStore
        yield* store.save("conv", [
          Messages.user("Pay."),
          { role: "assistant", parts: [{ _tag: "ToolCall", id: "c1", name: "pay", arguments: "{}", status: { _tag: "AwaitingApproval" } }] }
        ], { expectedVersion: 0 })
        expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 1, failed: 0 })
        expect(answers).toEqual(["Paused"])
        const [entry] = yield* (yield* Outbox.Outbox).list()
        expect(entry).toMatchObject({ status: "delivered" })
        expect(yield* Notifications.receive(seen, bodies[0]!).pipe(Effect.provide(config))).toBe("duplicate")
        const forged = { ...bodies[0]!, body: bodies[0]!.body.replace("conv", "conx") }
        expect((yield* Effect.flip(Notifications.receive(seen, forged).pipe(Effect.provide(config))))._tag).toBe("InvalidSignature")
      }).pipe(Effect.provide(Layer.merge(ConversationStore.layerMemoryWithOutbox, Notifications.webhook.pipe(Layer.provide(config)))))
      yield* Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
    }))
})
