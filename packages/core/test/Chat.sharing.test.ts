/**
 * The shell lets the reducer write its own fresh arrays in place between model
 * calls (`Stepping.stepAt` with an unshared position): nothing it handed out, to
 * the model or to the caller, may ever change afterwards.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Chat, LanguageModel, Messages } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { fileHandlers, files, recorder } from "./support/Chat.helpers.js"

describe("Chat: arrays handed out never change", () => {
  it.effect("every request keeps the messages it was sent with, and the result keeps its own", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "c1", name: "list_files", arguments: { folder: "/a" } }]),
        MockLanguageModel.toolCalls([
          { id: "c2", name: "list_files", arguments: { folder: "/b" } },
          { id: "c3", name: "read_file", arguments: { path: "x" } }
        ]),
        MockLanguageModel.toolCalls([{ id: "c4", name: "list_files", arguments: { folder: "/c" } }]),
        MockLanguageModel.text("Done.")
      ])
      const inner = yield* Effect.provide(LanguageModel.LanguageModel, model.layer)
      // The messages of each request as they were when the model received it.
      const sent: Array<string> = []
      const watching = LanguageModel.make({
        generate: (request) => Effect.suspend(() => {
          sent.push(JSON.stringify(request.messages))
          return inner.generate(request)
        })
      })
      const chat = yield* Chat.make({ tools: files }).pipe(
        Effect.provide(Layer.merge(LanguageModel.layer(watching), fileHandlers(recorder())))
      )
      const input = Messages.fromUser("Look.")
      const first = yield* chat.complete(input)
      expect(model.requests.map((request) => request.messages.length)).toEqual([1, 2, 3, 4])
      // What each request held when sent: every earlier call answered.
      for (const request of model.requests) {
        expect(Messages.pendingTools(request.messages)).toEqual([])
      }
      const result = JSON.stringify(first.messages)
      // Another turn from the result (a follow-up question) must leave both untouched.
      const model2 = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "c5", name: "list_files", arguments: { folder: "/d" } }]),
        MockLanguageModel.text("Again.")
      ])
      const chat2 = yield* Chat.make({ tools: files }).pipe(Effect.provide(Layer.merge(model2.layer, fileHandlers(recorder()))))
      const again = yield* chat2.complete([...first.messages, Messages.user("Again.")])
      expect(again.messages.length).toBe(first.messages.length + 3)
      expect(JSON.stringify(first.messages)).toBe(result)
      expect(model.requests.map((request) => JSON.stringify(request.messages))).toEqual(sent)
      expect(input).toEqual(Messages.fromUser("Look."))
    }))
})
