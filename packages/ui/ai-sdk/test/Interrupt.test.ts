/**
 * A message sent while a response streams (issue 37): `useChat`'s `stop()` aborts the first
 * request's stream, then it posts the new message. The running turn takes it as input: the answer
 * streaming is cut (kept as far as it got), the model answers the message, and the rest of the turn
 * streams to the new request, read here with the AI SDK's own parser and `readUIMessageStream`.
 */
import { UiChat, UiHttp } from "@chat-ts/ai-sdk-ui"
import { Messages } from "@chat-ts/core"
import type { Approver } from "@chat-ts/inbox"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { post, say } from "./support/client.js"
import * as Fixture from "./support/fixture.js"

const slowly = Fixture.slowly

/** Posts `body` and reads its stream until a text delta came, then cancels it (as `stop()` aborts the fetch); returns what was read. */
const postAndStop = (body: unknown) =>
  Effect.gen(function*() {
    const request = new Request("http://127.0.0.1/api/chat", {
      method: "POST",
      headers: { "content-type": "application/json", "x-test-user": "alice" },
      body: JSON.stringify(body)
    })
    const context = yield* Effect.context<UiChat.UiChat | Approver.Approver>()
    const response = HttpServerResponse.toWeb(yield* UiHttp.handle(HttpServerRequest.fromWeb(request)), { context })
    return yield* Effect.promise(async () => {
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = ""
      while (!text.includes(`"type":"text-delta"`)) {
        const { done, value } = await reader.read()
        if (done) break
        text += decoder.decode(value, { stream: true })
      }
      await reader.cancel()
      return text
    }).pipe(Effect.timeout("10 seconds"), Effect.orDie)
  })

const withEndpoint = <A, E>(f: (env: Effect.Success<typeof Fixture.make>) => Effect.Effect<A, E, UiChat.UiChat | Approver.Approver>) =>
  Effect.gen(function*() {
    const env = yield* Fixture.make
    return yield* Effect.provide(f(env), UiChat.layer({ chat: env.chat }).pipe(Layer.provideMerge(env.services)))
  })

describe("a message sent while a response streams", () => {
  it.live("the running turn takes it: the answer is cut and kept, the model answers the message, the rest streams to the new request", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* postAndStop(say("barge-1", slowly, [], "m1"))
        expect(first).toContain(`"type":"text-delta"`)
        const second = yield* post(say("barge-1", "never mind", [], "m2"))
        expect(second.status).toBe(200)
        expect(second.chunks[0]).toEqual({ type: "start", messageMetadata: { conversationId: "barge-1", joined: true } })
        expect(second.chunks.at(-1)).toMatchObject({ type: "finish", messageMetadata: { turn: "complete" } })
        // What useChat builds from the stream: the answer to the message, none of the cut answer.
        const text = second.message!.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")
        expect(text).toBe("you said: never mind")
        // The model was called twice: the cut answer and the answer to the message, with the cut answer before it.
        expect(env.model.requests).toHaveLength(2)
        expect(env.model.requests[1]!.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"])
        const stored = Option.getOrThrow(yield* env.store.load("barge-1")).messages
        expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
        const cut = Messages.textOf(stored[1]!)
        expect(`you said: ${slowly}`.startsWith(cut)).toBe(true)
        expect(cut.length).toBeLessThan(`you said: ${slowly}`.length)
        expect(Messages.textOf(stored[2]!)).toBe("never mind")
        expect(stored[2]!.providerMetadata?.[UiChat.metadataKey]).toEqual({ messageId: "m2" })
        expect(Messages.textOf(stored[3]!)).toBe("you said: never mind")
        // The same message again (a client retrying) is a duplicate: nothing runs.
        const again = yield* post(say("barge-1", "never mind", [], "m2"))
        expect(again.chunks[0]).toMatchObject({ type: "start", messageMetadata: { duplicate: true } })
        expect(env.model.requests).toHaveLength(2)
      })
    ))

  it.live("a message sent twice while the turn runs is handed over once; the second is a duplicate", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        yield* postAndStop(say("barge-2", slowly, [], "m1"))
        const [one, two] = yield* Effect.all([post(say("barge-2", "stop that", [], "m2")), post(say("barge-2", "stop that", [], "m2"))], {
          concurrency: "unbounded"
        })
        const duplicates = [one, two].filter((answer) => answer.chunks[0]?.type === "start" && answer.chunks[0].messageMetadata?.duplicate === true)
        expect(duplicates).toHaveLength(1)
        const stored = Option.getOrThrow(yield* env.store.load("barge-2")).messages
        expect(stored.filter((message) => message.role === "user").map((message) => Messages.textOf(message))).toEqual([slowly, "stop that"])
        expect(env.model.requests).toHaveLength(2)
      })
    ))

  it.live("once the turn is over a new message runs a turn of its own, as before", () =>
    withEndpoint((env) =>
      Effect.gen(function*() {
        const first = yield* post(say("barge-3", "hello", [], "m1"))
        expect(first.chunks.at(-1)).toMatchObject({ type: "finish", messageMetadata: { turn: "complete" } })
        const second = yield* post(say("barge-3", "again", [], "m2"))
        expect(second.chunks[0]).toEqual({ type: "start", messageMetadata: { conversationId: "barge-3" } })
        const stored = Option.getOrThrow(yield* env.store.load("barge-3")).messages
        expect(stored.map((message) => Messages.textOf(message))).toEqual(["hello", "you said: hello", "again", "you said: again"])
      })
    ))
})
