/**
 * Tamper-evident storage of paused conversations.
 *
 * A paused turn lives in its messages, so whoever can edit the stored JSON
 * could turn a call "awaiting approval" into "approved". When the JSON leaves
 * your trust boundary (a browser, a queue, a shared store), sign it: `sign`
 * adds an HMAC-SHA-256 made with a server-side secret, and `verify` refuses
 * any document whose signature does not match.
 *
 * A signature alone cannot stop a replay: an older signed document of the same
 * conversation (where a call that has since run still awaits approval) is
 * still validly signed. So every signed document is bound to its conversation
 * id and to a version; `verify` checks both against what the server expects
 * (the id, and the latest version it handed out), and refuses a document of
 * another conversation or an older one. It uses the Web Crypto API (Node 22+,
 * browsers, edge runtimes).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Redacted from "effect/Redacted"
import * as ChatError from "./ChatError.js"
import * as Messages from "./Messages.js"

/** The shortest secret accepted, in bytes (as long as the HMAC-SHA-256 output). */
export const minimumSecretBytes = 32

const encoder = new TextEncoder()

/** What a signed document is bound to. */
export interface Binding {
  /** The conversation the document belongs to. */
  readonly conversationId: string
  /** Its version: grows with every state the server hands out (for example the store's version). */
  readonly version: number
}

/** What `verify` expects of a signed document. */
export interface Expected {
  /** The conversation the caller is working on: a document of another one is refused. */
  readonly conversationId: string
  /** The latest version handed out for it: an older document (a replay) is refused. */
  readonly atLeastVersion: number
}

/** A verified document: its messages and the version it was signed at. */
export interface Verified {
  readonly messages: Messages.Messages
  readonly version: number
}

const checkSecret = (secret: Redacted.Redacted<string>): Effect.Effect<Uint8Array<ArrayBuffer>, ChatError.InvalidSecret> => {
  const value = Redacted.value(secret)
  const bytes = typeof value === "string" ? encoder.encode(value) : new Uint8Array()
  return bytes.length >= minimumSecretBytes
    ? Effect.succeed(bytes)
    : Effect.fail(
      new ChatError.InvalidSecret({
        detail: `the signing secret has ${bytes.length} bytes; use at least ${minimumSecretBytes} random bytes`
      })
    )
}

const hmac = (key: Uint8Array<ArrayBuffer>, data: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    const imported = await globalThis.crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    const signature = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", imported, encoder.encode(data)))
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

const documentKey = `,"document":`

const isVersion = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0

/**
 * Signs messages for one conversation at one version, as a JSON string:
 * `{ "payload": { conversationId, version, document }, "signature": "<hex>" }`.
 * A secret shorter than 32 bytes is an `InvalidSecret`.
 */
export const sign = (
  messages: Messages.Messages,
  secret: Redacted.Redacted<string>,
  binding: Binding
): Effect.Effect<string, ChatError.InvalidSecret | ChatError.StateEncodeError> =>
  Effect.gen(function*() {
    const key = yield* checkSecret(secret)
    if (!isVersion(binding.version)) {
      return yield* new ChatError.StateEncodeError({ detail: `the version ${binding.version} is not a non-negative integer` })
    }
    const document = yield* Effect.fromResult(Messages.toJson(messages))
    const payload = `{"conversationId":${JSON.stringify(binding.conversationId)},"version":${binding.version},"document":${document}}`
    const signature = yield* hmac(key, payload)
    return `{"payload":${payload},"signature":"${signature}"}`
  })

/**
 * Decodes a string written by `sign`, checking its signature first, then that
 * it belongs to `expected.conversationId` at `expected.atLeastVersion` or later.
 * A missing or wrong signature, another conversation, an older version (a
 * replay) or a document that does not decode is a `StateDecodeError`; a weak
 * secret an `InvalidSecret`.
 */
export const verify = (
  json: string,
  secret: Redacted.Redacted<string>,
  expected: Expected
): Effect.Effect<Verified, ChatError.StateDecodeError | ChatError.InvalidSecret> =>
  Effect.gen(function*() {
    const fail = (detail: string) => Effect.fail(new ChatError.StateDecodeError({ detail }))
    const key = yield* checkSecret(secret)
    const prefix = `{"payload":`
    const match = /,"signature":"([0-9a-f]{64})"}$/.exec(json)
    if (!json.startsWith(prefix) || match === null) return yield* fail("not a signed document")
    const payload = json.slice(prefix.length, match.index)
    if (!equal(yield* hmac(key, payload), match[1]!)) {
      return yield* fail("the signature does not match: the document was changed or signed with another key")
    }
    // Signed by us, so well-formed; checked all the same. The binding is read apart from the document,
    // which `fromJson` reads as it was written (so that signing what `verify` returns gives the same bytes).
    // A `,"document":` inside the conversation id would be escaped (`,\"document\":`): the first one is the key.
    const at = payload.indexOf(documentKey)
    const parsed = at === -1
      ? undefined
      : Result.getOrUndefined(Result.try(() => JSON.parse(`${payload.slice(0, at)}}`) as { [key: string]: unknown }))
    if (typeof parsed !== "object" || parsed === null || !isVersion(parsed.version)) return yield* fail("not a signed document")
    if (parsed.conversationId !== expected.conversationId) {
      return yield* fail(`the document belongs to another conversation, not '${expected.conversationId}'`)
    }
    if (parsed.version < expected.atLeastVersion) {
      return yield* fail(
        `the document is at version ${parsed.version}, older than ${expected.atLeastVersion}: an earlier state cannot be replayed`
      )
    }
    const messages = yield* Effect.fromResult(Messages.fromJson(payload.slice(at + documentKey.length, -1)))
    return { messages, version: parsed.version }
  })
