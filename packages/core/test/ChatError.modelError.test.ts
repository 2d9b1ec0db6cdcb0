/**
 * `ChatError.ModelError` as a Schema: the union of the model error classes, the one a shell
 * records a model call's failure with. Every member goes through JSON and back as its own class.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as ChatError from "../src/data/ChatError.js"
import * as Messages from "../src/turn/Messages.js"

const messages = Messages.fromUser("hi")

/** One of each model error, every optional field set: a record keyed by tag, so a new member must be listed. */
const every: { readonly [Tag in ChatError.ModelError["_tag"]]: Extract<ChatError.ModelError, { readonly _tag: Tag }> } = {
  RateLimited: new ChatError.RateLimited({ message: "slow down", retryAfterMillis: 1500, code: "rate_limit", messages }),
  ServerError: new ChatError.ServerError({ message: "oops", status: 503, messages }),
  NetworkError: new ChatError.NetworkError({ message: "reset", messages }),
  AuthenticationError: new ChatError.AuthenticationError({ message: "who?", status: 401, messages }),
  InvalidRequest: new ChatError.InvalidRequest({ message: "bad", status: 400, code: "c", param: "p", messages }),
  ContextLengthExceeded: new ChatError.ContextLengthExceeded({ message: "too long", messages }),
  MalformedResponse: new ChatError.MalformedResponse({ message: "garbled", messages })
}

// Checked by the compiler (`tsc -b`): the Schema's type is the `ModelError` type, both ways.
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false
const sameType: Same<typeof ChatError.ModelError.Type, ChatError.ModelError> = true
void sameType

const toJson = Schema.encodeSync(Schema.fromJsonString(ChatError.ModelError))
const fromJson = Schema.decodeUnknownSync(Schema.fromJsonString(ChatError.ModelError))

describe("ChatError.ModelError (Schema)", () => {
  it.each(Object.values(every))("decodes $_tag through JSON as its own class, every field kept", (error) => {
    const decoded = fromJson(toJson(error))
    expect(decoded).toBeInstanceOf(error.constructor)
    expect(decoded._tag).toBe(error._tag)
    expect({ ...decoded }).toStrictEqual({ ...error })
    expect(decoded.message).toBe(error.message)
    expect(Schema.is(ChatError.ModelError)(error)).toBe(true)
  })

  it("takes only the model errors", () => {
    const is = Schema.is(ChatError.ModelError)
    expect(is(new ChatError.StepLimitReached({ maxSteps: 1, messages }))).toBe(false)
    expect(is(new ChatError.PendingToolCalls({ ids: ["a"] }))).toBe(false)
    expect(() => fromJson(JSON.stringify({ _tag: "StoreError", detail: "x" }))).toThrow()
  })
})
