/**
 * Input while the model answers (issue 37) with the real `openai` SDK against the loopback replay
 * server: the first answer's HTTP stream hangs after a few deltas; input sent then closes that
 * stream (the server sees the client close it), the answer so far is kept, and the model is asked
 * again with it and the input.
 */
import { Chat, ChatInput, Messages, Turn } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import { clientLayer } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

describe("chat.stream with input on OpenAiChatCompletions (the real SDK over HTTP)", () => {
  it.effect("input mid-answer closes the HTTP stream and asks again with the answer so far and the input", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const text = ReplayServer.fixture("chat-completions/stream-text.sse")
      server.enqueue(ReplayServer.hang({ sse: true, body: ReplayServer.firstEvents(text, 4) }), ReplayServer.sse(text))
      const chat = yield* Chat.make({ tools: [] }).pipe(
        Effect.provide(OpenAiChatCompletions.layer({ model: "gpt-4o-2024-08-06", retry: false }).pipe(Layer.provide(clientLayer(server))))
      )
      const input = yield* Queue.unbounded<ChatInput.ChatInput>()
      let typed = false
      const events = yield* chat.stream(Messages.fromUser("Hi."), { input }).pipe(
        // The user types as soon as the answer starts.
        Stream.tap((event) =>
          event._tag === "TextDelta" && !typed ? Effect.andThen(Effect.sync(() => (typed = true)), Queue.offer(input, Messages.user("Shorter."))) : Effect.void
        ),
        Stream.runCollect
      )
      yield* server.waitForClientCloses(1, 5_000)
      expect(server.clientCloses()).toBe(1)
      expect(server.requests).toHaveLength(2)
      expect(events.filter((event) => event._tag === "AnswerInterrupted")).toHaveLength(1)
      const last = events.at(-1)!
      expect(last._tag).toBe("Completed")
      if (last._tag !== "Completed") return
      expect(last.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
      expect(Turn.inputRestarts(last.messages)).toBe(1)
      // The second request carries the answer so far and the input, in order; no mark reaches the wire.
      const sent = (server.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> }).messages
      expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "user"])
      expect(JSON.stringify(sent[2])).toContain("Shorter.")
      expect(JSON.stringify(server.requests[1]!.body)).not.toContain(Turn.inputMarkKey)
    }))
})
