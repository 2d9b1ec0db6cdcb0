/**
 * A new user message for a thread whose run is still streaming (issue 37): AG-UI gives a run no
 * input side (a `RunAgentInput` is a run of its own), so the endpoint does not merge it into the
 * running turn. It is refused as `conversation_busy` (retryable), nothing stored; the running run
 * goes on to its end, and the same message sent again then runs.
 */
import { AgUi } from "@chat-ts/ag-ui"
import { Chat, ConversationStore, LanguageModel, Messages } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import * as Support from "./support.js"

/** The agent, its model's answer to "slow" held until `gate` opens. */
const make = Effect.gen(function*() {
  const runs: Support.Runs = []
  const mock = Support.model()
  const gate = yield* Deferred.make<void>()
  const model = LanguageModel.layer({
    generate: mock.generate,
    stream: (request) => {
      const last = request.messages.at(-1)
      const held = last?.role === "user" && Messages.textOf(last) === "slow"
      return held ? Stream.concat(Stream.take(mock.stream(request), 2), Stream.unwrap(Effect.as(Deferred.await(gate), Stream.drop(mock.stream(request), 2)))) : mock.stream(request)
    }
  })
  const store = yield* ConversationStore.makeMemory
  const chat = yield* Chat.make({ tools: Support.toolkit }).pipe(Effect.provide(Layer.merge(model, Support.handlers(runs))))
  const agent = yield* AgUi.make({ chat }).pipe(
    Effect.provideService(ConversationStore.ConversationStore, store),
    Effect.provideService(Approver.Approver, Support.approver)
  )
  return { agent, store, runs, mock, gate } satisfies Support.Env & { readonly gate: Deferred.Deferred<void> }
})

describe("a run for a thread whose run still streams", () => {
  it.effect("is conversation_busy, nothing stored; the running run ends as it would; sent again, it runs", () =>
    Effect.gen(function*() {
      const env = yield* make
      const first = yield* Effect.forkChild(Support.events(env, Support.say("t1", "slow", "m1")))
      // The first run has begun its answer and is held mid-stream.
      for (let i = 0; i < 10_000 && env.mock.requests.length === 0; i++) yield* Effect.yieldNow
      assert.strictEqual(env.mock.requests.length, 1)
      const during = yield* Effect.flip(Support.events(env, Support.say("t1", "never mind", "m2")))
      assert.strictEqual(during.code, "conversation_busy")
      yield* Deferred.succeed(env.gate, undefined)
      const events = yield* Fiber.join(first)
      assert.strictEqual(events.at(-1)?.type, "RUN_FINISHED")
      const afterFirst = Option.getOrThrow(yield* env.store.load("t1")).messages
      assert.deepStrictEqual(afterFirst.map((message) => Messages.textOf(message)), ["slow", "All done."])
      const again = yield* Support.events(env, Support.say("t1", "never mind", "m2"))
      assert.strictEqual(again.at(-1)?.type, "RUN_FINISHED")
      const stored = Option.getOrThrow(yield* env.store.load("t1")).messages
      assert.deepStrictEqual(stored.map((message) => Messages.textOf(message)), ["slow", "All done.", "never mind", "All done."])
    }))
})
