/**
 * Tamper-evident storage of paused conversations.
 *
 * A paused turn lives in its messages, so whoever can edit the stored JSON
 * could turn a call "awaiting approval" into "approved". When the JSON leaves
 * your trust boundary (a browser, a queue, a shared store), sign it: `sign`
 * adds an HMAC-SHA-256 of the document made with a server-side secret, and
 * `verify` refuses any document whose signature does not match. It uses the
 * Web Crypto API (Node 20+, browsers, edge runtimes).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as ChatError from "./ChatError.js"
import * as Messages from "./Messages.js"

const encoder = new TextEncoder()

const hmac = (secret: Redacted.Redacted<string>, data: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    const key = await globalThis.crypto.subtle.importKey(
      "raw",
      encoder.encode(Redacted.value(secret)),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"]
    )
    const signature = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, encoder.encode(data)))
    let hex = ""
    for (const byte of signature) hex += byte.toString(16).padStart(2, "0")
    return hex
  })

/** Constant-time comparison of two hex strings. */
const equal = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/** Encodes messages as a signed JSON string: `{ "document": {...}, "signature": "<hex>" }`. */
export const sign = (messages: Messages.Messages, secret: Redacted.Redacted<string>): Effect.Effect<string> =>
  Effect.suspend(() => {
    const document = Messages.toJson(messages)
    return Effect.map(hmac(secret, document), (signature) => `{"document":${document},"signature":"${signature}"}`)
  })

/**
 * Decodes a string written by `sign`, checking its signature first. A missing
 * or wrong signature, or a document that does not decode, is a `StateDecodeError`.
 */
export const verify = (
  json: string,
  secret: Redacted.Redacted<string>
): Effect.Effect<Messages.Messages, ChatError.StateDecodeError> =>
  Effect.gen(function*() {
    const fail = (detail: string) => Effect.fail(new ChatError.StateDecodeError({ detail }))
    const prefix = `{"document":`
    const match = /,"signature":"([0-9a-f]{64})"}$/.exec(json)
    if (!json.startsWith(prefix) || match === null) return yield* fail("not a signed document")
    const document = json.slice(prefix.length, match.index)
    const expected = yield* hmac(secret, document)
    if (!equal(expected, match[1]!)) return yield* fail("the signature does not match: the document was changed or signed with another key")
    return yield* Either.match(Messages.fromJson(document), { onLeft: (e) => Effect.fail(e), onRight: Effect.succeed })
  })
