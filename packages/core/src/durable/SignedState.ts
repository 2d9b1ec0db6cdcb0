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
 * another conversation or an older one. What it is told to expect is checked
 * too, failing closed: an expected version that is not a version (a lookup that
 * missed: `undefined`, `NaN`) is an `InvalidBinding`, never "no minimum". It
 * uses the Web Crypto API (Node 22+, browsers, edge runtimes).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Redacted from "effect/Redacted"
import * as ChatError from "../data/ChatError.js"
import * as Messages from "../turn/Messages.js"

/**
 * The shortest secret accepted, in bytes (as long as the HMAC-SHA-256 output).
 *
 * @category constants
 * @since 0.1.0
 */
export const minimumSecretBytes = 32

const encoder = new TextEncoder()

/**
 * What a signed document is bound to.
 *
 * @category models
 * @since 0.1.0
 */
export interface Binding {
  /** The conversation the document belongs to (a non-empty string). */
  readonly conversationId: string
  /** Its version, a safe non-negative integer: grows with every state the server hands out (for example the store's version). */
  readonly version: number
}

/**
 * What `verify` expects of a signed document.
 *
 * @category models
 * @since 0.1.0
 */
export interface Expected {
  /** The conversation the caller is working on (a non-empty string): a document of another one is refused. */
  readonly conversationId: string
  /** The latest version handed out for it, a safe non-negative integer: an older document (a replay) is refused. */
  readonly atLeastVersion: number
}

/**
 * A verified document: its messages and the version it was signed at.
 *
 * @category models
 * @since 0.1.0
 */
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

const isConversationId = (id: unknown): id is string => typeof id === "string" && id !== ""

/** A value as it is named in an error: `NaN`, `undefined`, `"4"` (a string), never thrown on. */
const shown = (u: unknown): string =>
  typeof u === "string" ? JSON.stringify(u) : typeof u === "bigint" ? `${u}n` : typeof u === "object" && u !== null ? "an object" : String(u)

/**
 * Why `options` (a `Binding` given to `sign` or an `Expected` given to `verify`: named by
 * `what`) cannot be used, or `undefined`: an object with a non-empty string id and a safe
 * non-negative integer at `versionKey`. A JavaScript caller, or a lookup that missed, may pass
 * anything; every field is checked, since `version < NaN` is false and would let a replay through.
 */
const bindingProblem = (options: unknown, versionKey: "version" | "atLeastVersion", what: string): string | undefined => {
  if (typeof options !== "object" || options === null) return `${what} must be an object with conversationId and ${versionKey}, not ${shown(options)}`
  const { conversationId, [versionKey]: version } = options as { readonly [key: string]: unknown }
  if (!isConversationId(conversationId)) return `${what}.conversationId must be a non-empty string, not ${shown(conversationId)}`
  if (!isVersion(version)) return `${what}.${versionKey} must be a safe non-negative integer, not ${shown(version)}`
  return undefined
}

/**
 * Signs messages for one conversation at one version, as a JSON string:
 * `{ "payload": { conversationId, version, document }, "signature": "<hex>" }`.
 * A secret shorter than 32 bytes is an `InvalidSecret`; a `conversationId` that
 * is not a non-empty string or a `version` that is not a safe non-negative
 * integer a `StateEncodeError` (nothing is signed: such a document could never verify).
 *
 * @category utils
 * @since 0.1.0
 */
export const sign = (
  messages: Messages.Messages,
  secret: Redacted.Redacted<string>,
  binding: Binding
): Effect.Effect<string, ChatError.InvalidSecret | ChatError.StateEncodeError> =>
  Effect.gen(function*() {
    const key = yield* checkSecret(secret)
    const problem = bindingProblem(binding, "version", "the binding")
    if (problem !== undefined) return yield* new ChatError.StateEncodeError({ detail: problem })
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
 * secret an `InvalidSecret`. `expected` is checked first: missing, a
 * `conversationId` that is not a non-empty string, or an `atLeastVersion` that is
 * not a safe non-negative integer (`NaN`, `undefined`, `-Infinity`, a string…)
 * is an `InvalidBinding`, and no document is accepted.
 *
 * @category utils
 * @since 0.1.0
 */
export const verify = (
  json: string,
  secret: Redacted.Redacted<string>,
  expected: Expected
): Effect.Effect<Verified, ChatError.StateDecodeError | ChatError.InvalidSecret | ChatError.InvalidBinding> =>
  Effect.gen(function*() {
    const fail = (detail: string) => Effect.fail(new ChatError.StateDecodeError({ detail }))
    const problem = bindingProblem(expected, "atLeastVersion", "expected")
    if (problem !== undefined) return yield* new ChatError.InvalidBinding({ detail: problem })
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
