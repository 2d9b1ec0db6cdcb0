import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted, Result } from "effect"
import { Messages, SignedState } from "../src/index.js"

const secret = Redacted.make("a server-side secret, 32 bytes or more")
const conv = { conversationId: "conv-1", version: 3 }
const expected = { conversationId: "conv-1", atLeastVersion: 3 }

const paused: Messages.Messages = [
  Messages.user("Delete the old logs."),
  {
    role: "assistant",
    parts: [{
      _tag: "ToolCall",
      id: "call_1",
      name: "delete_files",
      arguments: "{\"paths\":[\"a.log\"]}",
      status: { _tag: "AwaitingApproval" }
    }]
  }
]

describe("SignedState", () => {
  it.effect("round-trips a paused conversation with its version", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret, conv)
      expect(yield* SignedState.verify(signed, secret, expected)).toEqual({ messages: paused, version: 3 })
      // A newer version than the latest known one is accepted too (the caller then records it).
      expect((yield* SignedState.verify(signed, secret, { ...expected, atLeastVersion: 1 })).version).toBe(3)
    }))

  it.effect("refuses a document whose approval status was edited", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret, conv)
      const tampered = signed.replace("\"AwaitingApproval\"", "\"Approved\"")
      expect(tampered).not.toEqual(signed)
      // The tampered document is still well-formed data: only the signature catches it.
      const inner = JSON.parse(tampered).payload.document
      expect(Result.isSuccess(Messages.decode(inner))).toBe(true)
      const error = yield* Effect.flip(SignedState.verify(tampered, secret, expected))
      expect(error._tag).toBe("StateDecodeError")
      expect(error.message).toContain("signature does not match")
    }))

  it.effect("refuses a replay: an older signed state of the same conversation", () =>
    Effect.gen(function*() {
      // v3: the payment awaits approval. v4: it was approved and paid. The v3 document is replayed.
      const old = yield* SignedState.sign(paused, secret, conv)
      const error = yield* Effect.flip(SignedState.verify(old, secret, { ...expected, atLeastVersion: 4 }))
      expect(error._tag).toBe("StateDecodeError")
      expect(error.message).toContain("older than 4")
    }))

  it.effect("refuses a document signed for another conversation, and a changed binding", () =>
    Effect.gen(function*() {
      const other = yield* SignedState.sign(paused, secret, { conversationId: "conv-2", version: 9 })
      const error = yield* Effect.flip(SignedState.verify(other, secret, expected))
      expect(error.message).toContain("another conversation")
      // Rewriting the id or the version in the document breaks the signature.
      const moved = other.replace("\"conv-2\"", "\"conv-1\"")
      expect((yield* Effect.flip(SignedState.verify(moved, secret, expected))).message).toContain("signature does not match")
      const bumped = (yield* SignedState.sign(paused, secret, conv)).replace("\"version\":3", "\"version\":30")
      expect((yield* Effect.flip(SignedState.verify(bumped, secret, expected))).message).toContain("signature does not match")
    }))

  it.effect("refuses another key, a missing signature and garbage", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret, conv)
      const other = yield* Effect.flip(SignedState.verify(signed, Redacted.make("another secret that is long enough!!"), expected))
      expect(other.message).toContain("signature does not match")
      const unsigned = yield* Effect.flip(SignedState.verify(Result.getOrThrow(Messages.toJson(paused)), secret, expected))
      expect(unsigned.message).toContain("not a signed document")
      const garbage = yield* Effect.flip(SignedState.verify("{]", secret, expected))
      expect(garbage._tag).toBe("StateDecodeError")
    }))

  it.effect("an empty or short secret is a typed InvalidSecret, for signing and verifying", () =>
    Effect.gen(function*() {
      for (const weak of ["", "short", "x".repeat(SignedState.minimumSecretBytes - 1)]) {
        const signing = yield* Effect.flip(SignedState.sign(paused, Redacted.make(weak), conv))
        expect(signing._tag).toBe("InvalidSecret")
        const verifying = yield* Effect.flip(SignedState.verify("{}", Redacted.make(weak), expected))
        expect(verifying._tag).toBe("InvalidSecret")
        expect(verifying.message).not.toContain(weak === "" ? "\u0000" : weak)
      }
      expect(yield* Effect.result(SignedState.sign(paused, Redacted.make("x".repeat(SignedState.minimumSecretBytes)), conv)))
        .toMatchObject({ _tag: "Success" })
    }))

  it.effect("never puts the secret in the output", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret, conv)
      expect(signed).not.toContain("server-side secret")
    }))
})

describe("SignedState: the binding's options are validated, failing closed", () => {
  // What a server's "latest version" lookup gives when it misses, or when a JavaScript caller passes anything.
  const badVersions: ReadonlyArray<unknown> = [
    Number.NaN,
    undefined,
    null,
    Number.NEGATIVE_INFINITY,
    Number.POSITIVE_INFINITY,
    -1,
    1.5,
    2 ** 53,
    "4",
    "",
    {},
    [4],
    4n
  ]
  const badIds: ReadonlyArray<unknown> = [undefined, null, "", 42, {}, ["conv-1"]]

  it.effect("verify: an atLeastVersion that is not a safe non-negative integer is an InvalidBinding; an older document is never accepted", () =>
    Effect.gen(function*() {
      // v3 awaits approval; the server is at v4 (the call ran) but its lookup of the latest version missed.
      const old = yield* SignedState.sign(paused, secret, conv)
      for (const atLeastVersion of badVersions) {
        const error = yield* Effect.flip(
          SignedState.verify(old, secret, { conversationId: "conv-1", atLeastVersion } as unknown as SignedState.Expected)
        )
        expect(error._tag).toBe("InvalidBinding")
        expect(error.message).toContain("atLeastVersion")
      }
    }))

  it.effect("verify: missing options, or a conversation id that is not a non-empty string, is an InvalidBinding", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret, conv)
      for (const expected of [undefined, null, {}, { atLeastVersion: 3 }, "conv-1"]) {
        const error = yield* Effect.flip(SignedState.verify(signed, secret, expected as unknown as SignedState.Expected))
        expect(error._tag).toBe("InvalidBinding")
      }
      for (const conversationId of badIds) {
        const error = yield* Effect.flip(
          SignedState.verify(signed, secret, { conversationId, atLeastVersion: 3 } as unknown as SignedState.Expected)
        )
        expect(error._tag).toBe("InvalidBinding")
        expect(error.message).toContain("conversationId")
      }
      // Valid options still verify.
      expect((yield* SignedState.verify(signed, secret, expected)).version).toBe(3)
    }))

  it.effect("sign: a conversation id that is not a non-empty string, or a bad version, is a StateEncodeError; nothing is signed", () =>
    Effect.gen(function*() {
      for (const conversationId of badIds) {
        const error = yield* Effect.flip(
          SignedState.sign(paused, secret, { conversationId, version: 3 } as unknown as SignedState.Binding)
        )
        expect(error._tag).toBe("StateEncodeError")
        expect(error.message).toContain("conversationId")
      }
      for (const version of badVersions) {
        const error = yield* Effect.flip(
          SignedState.sign(paused, secret, { conversationId: "conv-1", version } as unknown as SignedState.Binding)
        )
        expect(error._tag).toBe("StateEncodeError")
      }
      for (const binding of [undefined, null]) {
        const error = yield* Effect.flip(SignedState.sign(paused, secret, binding as unknown as SignedState.Binding))
        expect(error._tag).toBe("StateEncodeError")
      }
    }))
})
