/**
 * The barge-in snippet of docs/streaming.md runs: the model streams its answer slowly (one part a
 * second on the TestClock), the snippet types as the text starts, the answer is cut and the model
 * answers the new message.
 */
import { Chat, LanguageModel, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { interruptWith } from "../src/snippets/barge-in.js"

describe("snippet: input while the model answers", () => {
  it.effect("cuts the streaming answer and answers the message typed during it", () =>
    Effect.gen(function*() {
      const scripted = MockLanguageModel.make([MockLanguageModel.text("Once upon a time, in a far land"), MockLanguageModel.text("Il était une fois")])
      const slow: LanguageModel.Service = {
        generate: scripted.generate,
        stream: (request) => Stream.tap(scripted.stream(request), () => Effect.sleep("1 second"))
      }
      const chat = yield* Chat.make({ tools: [] }).pipe(Effect.provide(LanguageModel.layer(slow)))
      const fiber = yield* Effect.forkChild(interruptWith(chat, Messages.fromUser("A story?"), Messages.user("In French.")))
      // A second at a time: the snippet's own fiber types between two parts of the answer.
      for (let i = 0; i < 30; i++) yield* TestClock.adjust("1 second")
      const { interrupted, last } = yield* Fiber.join(fiber)
      expect(interrupted).toHaveLength(1)
      expect(scripted.requests).toHaveLength(2)
      expect(last?._tag).toBe("Completed")
      if (last?._tag === "Completed") {
        expect(Messages.textOf(last.response)).toBe("Il était une fois")
        expect(last.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
      }
    }))
})
