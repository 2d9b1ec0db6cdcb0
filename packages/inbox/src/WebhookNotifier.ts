/**
 * A `Notifier` that POSTs each notification as JSON to a URL, signed, so the
 * receiver knows it came from you and was not changed or replayed.
 *
 * Each request carries three headers:
 *
 * - `chat-ts-notification-id`: the notification's id, the same on every delivery of it (deduplicate on it);
 * - `chat-ts-timestamp`: when this request was signed (epoch milliseconds);
 * - `chat-ts-signature`: `v1=` and the lowercase hex HMAC-SHA-256, keyed with the shared secret, of
 *   the timestamp, a `.`, and the body exactly as sent.
 *
 * `verify` checks them on the receiving side (in constant time, refusing
 * timestamps outside a tolerance). A 2xx answer is delivered; a 408, a 429, a
 * 5xx, a timeout or a network error is tried again on `retry` (a `Schedule`,
 * bounded), and then reported `retryable` to the dispatcher, which may try
 * again on its own schedule; any other answer is not retryable. The secret is
 * a `Redacted` (from `Config.Redacted`) and never appears in an error or a log.
 *
 * @since 0.3.0
 */
import * as ChatError from "@chat-ts/core/ChatError"
import * as Notification from "@chat-ts/core/Notification"
import * as Notifier from "@chat-ts/core/Notifier"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { createHmac, timingSafeEqual } from "node:crypto"
import * as InboxError from "./InboxError.js"

/** The names of the headers a webhook request carries. */
export const headers = {
  id: "chat-ts-notification-id",
  timestamp: "chat-ts-timestamp",
  signature: "chat-ts-signature"
} as const

/** Settings of the webhook notifier. */
export interface Options {
  /** Where to POST. */
  readonly url: string | URL
  /** The shared secret (from `Config.Redacted`); at least 32 characters. */
  readonly secret: Redacted.Redacted<string>
  /** When to try a failed request again (default `defaultRetry`: 2 more tries, 0.5 s and 1 s later). */
  readonly retry?: Schedule.Schedule<unknown, ChatError.NotificationFailed>
  /** How long one request may take (default 10 seconds). */
  readonly timeout?: Duration.Input
}

/** The default retry: 2 more tries after the first, waiting 0.5 s and 1 s. */
export const defaultRetry: Schedule.Schedule<unknown, ChatError.NotificationFailed> = Schedule.exponential("500 millis").pipe(
  Schedule.upTo({ times: 2 })
)

/** The shortest secret accepted. */
export const minimumSecretLength = 32

/** The signature header's value for a body signed at `timestamp`. */
export const sign = (secret: Redacted.Redacted<string>, timestamp: number, body: string): string =>
  `v1=${createHmac("sha256", Redacted.value(secret)).update(`${timestamp}.${body}`).digest("hex")}`

const retryableStatus = (status: number) => status === 408 || status === 429 || status >= 500

/** Makes the notifier on the `HttpClient` in context; a secret shorter than `minimumSecretLength` is a defect. */
export const make = (options: Options): Effect.Effect<Notifier.Service, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    if (Redacted.value(options.secret).length < minimumSecretLength) {
      return yield* Effect.die(new Error(`a webhook secret has at least ${minimumSecretLength} characters`))
    }
    const client = yield* HttpClient.HttpClient
    const timeout = options.timeout ?? Duration.seconds(10)
    const post = (notification: Notification.Notification) =>
      Effect.gen(function*() {
        const body = Notification.toJson(notification)
        const timestamp = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const failed = (detail: string, retryable: boolean, status?: number) =>
          new ChatError.NotificationFailed({ id: notification.id, detail, retryable, ...(status === undefined ? {} : { status }) })
        const request = HttpClientRequest.post(options.url).pipe(
          HttpClientRequest.setHeaders({
            [headers.id]: notification.id,
            [headers.timestamp]: String(timestamp),
            [headers.signature]: sign(options.secret, timestamp, body)
          }),
          HttpClientRequest.bodyText(body, "application/json")
        )
        const response = yield* client.execute(request).pipe(
          Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(failed("the receiver did not answer in time", true)) }),
          Effect.mapError((error) => error instanceof ChatError.NotificationFailed ? error : failed(`the receiver could not be reached (${error.reason._tag})`, true))
        )
        if (response.status >= 200 && response.status < 300) return
        return yield* failed(`the receiver answered HTTP ${response.status}`, retryableStatus(response.status), response.status)
      }).pipe(Effect.scoped)
    return Notifier.make((notification) =>
      post(notification).pipe(Effect.retry({ schedule: options.retry ?? defaultRetry, while: (error) => error.retryable }))
    )
  })

/** A layer providing the webhook notifier (needs an `HttpClient`, e.g. `FetchHttpClient.layer`). */
export const layer = (options: Options): Layer.Layer<Notifier.Notifier, never, HttpClient.HttpClient> =>
  Layer.effect(Notifier.Notifier, make(options))

/** A layer reading the URL and the secret from configuration (the secret with `Config.Redacted`). */
export const layerConfig = (
  options: { readonly url: Config.Config<string>; readonly secret: Config.Config<Redacted.Redacted<string>> } & Omit<Options, "url" | "secret">
): Layer.Layer<Notifier.Notifier, Config.ConfigError, HttpClient.HttpClient> =>
  Layer.effect(
    Notifier.Notifier,
    Effect.flatMap(Effect.all({ url: options.url, secret: options.secret }), (read) => make({ ...options, ...read }))
  )

/** What a receiver got: the headers of the request (any case) and its body as text. */
export interface Received {
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: string
}

/**
 * Checks a webhook request on the receiving side: its signature (with the shared secret, in constant time),
 * its timestamp (within `toleranceMillis` of `now`, default 5 minutes: an old request replayed is refused),
 * the id header against the body's; gives the notification. Anything else is an `InvalidSignature`.
 */
export const verify = (
  secret: Redacted.Redacted<string>,
  received: Received,
  options: { readonly now: number; readonly toleranceMillis?: number }
): Effect.Effect<Notification.Notification, InboxError.InvalidSignature> =>
  Effect.gen(function*() {
    const refuse = (message: string) => new InboxError.InvalidSignature({ message })
    const header = (name: string) => {
      const entry = Object.entries(received.headers).find(([key]) => key.toLowerCase() === name)?.[1]
      return typeof entry === "string" ? entry : undefined
    }
    const timestamp = header(headers.timestamp)
    const signature = header(headers.signature)
    if (timestamp === undefined || signature === undefined || !/^\d{1,16}$/.test(timestamp)) {
      return yield* refuse("the request is not signed")
    }
    const expected = Buffer.from(sign(secret, Number(timestamp), received.body))
    const given = Buffer.from(signature)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      return yield* refuse("the signature does not match the body")
    }
    if (Math.abs(options.now - Number(timestamp)) > (options.toleranceMillis ?? 5 * 60 * 1000)) {
      return yield* refuse("the request was signed too long ago (or in the future)")
    }
    const notification = yield* Effect.mapError(Notification.fromJson(received.body), () => refuse("the body is not a notification"))
    if (header(headers.id) !== notification.id) return yield* refuse("the id header is not the notification's")
    return notification
  })
