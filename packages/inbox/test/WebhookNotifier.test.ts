import { ChatError, ConversationStore, Messages, Notification, Notifier, Outbox, OutboxDispatcher } from "@chat-ts/core"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect, Layer, Redacted, Schedule } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { WebhookNotifier } from "../src/index.js"
import * as Receiver from "./support/receiver.js"

const secret = Redacted.make("a-webhook-secret-of-at-least-32-characters")
const fast = Schedule.spaced("5 millis").pipe(Schedule.upTo({ times: 2 }))

const paused: Messages.Messages = [
  Messages.user("Pay."),
  { role: "assistant", parts: [{ _tag: "ToolCall", id: "c1", name: "pay", arguments: "{\"amount\":1}", status: { _tag: "AwaitingApproval" } }] }
]

let receiver: Receiver.Receiver
beforeEach(async () => {
  receiver = await Receiver.start(secret)
})
afterEach(async () => {
  await receiver.close()
})

const webhook = (options: Partial<WebhookNotifier.Options> = {}) =>
  WebhookNotifier.layer({ url: receiver.url, secret, retry: fast, ...options }).pipe(Layer.provide(FetchHttpClient.layer))

const storeWith = (notifier: Layer.Layer<Notifier.Notifier>) => Layer.merge(ConversationStore.layerMemoryWithOutbox, notifier)

describe("WebhookNotifier", () => {
  it.live("a saved pause reaches the receiver signed, once; sent again, the receiver deduplicates it by id", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      yield* store.save("conv", paused, { expectedVersion: 0 })
      expect(yield* OutboxDispatcher.deliverPending()).toEqual({ delivered: 1, failed: 0 })
      expect(receiver.requests).toEqual([{ id: expect.any(String), verified: true }])
      const [notification] = [...receiver.accepted.values()] as Array<Notification.Notification>
      expect(notification).toMatchObject({ kind: "Paused", conversationId: "conv", version: 1, calls: [{ id: "c1", status: "AwaitingApproval" }] })
      // The same notification delivered again (a dispatcher that died after sending): one notification for the receiver.
      yield* (yield* Notifier.Notifier).notify(notification!)
      expect(receiver.requests.length).toBe(2)
      expect(receiver.accepted.size).toBe(1)
      expect(receiver.duplicates).toBe(1)
      expect((yield* (yield* Outbox.Outbox).list())[0]).toMatchObject({ status: "delivered", attempts: 1 })
    }).pipe(Effect.provide(storeWith(webhook()))))

  it.live("a receiver that answers 500 forever: bounded tries (webhook × dispatcher), the row kept failed, the secret in no error", () =>
    Effect.gen(function*() {
      receiver.status = 500
      const store = yield* ConversationStore.ConversationStore
      const saved = yield* store.save("conv", paused, { expectedVersion: 0 })
      expect(yield* OutboxDispatcher.deliverPending({ retry: Schedule.spaced("5 millis").pipe(Schedule.upTo({ times: 1 })) })).toEqual({
        delivered: 0,
        failed: 1
      })
      // 3 requests per notify (1 + 2 webhook retries), 2 notifies (1 + 1 dispatcher retry).
      expect(receiver.requests.length).toBe(6)
      expect(receiver.requests.every((request) => request.verified)).toBe(true)
      const [row] = yield* (yield* Outbox.Outbox).list()
      expect(row).toMatchObject({ status: "failed", attempts: 2, lastError: "the receiver answered HTTP 500" })
      expect(saved.version).toBe(1)
      const failure = yield* Effect.flip((yield* Notifier.Notifier).notify(row!.notification))
      expect(failure).toMatchObject({ _tag: "NotificationFailed", status: 500, retryable: true })
      expect(JSON.stringify(failure) + failure.message).not.toContain(Redacted.value(secret))
    }).pipe(Effect.provide(storeWith(webhook()))))

  it.live("a 4xx answer is not tried again; an unreachable receiver is retryable", () =>
    Effect.gen(function*() {
      receiver.status = 410
      const notification = Notification.make("conv", 1, 0, [{ kind: "Completed", calls: [] }])[0]!
      const gone = yield* Effect.flip((yield* Notifier.Notifier).notify(notification))
      expect(gone).toMatchObject({ status: 410, retryable: false })
      expect(receiver.requests.length).toBe(1)
      const nowhere = yield* WebhookNotifier.make({ url: "http://127.0.0.1:1/", secret, retry: fast }).pipe(Effect.provide(FetchHttpClient.layer))
      expect(yield* Effect.flip(nowhere.notify(notification))).toMatchObject({ _tag: "NotificationFailed", retryable: true })
    }).pipe(Effect.provide(webhook())))

  it.live("the default retry: 3 requests (2 more tries, half a second and a second later), then retryable", () =>
    Effect.gen(function*() {
      receiver.status = 503
      const notifier = yield* WebhookNotifier.make({ url: receiver.url, secret }).pipe(Effect.provide(FetchHttpClient.layer))
      const failure = yield* Effect.flip(notifier.notify(Notification.make("conv", 1, 0, [{ kind: "Completed", calls: [] }])[0]!))
      expect(failure).toMatchObject({ status: 503, retryable: true })
      expect(receiver.requests.length).toBe(3)
    }))

  it.live("layerConfig reads the secret with Config.Redacted; a short secret is refused", () =>
    Effect.gen(function*() {
      const provider = ConfigProvider.fromEnvRecord({ HOOK_URL: receiver.url, HOOK_SECRET: Redacted.value(secret) })
      const notifier = yield* Effect.provide(
        Effect.service(Notifier.Notifier),
        WebhookNotifier.layerConfig({ url: Config.String("HOOK_URL"), secret: Config.Redacted("HOOK_SECRET"), retry: fast }).pipe(
          Layer.provide(FetchHttpClient.layer),
          Layer.provide(ConfigProvider.layer(provider))
        )
      )
      yield* notifier.notify(Notification.make("conv", 1, 0, [{ kind: "Completed", calls: [] }])[0]!)
      expect(receiver.accepted.size).toBe(1)
      const short = yield* Effect.exit(WebhookNotifier.make({ url: receiver.url, secret: Redacted.make("short") }).pipe(Effect.provide(FetchHttpClient.layer)))
      expect(short._tag).toBe("Failure")
    }))
})

describe("WebhookNotifier.verify", () => {
  const body = Notification.toJson(Notification.make("conv", 1, 0, [{ kind: "Completed", calls: [] }])[0]!)
  const id = JSON.parse(body).id as string
  const signed = (at: number, text = body, key = secret) => ({
    headers: {
      [WebhookNotifier.headers.id]: id,
      [WebhookNotifier.headers.timestamp]: String(at),
      [WebhookNotifier.headers.signature]: WebhookNotifier.sign(key, at, text)
    },
    body: text
  })
  const refused = (received: WebhookNotifier.Received, now = 1_000) =>
    Effect.map(Effect.flip(WebhookNotifier.verify(secret, received, { now })), (error) => error._tag)

  it.effect("accepts a signed request; refuses a changed body, another secret, no signature, a replay, a swapped id", () =>
    Effect.gen(function*() {
      expect((yield* WebhookNotifier.verify(secret, signed(1_000), { now: 1_000 })).id).toBe(id)
      const changed = signed(1_000)
      expect(yield* refused({ ...changed, body: body.replace("conv", "conw") })).toBe("InvalidSignature")
      expect(yield* refused(signed(1_000, body, Redacted.make("another-secret-of-at-least-32-characters!")))).toBe("InvalidSignature")
      expect(yield* refused({ headers: {}, body })).toBe("InvalidSignature")
      expect(yield* refused(signed(1_000), 1_000 + 5 * 60 * 1000 + 1)).toBe("InvalidSignature")
      expect(yield* refused({ ...signed(1_000), headers: { ...signed(1_000).headers, [WebhookNotifier.headers.id]: "other" } })).toBe("InvalidSignature")
      expect(yield* refused(signed(1_000, "{\"__proto__\":{}}"))).toBe("InvalidSignature")
      expect(yield* refused({ ...signed(1_000), headers: { ...signed(1_000).headers, [WebhookNotifier.headers.timestamp]: "NaN" } })).toBe("InvalidSignature")
    }))

  it("a failing notifier's error names the notification, not the secret", () => {
    const error = new ChatError.NotificationFailed({ id: "n1", detail: "HTTP 500", retryable: true })
    expect(error.message).toBe("Notification 'n1' was not delivered: HTTP 500")
  })
})
