/**
 * Who is told about a conversation's pauses, decisions, expiries, resumes
 * and completions: a webhook (`@chat-ts/inbox`'s `WebhookNotifier`), a
 * queue, a chat message to the approver.
 *
 * A `Notifier` is never called by a shell directly: an `OutboxDispatcher`
 * calls it with the rows a store's outbox holds, so it is only told about
 * states that were saved, at least once, each notification with an `id` to
 * deduplicate on. It fails with `NotificationFailed` (`retryable` when
 * sending again may work); the dispatcher retries and keeps what it could
 * not deliver.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ChatError from "../data/ChatError.js"
import type * as Notification from "./Notification.js"

/**
 * The notifier contract.
 *
 * @category models
 * @since 0.3.0
 */
export interface Service {
  /** Delivers one notification; may be called more than once with the same one (same `id`). */
  readonly notify: (notification: Notification.Notification) => Effect.Effect<void, ChatError.NotificationFailed>
}

/**
 * The notifier in use.
 *
 * @category services
 * @since 0.3.0
 */
export class Notifier extends Context.Service<Notifier, Service>()("@chat-ts/core/Notifier") {}

/**
 * A notifier from a function.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (
  notify: (notification: Notification.Notification) => Effect.Effect<void, ChatError.NotificationFailed>
): Service => ({ notify })

/**
 * A layer providing a notifier made from a function.
 *
 * @category layers
 * @since 0.3.0
 */
export const layer = (
  notify: (notification: Notification.Notification) => Effect.Effect<void, ChatError.NotificationFailed>
): Layer.Layer<Notifier> => Layer.succeed(Notifier, make(notify))
