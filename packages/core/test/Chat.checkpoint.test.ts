import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Chat, ChatError, Messages } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { fileHandlers, files, ran, recorder } from "./support/Chat.helpers.js"

describe("Chat: a checkpoint that fails", () => {
  it.effect("stops the turn with its typed error before anything runs", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "c1", name: "list_files", arguments: { folder: "logs" } }])
      ])
      const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))
      const error = yield* Effect.flip(chat.complete(Messages.fromUser("What is there?"), {
        checkpoint: () => new ChatError.ConcurrentModification({ id: "conv", expectedVersion: 1, actualVersion: 2 })
      }))
      expect(error._tag).toBe("ConcurrentModification")
      expect(ran(rec)).toEqual([])
    }))

  it.effect("while tools run: every call of the response finishes, then the turn stops with the error", () =>
    Effect.gen(function*() {
      const rec = recorder()
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "c1", name: "list_files", arguments: { folder: "a" } },
          { id: "c2", name: "list_files", arguments: { folder: "b" } }
        ])
      ])
      const chat = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))
      const saved: Array<Messages.Messages> = []
      const error = yield* Effect.flip(chat.complete(Messages.fromUser("List both."), {
        // The store accepts the states up to the calls starting, then refuses every later save.
        checkpoint: (messages) =>
          Messages.toolCalls(messages).some((call) => call.status._tag === "Completed")
            ? new ChatError.StoreError({ detail: "disk full" })
            : Effect.sync(() => void saved.push(messages))
      }))
      expect(error).toMatchObject({ _tag: "StoreError", detail: "disk full" })
      // The sibling call was not interrupted by the first failed save.
      expect(ran(rec)).toEqual(["list_files", "list_files"])
      expect(Messages.toolCalls(saved[saved.length - 1]!).map((call) => call.status._tag)).toEqual(["Running", "Running"])
    }))
})
