// Human in the loop: notifications after the state is safe (an outbox, a dispatcher, a webhook).
// #region imports
import { OutboxDispatcher } from "@chat-ts/core"
import { WebhookNotifier } from "@chat-ts/inbox"
import { SqlConversationStore } from "@chat-ts/sql"
import { Clock, Config, Effect, Layer } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
// #endregion imports

// #region layers
/** A store whose saves write their notifications in the same transaction (after `migrate`, run once per deploy). */
export const stores = SqlConversationStore.layerWithOutbox()

/** Tells a webhook about each notification; the URL and the secret come from configuration. */
export const webhook = WebhookNotifier.layerConfig({
  url: Config.String("APPROVALS_WEBHOOK_URL"),
  secret: Config.Redacted("APPROVALS_WEBHOOK_SECRET")
}).pipe(Layer.provide(FetchHttpClient.layer))

/** In each worker, beside the turns: delivers the outbox for as long as the program runs. */
export const dispatcher = OutboxDispatcher.run({ pollInterval: "1 second" })
// #endregion layers

// #region receiver
/** On the receiving side: checks signature and timestamp, then handles each notification once. */
export const receive = (seen: Set<string>, received: WebhookNotifier.Received) =>
  Effect.gen(function*() {
    const secret = yield* Config.Redacted("APPROVALS_WEBHOOK_SECRET")
    const notification = yield* WebhookNotifier.verify(secret, received, { now: yield* Clock.currentTimeMillis })
    // Delivered at least once: the same notification may come again.
    if (seen.has(notification.id)) return "duplicate"
    seen.add(notification.id)
    // Here: tell the approvers of notification.conversationId about notification.calls.
    return notification.kind
  })
// #endregion receiver
