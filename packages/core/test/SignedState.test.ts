import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Redacted } from "effect"
import { Messages, SignedState } from "../src/index.js"

const secret = Redacted.make("server-side secret")

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
  it.effect("round-trips a paused conversation", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret)
      expect(yield* SignedState.verify(signed, secret)).toEqual(paused)
    }))

  it.effect("refuses a document whose approval status was edited", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret)
      const tampered = signed.replace("\"AwaitingApproval\"", "\"Approved\"")
      expect(tampered).not.toEqual(signed)
      // The tampered document is still well-formed data: only the signature catches it.
      const inner = JSON.parse(tampered).document
      expect(Either.isRight(Messages.decode(inner))).toBe(true)
      const error = yield* Effect.flip(SignedState.verify(tampered, secret))
      expect(error._tag).toBe("StateDecodeError")
      expect(error.message).toContain("signature does not match")
    }))

  it.effect("refuses another key, a missing signature and garbage", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret)
      const other = yield* Effect.flip(SignedState.verify(signed, Redacted.make("another secret")))
      expect(other.message).toContain("signature does not match")
      const unsigned = yield* Effect.flip(SignedState.verify(Messages.toJson(paused), secret))
      expect(unsigned.message).toContain("not a signed document")
      const garbage = yield* Effect.flip(SignedState.verify("{]", secret))
      expect(garbage._tag).toBe("StateDecodeError")
    }))

  it.effect("never puts the secret in the output", () =>
    Effect.gen(function*() {
      const signed = yield* SignedState.sign(paused, secret)
      expect(signed).not.toContain("server-side secret")
    }))
})
